// Indexing operators: Slice (views), Gather and GatherElements (the Tensor API's indexing, with
// every index checked on the host first: ONNX calls an index out of range an error, and an
// adversarial model must not read a silent zero), Trilu and CumSum.
#include <limits>

#include "onnx/graph.h"

namespace maroon::onnx {

Tensor checked_indices(const OpCtx& c, const Tensor& idx, int64_t n) {
  if (!is_int(idx.dtype())) c.fail("indices must be integers, got " + std::string(dtype_name(idx.dtype())));
  std::vector<int64_t> v = idx.cast(DType::Int64).to_vector<int64_t>();
  for (int64_t& i : v) {
    if (i < -n || i >= n) c.fail("index " + std::to_string(i) + " is out of range for an axis of size " + std::to_string(n));
    if (i < 0) i += n;
  }
  return Tensor::from_vector(v, idx.shape(), DType::Int64);
}

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

int64_t prod(const Shape& s, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t i = from; i < std::min(to, s.size()); ++i) n *= s[i];
  return n;
}

namespace {

std::vector<Tensor> slice(const OpCtx& c) {
  const Tensor& x = c.input(0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.opset < 10) {
    starts = c.attr_ints("starts"), ends = c.attr_ints("ends"), axes = c.attr_ints("axes");
  } else {
    starts = c.ints(1), ends = c.ints(2);
    if (c.has(3)) axes = c.ints(3);
    if (c.has(4)) steps = c.ints(4);
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    c.fail("starts, ends, axes and steps must have one length");
  std::vector<Index> idx(x.ndim(), Index(maroon::slice()));
  std::vector<bool> seen(x.ndim(), false);
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t a = c.axis(axes[i], x.ndim()), n = x.shape()[a], st = steps[i];
    if (seen[a]) c.fail("axis " + std::to_string(a) + " is sliced twice");
    seen[a] = true;
    if (st == 0) c.fail("steps must not be 0");
    // ONNX's clamping, done here so the Tensor API sees only in-range numbers.
    int64_t s = starts[i] < 0 ? std::max<int64_t>(starts[i], -n) + n : starts[i];
    int64_t e = ends[i] < 0 ? std::max<int64_t>(ends[i], -n - 1) + n : ends[i];
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, n), e = std::clamp<int64_t>(e, 0, n);
      idx[a] = Index(maroon::slice(s, std::max(s, e), st));
    } else {
      s = std::clamp<int64_t>(s, 0, n - 1), e = std::clamp<int64_t>(e, -1, n - 1);
      if (n == 0 || e >= s) idx[a] = Index(maroon::slice(0, 0, 1));
      else idx[a] = Index(maroon::slice(s, e < 0 ? std::nullopt : std::optional<int64_t>(e), st));
    }
  }
  return {x[idx]};
}

std::vector<Tensor> gather(const OpCtx& c) {
  const Tensor& x = c.input(0);
  if (x.ndim() == 0) c.fail("data must have rank 1 or more");
  int64_t axis = c.axis(c.attr_i("axis", 0), x.ndim());
  const Tensor& raw = c.input(1);
  Tensor idx = checked_indices(c, raw, x.shape()[axis]);
  std::vector<Index> sel(axis, Index(maroon::slice()));
  sel.push_back(Index(idx.reshape({idx.numel()})));
  Shape out(x.shape().begin(), x.shape().begin() + axis);
  out.insert(out.end(), raw.shape().begin(), raw.shape().end());
  out.insert(out.end(), x.shape().begin() + axis + 1, x.shape().end());
  if (idx.numel() == 0) return {Tensor::zeros(out, x.dtype())};
  return {x[sel].reshape(out)};
}

std::vector<Tensor> gather_elements(const OpCtx& c) {
  const Tensor& x = c.input(0);
  int64_t axis = c.axis(c.attr_i("axis", 0), x.ndim());
  return {x.gather(axis, checked_indices(c, c.input(1), x.shape()[axis]))};
}

std::vector<Tensor> trilu(const OpCtx& c) {
  const Tensor& x = c.input(0);
  if (x.ndim() < 2) c.fail("input must have rank 2 or more");
  int64_t k = c.has(1) ? static_cast<int64_t>(c.scalar(1)) : 0;
  return {c.attr_i("upper", 1) ? x.triu(k) : x.tril(k)};
}

std::vector<Tensor> cumsum(const OpCtx& c) {
  Tensor x = c.input(0);
  int64_t axis = c.axis(static_cast<int64_t>(c.scalar(1)), x.ndim());
  const bool rev = c.attr_i("reverse", 0) != 0, excl = c.attr_i("exclusive", 0) != 0;
  if (rev) x = x.flip({axis});
  if (excl) {  // shift by one: a zero first, the last element dropped
    Pairs p(x.ndim(), {0, 0});
    p[axis] = {1, -1};
    x = x.pad(p, "constant", 0);
  }
  Tensor y = x.cumsum(axis);
  return {rev ? y.flip({axis}) : y};
}

std::vector<Tensor> arg(const OpCtx& c, bool max) {
  const Tensor& x = c.input(0);
  int64_t axis = c.axis(c.attr_i("axis", 0), x.ndim());
  const bool keep = c.attr_i("keepdims", 1) != 0;
  if (c.attr_i("select_last_index", 0)) {
    Tensor f = x.flip({axis});
    Tensor i = max ? f.argmax(axis, keep) : f.argmin(axis, keep);
    return {i.neg().add(x.shape()[axis] - 1).cast(DType::Int64)};
  }
  return {(max ? x.argmax(axis, keep) : x.argmin(axis, keep)).cast(DType::Int64)};
}

}  // namespace

void add_index_ops(OpTable& t) {
  t["Slice"] = slice;
  t["Gather"] = gather;
  t["GatherElements"] = gather_elements;
  t["Trilu"] = trilu;
  t["CumSum"] = cumsum;
  t["ArgMax"] = [](const OpCtx& c) { return arg(c, true); };
  t["ArgMin"] = [](const OpCtx& c) { return arg(c, false); };
}

}  // namespace maroon::onnx
