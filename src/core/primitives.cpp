// The primitive builders (maroon/primitives.h): one graph node per call, validating user input
// and naming the op and shapes in every error.
#include "maroon/primitives.h"

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <utility>

#include "core/alu.h"
#include "core/checked.h"
#include "core/graph.h"

namespace maroon::prim {

namespace {

std::string lower(std::string_view s) {
  std::string o(s);
  for (char& c : o) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return o;
}

std::string tag(Op op) { return "[" + lower(op_name(op)) + "] "; }

void check_dtype(Op op, DType d) {
  if (!op_accepts(op, d))
    throw DTypeError(tag(op) + "not supported for " + std::string(dtype_name(d)) + " (" +
                     std::string(rule_name(op_info(op).dtypes)) + " only)");
}

Tensor make(Op op, DType dtype, Shape shape, SrcList src, Arg arg = {}) {  // SrcList: no heap block
  return Tensor(make_node(op, dtype, std::move(shape), std::move(src), std::move(arg)));
}

int64_t normalize_axis(Op op, int64_t ax, size_t ndim, const Shape& shape) {
  int64_t n = static_cast<int64_t>(ndim);
  if (ax < -n || ax >= n)
    throw IndexError(tag(op) + "axis " + std::to_string(ax) + " is out of range for shape " +
                     shape_str(shape));
  return ax < 0 ? ax + n : ax;
}

std::vector<int64_t> normalize_axes(Op op, const std::vector<int64_t>& axes, const Shape& shape) {
  std::vector<int64_t> out;
  out.reserve(axes.size());
  for (int64_t ax : axes) out.push_back(normalize_axis(op, ax, shape.size(), shape));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end())
    throw ShapeError(tag(op) + "repeated axis in " + shape_str(axes) + " for shape " +
                     shape_str(shape));
  return out;
}

Shape broadcast_shape(Op op, const std::vector<const Shape*>& shapes) {
  if (std::optional<Shape> out = broadcast_shapes(shapes)) return std::move(*out);
  std::string msg = tag(op) + "shapes";
  for (size_t k = 0; k < shapes.size(); ++k) msg += (k ? " and " : " ") + shape_str(*shapes[k]);
  throw ShapeError(msg + " cannot be broadcast together");
}

Tensor broadcast_to(const Tensor& t, const Shape& shape) {
  if (t.shape() == shape) return t;
  // Same rank (a product's x[M,1,K] * w[1,N,K]): the reshape below would be to t's own shape,
  // which returns t, after copying the shape twice.
  if (t.shape().size() == shape.size()) return t.expand(shape);
  Shape padded;
  padded.reserve(shape.size());  // one block: the ones, then t's shape
  padded.assign(shape.size() - t.shape().size(), 1);
  padded.insert(padded.end(), t.shape().begin(), t.shape().end());
  return t.reshape(padded).expand(shape);
}

// Casts and broadcasts operands to one dtype and shape; returns the common dtype.
DType unify(Op op, std::vector<Tensor>& ts, std::initializer_list<DType> dtypes) {  // no heap block
  const DType* it = dtypes.begin();
  DType d = *it;
  for (++it; it != dtypes.end(); ++it) d = least_upper_dtype(d, *it);
  d = concrete(d);
  std::vector<const Shape*> shapes;
  shapes.reserve(ts.size());
  for (auto& t : ts) shapes.push_back(&t.shape());
  Shape shape = broadcast_shape(op, shapes);
  for (auto& t : ts) t = broadcast_to(t.dtype() == d ? t : t.cast(d), shape);
  return d;
}

Tensor binary_op(Op op, Tensor a, Tensor b, DType da, DType db) {
  // Operands of one shape already in the common dtype (most calls) need neither a cast nor a
  // broadcast: unify() below would return them as they are, after building three vectors.
  if (a.shape() == b.shape() && a.dtype() == b.dtype() && concrete(least_upper_dtype(da, db)) == a.dtype()) {
    check_dtype(op, a.dtype());
    DType out = op_info(op).kind == OpKind::Compare ? DType::Bool : a.dtype();
    return make(op, out, a.shape(), {a.node(), b.node()});
  }
  std::vector<Tensor> ts{a, b};
  DType d = unify(op, ts, {da, db});
  check_dtype(op, d);
  DType out = op_info(op).kind == OpKind::Compare ? DType::Bool : d;
  return make(op, out, ts[0].shape(), {ts[0].node(), ts[1].node()});
}

Tensor binary_op(Op op, const Tensor& a, const Tensor& b) {
  return binary_op(op, a, b, a.dtype(), b.dtype());
}

// A weak scalar takes the tensor's dtype where the lattice allows (int8 * 300 stays int8).
Tensor scalar_like(const Scalar& s, const Tensor& t) {
  DType d = concrete(least_upper_dtype(t.dtype(), s.weak_dtype()));
  return Tensor::full({}, s, d);
}

Tensor binary_op(Op op, const Tensor& a, const Scalar& b) {
  return binary_op(op, a, scalar_like(b, a), a.dtype(), b.weak_dtype());
}
Tensor binary_op(Op op, const Scalar& a, const Tensor& b) {
  return binary_op(op, scalar_like(a, b), b, a.weak_dtype(), b.dtype());
}

Tensor unary_op(Op op, const Tensor& t) {
  check_dtype(op, t.dtype());
  return make(op, t.dtype(), t.shape(), {t.node()});
}

}  // namespace

// ---- the builders generated from maroon/ops.def (maroon/primitives.h) ----

#define MAROON_DEFINE_Unary(NAME, B) \
  Tensor B(const Tensor& x) { return unary_op(Op::NAME, x); }
#define MAROON_DEFINE_Binary(NAME, B)                                                 \
  Tensor B(const Tensor& a, const Tensor& b) { return binary_op(Op::NAME, a, b); }   \
  Tensor B(const Tensor& a, Scalar b) { return binary_op(Op::NAME, a, b); }          \
  Tensor B(Scalar a, const Tensor& b) { return binary_op(Op::NAME, a, b); }
#define MAROON_DEFINE_Compare(NAME, B) MAROON_DEFINE_Binary(NAME, B)
#define MAROON_DEFINE_Cast(NAME, B)
#define MAROON_DEFINE_Ternary(NAME, B)
#define MAROON_DEFINE_Reduce(NAME, B)
#define MAROON_DEFINE_Movement(NAME, B)
#define MAROON_DEFINE_Source(NAME, B)
#define MAROON_DEFINE_Index(NAME, B)
#define OP(NAME, KIND, ARITY, DTYPES, BUILDER, ...) MAROON_DEFINE_##KIND(NAME, BUILDER)
#include "maroon/ops.def"
#undef OP

// ---- casts ----

Tensor cast(const Tensor& x, DType to) {
  to = concrete(to);
  if (to == x.dtype()) return x;
  Arg arg;
  arg.dtype = to;
  return make(Op::CAST, to, x.shape(), {x.node()}, std::move(arg));
}

Tensor bitcast(const Tensor& x, DType to) {
  to = concrete(to);
  check_dtype(Op::BITCAST, x.dtype());
  check_dtype(Op::BITCAST, to);
  if (itemsize(to) != itemsize(x.dtype()))
    throw DTypeError("[bitcast] cannot bitcast " + std::string(dtype_name(x.dtype())) + " to " +
                     std::string(dtype_name(to)) + ": element sizes differ");
  if (to == x.dtype()) return x;
  Arg arg;
  arg.dtype = to;
  return make(Op::BITCAST, to, x.shape(), {x.node()}, std::move(arg));
}

// ---- reduce ----

Tensor reduce(const Tensor& x, ReduceOp op, std::vector<int64_t> axes) {
  Arg arg;
  arg.reduce_op = op;
  arg.ints = normalize_axes(Op::REDUCE, axes, x.shape());
  Shape out = x.shape();
  for (int64_t ax : arg.ints) out[ax] = 1;
  return make(Op::REDUCE, x.dtype(), std::move(out), {x.node()}, std::move(arg));
}

// ---- movement ----

Tensor reshape(const Tensor& x, const Shape& s) {
  Shape out = s;
  int64_t infer = -1, known = 1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer >= 0) throw ShapeError("[reshape] only one dimension can be -1 in " + shape_str(s));
      infer = static_cast<int64_t>(i);
    } else if (out[i] < 0) {
      throw ShapeError("[reshape] negative dimension in " + shape_str(s));
    } else if (out[i] != 0 && !checked::mul(known, out[i], known)) {
      throw ShapeError("[reshape] cannot reshape " + shape_str(x.shape()) + " to " + shape_str(s) +
                       ": the new shape's size does not fit in 64 bits");
    }
  }
  // A zero dimension makes the size 0 (known skips it so that it cannot overflow).
  if (std::find(out.begin(), out.end(), 0) != out.end()) known = 0;
  if (infer >= 0) {
    if (known == 0 || x.numel() % known != 0)
      throw ShapeError("[reshape] cannot reshape " + shape_str(x.shape()) + " to " + shape_str(s));
    out[infer] = x.numel() / known;
  }
  if (maroon::numel(out) != x.numel())
    throw ShapeError("[reshape] cannot reshape " + shape_str(x.shape()) + " to " + shape_str(s));
  if (out == x.shape()) return x;
  Arg arg;
  arg.ints = out;
  return make(Op::RESHAPE, x.dtype(), std::move(out), {x.node()}, std::move(arg));
}

Tensor expand(const Tensor& x, const Shape& s) {
  bool ok = s.size() == x.shape().size();
  for (size_t i = 0; ok && i < s.size(); ++i) ok = s[i] == x.shape()[i] || (x.shape()[i] == 1 && s[i] >= 0);
  if (!ok) throw ShapeError("[expand] cannot expand " + shape_str(x.shape()) + " to " + shape_str(s));
  if (s == x.shape()) return x;
  Arg arg;
  arg.ints = s;
  return make(Op::EXPAND, x.dtype(), s, {x.node()}, std::move(arg));
}

Tensor permute(const Tensor& x, const std::vector<int64_t>& order) {
  std::vector<int64_t> o;
  o.reserve(order.size());
  bool ok = order.size() == x.shape().size();
  for (size_t i = 0; ok && i < order.size(); ++i) {
    int64_t ax = order[i] < 0 ? order[i] + x.ndim() : order[i];
    ok = ax >= 0 && ax < x.ndim();
    o.push_back(ax);
  }
  std::vector<int64_t> sorted = o;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; ok && i < sorted.size(); ++i) ok = sorted[i] == static_cast<int64_t>(i);
  if (!ok)
    throw ShapeError("[permute] " + shape_str(order) + " is not a permutation of the axes of " +
                     shape_str(x.shape()));
  Shape out;
  out.reserve(o.size());
  for (int64_t ax : o) out.push_back(x.shape()[ax]);
  Arg arg;
  arg.ints = std::move(o);
  return make(Op::PERMUTE, x.dtype(), std::move(out), {x.node()}, std::move(arg));
}

namespace {
std::string pairs_str(const Pairs& p) {
  std::string s = "(";
  for (size_t i = 0; i < p.size(); ++i)
    s += (i ? "," : "") + std::string("(") + std::to_string(p[i].first) + "," +
         std::to_string(p[i].second) + ")";
  return s + ")";
}
}  // namespace

Tensor pad(const Tensor& x, const Pairs& p) {
  bool ok = p.size() == x.shape().size();
  for (size_t i = 0; ok && i < p.size(); ++i) ok = p[i].first >= 0 && p[i].second >= 0;
  if (!ok)
    throw ShapeError("[pad] padding " + pairs_str(p) + " does not fit shape " + shape_str(x.shape()) +
                     " (one non-negative (before, after) pair per axis)");
  Shape out = x.shape();
  for (size_t i = 0; i < p.size(); ++i)
    if (!checked::add(out[i], p[i].first, out[i]) || !checked::add(out[i], p[i].second, out[i]))
      throw ShapeError("[pad] padding " + pairs_str(p) + " of shape " + shape_str(x.shape()) +
                       " gives a dimension that does not fit in 64 bits");
  if (out == x.shape()) return x;
  Arg arg;
  arg.pairs = p;
  return make(Op::PAD, x.dtype(), std::move(out), {x.node()}, std::move(arg));
}

Tensor shrink(const Tensor& x, const Pairs& p) {
  bool ok = p.size() == x.shape().size();
  for (size_t i = 0; ok && i < p.size(); ++i)
    ok = 0 <= p[i].first && p[i].first <= p[i].second && p[i].second <= x.shape()[i];
  if (!ok)
    throw ShapeError("[shrink] bounds " + pairs_str(p) + " do not fit shape " + shape_str(x.shape()) +
                     " (0 <= begin <= end <= size per axis)");
  Shape out;
  for (auto [b, e] : p) out.push_back(e - b);
  if (out == x.shape()) return x;
  Arg arg;
  arg.pairs = p;
  return make(Op::SHRINK, x.dtype(), std::move(out), {x.node()}, std::move(arg));
}

Tensor flip(const Tensor& x, const std::vector<int64_t>& axes) {
  Arg arg;
  arg.ints = normalize_axes(Op::FLIP, axes, x.shape());
  if (arg.ints.empty()) return x;
  return make(Op::FLIP, x.dtype(), x.shape(), {x.node()}, std::move(arg));
}

// ---- ternary ----

namespace {
Tensor where_op(const Tensor& cond, Tensor a, Tensor b, DType da, DType db) {
  if (cond.dtype() != DType::Bool)
    throw DTypeError("[where] the condition must be bool, not " +
                     std::string(dtype_name(cond.dtype())));
  std::vector<Tensor> ts{cond, a, b};
  std::vector<const Shape*> shapes{&cond.shape(), &a.shape(), &b.shape()};
  Shape shape = broadcast_shape(Op::WHERE, shapes);
  std::vector<Tensor> vals{a, b};
  DType d = unify(Op::WHERE, vals, {da, db});
  Tensor c = broadcast_to(cond, shape);
  return make(Op::WHERE, d, shape,
              {c.node(), broadcast_to(vals[0], shape).node(), broadcast_to(vals[1], shape).node()});
}
}  // namespace

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  return where_op(cond, a, b, a.dtype(), b.dtype());
}
Tensor where(const Tensor& cond, const Tensor& a, Scalar b) {
  return where_op(cond, a, scalar_like(b, a), a.dtype(), b.weak_dtype());
}
Tensor where(const Tensor& cond, Scalar a, const Tensor& b) {
  return where_op(cond, scalar_like(a, b), b, a.weak_dtype(), b.dtype());
}

Tensor mulacc(const Tensor& a, const Tensor& b, const Tensor& c) {
  std::vector<Tensor> ts{a, b, c};
  DType d = unify(Op::MULACC, ts, {a.dtype(), b.dtype(), c.dtype()});
  check_dtype(Op::MULACC, d);
  return make(Op::MULACC, d, ts[0].shape(), {ts[0].node(), ts[1].node(), ts[2].node()});
}

// ---- the fused reduction (docs/spec.md §14) ----

Tensor fused_reduce(const Tensor& a, const Tensor& b, std::vector<int64_t> axes) {
  const Op op = Op::REDUCE_MULACC;
  const DType d = concrete(least_upper_dtype(a.dtype(), b.dtype()));
  check_dtype(op, d);
  const Shape s = broadcast_shape(op, {&a.shape(), &b.shape()});
  // Operands keep their own (unexpanded) shapes, right-aligned to the broadcast rank: the
  // gradient rule reads which axes each one stretches over.
  auto align = [&](const Tensor& t) {
    Tensor c = t.dtype() == d ? t : t.cast(d);
    if (c.shape().size() == s.size()) return c;
    Shape p(s.size() - c.shape().size(), 1);
    p.insert(p.end(), c.shape().begin(), c.shape().end());
    return c.reshape(p);
  };
  Tensor x = align(a), y = align(b);
  Arg arg;
  arg.ints = normalize_axes(op, axes, s);
  Shape out = s;
  for (int64_t ax : arg.ints) out[ax] = 1;
  return make(op, d, std::move(out), {x.node(), y.node()}, std::move(arg));
}

// ---- selection (docs/spec.md §15) ----

Tensor gather(const Tensor& x, const Tensor& idx, int64_t axis) {
  const Op op = Op::GATHER;
  if (!is_int(idx.dtype()))
    throw DTypeError(tag(op) + "the index must be an integer tensor, not " + std::string(dtype_name(idx.dtype())));
  const DType d = concrete(x.dtype());
  check_dtype(op, d);
  if (x.ndim() == 0 || idx.ndim() != x.ndim())
    throw ShapeError(tag(op) + "x " + shape_str(x.shape()) + " and index " + shape_str(idx.shape()) +
                     " must have one rank, at least 1");
  Arg arg;
  arg.ints = {normalize_axis(op, axis, x.shape().size(), x.shape())};
  // The index's size-1 axes (all but `axis`) stretch to x's sizes; no other broadcasting.
  Shape out = x.shape();
  out[arg.ints[0]] = idx.shape()[arg.ints[0]];
  for (size_t d = 0; d < out.size(); ++d)
    if (idx.shape()[d] != out[d] && idx.shape()[d] != 1)
      throw ShapeError(tag(op) + "index " + shape_str(idx.shape()) + " does not fit x " + shape_str(x.shape()) +
                       " off axis " + std::to_string(arg.ints[0]));
  Tensor i = idx.dtype() == concrete(idx.dtype()) ? idx : idx.cast(concrete(idx.dtype()));
  Tensor v = x.dtype() == d ? x : x.cast(d);
  return make(op, d, out, {v.node(), broadcast_to(i, out).node()}, arg);
}

}  // namespace maroon::prim

namespace maroon {

// Generated from the op table: every Unary, Binary, Compare and Ternary row through its builder.
Tensor alu(Op op, const std::vector<Tensor>& x) {
  auto need = [&](size_t n) {
    if (x.size() != n)
      throw std::invalid_argument("[alu] " + std::string(op_name(op)) + " takes " + std::to_string(n) +
                                  " operands, got " + std::to_string(x.size()));
  };
#define MAROON_ALU_Unary(NAME, B) case Op::NAME: need(1); return prim::B(x[0]);
#define MAROON_ALU_Binary(NAME, B) case Op::NAME: need(2); return prim::B(x[0], x[1]);
#define MAROON_ALU_Compare(NAME, B) MAROON_ALU_Binary(NAME, B)
#define MAROON_ALU_Ternary(NAME, B) case Op::NAME: need(3); return prim::B(x[0], x[1], x[2]);
#define MAROON_ALU_Cast(NAME, B)
#define MAROON_ALU_Reduce(NAME, B)
#define MAROON_ALU_Movement(NAME, B)
#define MAROON_ALU_Source(NAME, B)
#define MAROON_ALU_Index(NAME, B)
  switch (op) {
#define OP(NAME, KIND, ARITY, DTYPES, BUILDER, ...) MAROON_ALU_##KIND(NAME, BUILDER)
#include "maroon/ops.def"
#undef OP
    default: break;
  }
  throw std::invalid_argument("[alu] " + std::string(op_name(op)) + " is not an elementwise op it builds");
}

}  // namespace maroon
