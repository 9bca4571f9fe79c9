// Reductions and the softmax family (tinygrad's mixin/reduce.py and mixin/op.py).
#include <atomic>

#include "api/internal.h"
#include "core/graph.h"
#include "maroon/tensor.h"
#include "maroon/primitives.h"

namespace maroon {

namespace api {

int64_t resolve_dim(const char* op, int64_t dim, int64_t ndim, bool extra) {
  int64_t total = ndim + (extra ? 1 : 0);
  int64_t hi = std::max<int64_t>(1, total);
  if (dim < -hi || dim > hi - 1)
    throw IndexError(std::string("[") + op + "] dim " + std::to_string(dim) + " is out of range [" +
                     std::to_string(-hi) + ", " + std::to_string(hi - 1) + "]");
  if (total == 0) return 0;  // a 0-d tensor: -1 and 0 both name its one (virtual) axis
  return dim < 0 ? dim + total : dim;
}

std::vector<int64_t> resolve_axes(const char* op, const Axis& axis, int64_t ndim) {
  std::vector<int64_t> out;
  out.reserve(axis.all ? static_cast<size_t>(ndim) : axis.axes.size());
  if (axis.all) {
    for (int64_t i = 0; i < ndim; ++i) out.push_back(i);
    return out;
  }
  for (int64_t a : axis.axes) out.push_back(resolve_dim(op, a, ndim));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace api

namespace {

std::atomic<uint64_t> g_reduce_direct{0};

// x.reduce(op, axes).reshape(s) as two nodes made directly: the same REDUCE and RESHAPE nodes
// prim::reduce and prim::reshape make (axes resolved, sorted and distinct; s the shape without
// them, so never the REDUCE's own), without a Tensor (a registered TensorState) for the
// intermediate or reshape's checks of a shape known to fit. Every sum, max and mean that drops
// its axes builds these two (a Python small op's `.sum()`).
Tensor reduce_and_drop(const Tensor& x, ReduceOp op, std::vector<int64_t> axes, Shape s) {
  Shape kept = x.shape();
  for (int64_t ax : axes) kept[ax] = 1;
  Arg arg;
  arg.reduce_op = op;
  arg.ints = std::move(axes);
  const DType d = x.dtype();
  NodePtr r = make_node(Op::REDUCE, d, std::move(kept), {x.node()}, std::move(arg));
  Arg shape_arg;
  shape_arg.ints = s;
  g_reduce_direct.fetch_add(1, std::memory_order_relaxed);
  return Tensor(make_node(Op::RESHAPE, d, std::move(s), {std::move(r)}, std::move(shape_arg)));
}

// tinygral's _reduce: REDUCE over the axes, then drop them unless keepdim. A 0-d tensor
// reduces over nothing and comes back unchanged.
Tensor reduce_op(const Tensor& x, ReduceOp op, const Axis& axis, bool keepdim, const char* name) {
  std::vector<int64_t> axes = api::resolve_axes(name, axis, x.ndim());
  if (x.ndim() == 0 || axes.empty()) return x;
  if (keepdim) return x.reduce(op, axes);
  Shape s;
  s.reserve(x.shape().size() - axes.size());  // axes are distinct and in range: one block
  for (int64_t i = 0; i < x.ndim(); ++i)
    if (!std::binary_search(axes.begin(), axes.end(), i)) s.push_back(x.shape()[i]);
  return reduce_and_drop(x, op, std::move(axes), std::move(s));
}

// How many elements each output of a reduction over `axis` combines.
int64_t reduced_count(const Tensor& x, const Axis& axis, const char* name) {
  std::vector<int64_t> axes = api::resolve_axes(name, axis, x.ndim());
  if (x.ndim() == 0) return 1;  // its one (virtual) axis has one element
  int64_t n = 1;
  for (int64_t a : axes) n *= x.shape()[a];
  return n;
}

bool is_half(DType d) { return d == DType::Float16 || d == DType::BFloat16; }

}  // namespace

namespace api {
uint64_t reduce_direct_graphs() { return g_reduce_direct.load(std::memory_order_relaxed); }
}  // namespace api

Tensor Tensor::sum(Axis axis, bool keepdim, std::optional<DType> dtype) const {
  Tensor acc = cast(dtype ? *dtype : sum_acc_dtype(this->dtype()));
  Tensor r = reduce_op(acc, ReduceOp::ADD, axis, keepdim, "sum");
  return !dtype && is_half(this->dtype()) ? r.cast(this->dtype()) : r;
}

Tensor Tensor::prod(Axis axis, bool keepdim, std::optional<DType> dtype) const {
  return reduce_op(cast(dtype ? *dtype : this->dtype()), ReduceOp::MUL, axis, keepdim, "prod");
}

Tensor Tensor::max(Axis axis, bool keepdim) const {
  return reduce_op(*this, ReduceOp::MAX, axis, keepdim, "max");
}

namespace {
// -x for floats, ~x for integers: flips the order so that max finds the minimum.
Tensor inverse(const Tensor& x) { return x.is_floating_point() ? x.neg() : x.bitwise_not(); }
}  // namespace

Tensor Tensor::min(Axis axis, bool keepdim) const {
  return inverse(inverse(*this).max(axis, keepdim));
}

Tensor Tensor::mean(Axis axis, bool keepdim) const {
  DType out = is_float(dtype()) ? dtype() : DType::Float32;
  Tensor num = cast(sum_acc_dtype(dtype())).sum(axis, keepdim);
  return num.div(reduced_count(*this, axis, "mean")).cast(out);
}

Tensor Tensor::var(Axis axis, bool keepdim, double correction) const {
  DType out = is_float(dtype()) ? dtype() : DType::Float32;
  Tensor squares = sub(mean(axis, true)).square();
  int64_t n = reduced_count(*this, axis, "var");
  Tensor num = squares.cast(sum_acc_dtype(dtype())).sum(axis, keepdim);
  double den = std::max(static_cast<double>(n) - correction, 0.0);
  // An integral divisor is a weak int in tinygrad; a fractional one a weak float.
  if (den == static_cast<double>(static_cast<int64_t>(den)))
    return num.div(static_cast<int64_t>(den)).cast(out);
  return num.div(den).cast(out);
}

Tensor Tensor::std(Axis axis, bool keepdim, double correction) const {
  return var(axis, keepdim, correction).sqrt();
}

Tensor Tensor::any(Axis axis, bool keepdim) const { return cast(DType::Bool).max(axis, keepdim); }
Tensor Tensor::all(Axis axis, bool keepdim) const { return cast(DType::Bool).prod(axis, keepdim); }

Tensor Tensor::argmax(std::optional<int64_t> axis, bool keepdim) const {
  if (!axis) return flatten().argmax(0, false);
  int64_t ax = api::resolve_dim("argmax", *axis, ndim());
  if (ndim() == 0) return Tensor::zeros({}, DType::Int32);  // the only element is the first maximum
  int64_t n = shape()[ax];
  // The first maximum: N - max(mask * [N, N-1, ..., 1]).
  Tensor m = eq(max(ax, true));
  Shape rs{n};
  for (int64_t i = ax + 1; i < ndim(); ++i) rs.push_back(1);
  Tensor idx = prim::mul(m, Tensor::arange(n, 0, -1).reshape(rs));
  return prim::add(n, idx.max(ax, keepdim).neg()).cast(DType::Int32);
}

Tensor Tensor::argmin(std::optional<int64_t> axis, bool keepdim) const {
  return inverse(*this).argmax(axis, keepdim);
}

Tensor Tensor::logsumexp(Axis axis, bool keepdim) const {
  Tensor m = max(axis, true).detach();
  Tensor s = sub(m).exp().sum(axis, keepdim).log();
  if (keepdim) return prim::add(s, m);
  return prim::add(s, m.reshape(s.shape()));
}

namespace {
struct SoftmaxParts {
  Tensor m, e, ss;
};
SoftmaxParts softmax_parts(const Tensor& x, int64_t axis, std::optional<DType> dtype) {
  Tensor m = x.sub(x.max(axis, true).detach());
  if (dtype) m = m.cast(*dtype);
  Tensor e = m.exp();
  return {m, e, e.sum(axis, true)};
}
}  // namespace

Tensor Tensor::softmax(int64_t axis, std::optional<DType> dtype) const {
  SoftmaxParts p = softmax_parts(*this, axis, dtype);
  return prim::mul(p.e, p.ss.reciprocal());
}

Tensor Tensor::log_softmax(int64_t axis, std::optional<DType> dtype) const {
  SoftmaxParts p = softmax_parts(*this, axis, dtype);
  return p.m.sub(p.ss.log());
}

Tensor Tensor::softmin(int64_t axis) const { return neg().softmax(axis); }

namespace {

Scalar identity_element(ReduceOp op, DType d) {
  switch (op) {
    case ReduceOp::ADD: return Scalar(0);
    case ReduceOp::MUL: return Scalar(1);
    case ReduceOp::MAX: return api::dtype_min(d);
  }
  return Scalar(0);
}

// tinygrad's _cumalu: pad the axis with n-1 identities in front, take windows of n, reduce.
Tensor cumalu(const Tensor& x, int64_t axis, ReduceOp op) {
  int64_t n = x.shape()[axis];
  Pairs pads(x.ndim(), {0, 0});
  pads.back() = {n - 1, 0};
  Tensor pooled =
      api::pad_constant(x.transpose(axis, -1), pads, identity_element(op, x.dtype())).pool({n}, {1}, {1});
  Tensor r = op == ReduceOp::ADD ? pooled.sum(-1) : op == ReduceOp::MAX ? pooled.max(-1) : pooled.prod(-1);
  return r.transpose(axis, -1);
}

// tinygrad's _split_cumalu: long axes run as chunks of 256 plus a carry.
Tensor split_cumalu(const Tensor& x, int64_t axis, ReduceOp op) {
  axis = api::resolve_dim("cumsum", axis, x.ndim());
  if (x.ndim() == 0 || x.numel() == 0) return op == ReduceOp::ADD ? x.cast(x.sum().dtype()) : x;
  const int64_t SPLIT = 256;
  Scalar value = identity_element(op, x.dtype());
  int64_t s = x.shape()[axis];
  if (s <= SPLIT * 2) return cumalu(x, axis, op);
  Pairs pads(x.ndim(), {0, 0});
  pads.back() = {api::ceildiv(s, SPLIT) * SPLIT - s, 0};
  Tensor chunks = api::pad_constant(x.transpose(axis, -1), pads, value).unflatten(-1, {-1, SPLIT});
  chunks = cumalu(chunks, chunks.ndim() - 1, op);
  Tensor last = chunks[{Index::ellipsis(), Index(-1)}];
  Pairs bp(last.ndim(), {0, 0});
  bp.back() = {1, -1};
  Tensor base = api::pad_constant(cumalu(last, last.ndim() - 1, op), bp, value);
  Tensor b = base.unsqueeze(-1);
  Tensor comb = op == ReduceOp::ADD ? prim::add(chunks, b) : op == ReduceOp::MUL ? prim::mul(chunks, b) : prim::maximum(chunks, b);
  Tensor flat = comb.flatten(-2);
  return flat[{Index::ellipsis(), slice(-s, std::nullopt)}].transpose(axis, -1);
}

}  // namespace

Tensor Tensor::cumsum(int64_t axis) const { return split_cumalu(*this, axis, ReduceOp::ADD); }
Tensor Tensor::cumprod(int64_t axis) const { return split_cumalu(*this, axis, ReduceOp::MUL); }
Tensor Tensor::cummax(int64_t axis) const { return split_cumalu(*this, axis, ReduceOp::MAX); }

Tensor Tensor::normalize(double p, int64_t dim, double eps) const {
  Tensor den = p == 0 ? ne(0).sum(dim, true) : abs().pow(p).sum(dim, true).pow(1 / p);
  return div(den.maximum(eps));
}



Tensor Tensor::cummax_indices(int64_t axis) const {
  if (ndim() == 0) return zeros(shape(), DType::Int32);
  axis = api::resolve_dim("cummax", axis, ndim());
  int64_t n = shape()[axis];
  Tensor values = cummax(axis);
  Tensor x = transpose(axis, -1), vt = values.transpose(axis, -1);
  Tensor match = x.unsqueeze(-1).eq(vt.unsqueeze(-2)) * ones({n, n}, DType::Bool).triu();
  Tensor idx = prim::add((match * arange(n, 0, -1).reshape({n, 1})).max(-2).neg(), n).cast(DType::Int32);
  return idx.transpose(-1, axis);
}

Tensor Tensor::cummin(int64_t axis) const { return inverse(inverse(*this).cummax(axis)); }

Tensor Tensor::logcumsumexp(int64_t axis) const {
  if (ndim() == 0) return *this;
  axis = api::resolve_dim("logcumsumexp", axis, ndim());
  Tensor x = transpose(axis, -1);
  int64_t n = x.shape().back();
  Tensor xc = x.cummax(-1).detach();
  Tensor mask = ones({n, n}, DType::Bool).tril();
  Tensor ret = prim::add(mask.where(x.unsqueeze(-2).sub(xc.unsqueeze(-1)), api::dtype_min(dtype())).exp().sum(-1).log(), xc);
  return ret.transpose(-1, axis);
}

std::pair<Tensor, Tensor> Tensor::var_mean(Axis axis, bool keepdim, double correction) const {
  return {var(axis, keepdim, correction), mean(axis, keepdim)};
}
std::pair<Tensor, Tensor> Tensor::std_mean(Axis axis, bool keepdim, double correction) const {
  return {std(axis, keepdim, correction), mean(axis, keepdim)};
}

}  // namespace maroon
