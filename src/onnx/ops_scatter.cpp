// Scatter and N-dimensional gather: ScatterElements (and its old name Scatter), ScatterND and
// GatherND, on the Tensor API's scatter / indexing. Index tensors are read on the host and checked
// (ONNX calls an index out of range an error); ScatterND and GatherND turn each index tuple into
// one row of a 2-D view (rows x the trailing slice), so the Tensor API sees a plain 1-axis scatter
// or gather.
#include "onnx/graph.h"

namespace maroon::onnx {

namespace {

// "none" / "add" / "mul" / "max" / "min" applied as the Tensor API's scatter (`dim` of `data`).
Tensor scatter_with(const OpCtx& c, const Tensor& data, int64_t dim, const Tensor& idx, const Tensor& upd) {
  std::string r = c.attr_s("reduction", "none");
  if (upd.dtype() != data.dtype()) c.fail("updates must have data's dtype");
  if (r == "none") return data.scatter(dim, idx, upd);
  if (r == "add") return data.scatter(dim, idx, upd, "add");
  if (r == "mul") return data.scatter(dim, idx, upd, "multiply");
  if (r == "max") return data.scatter_reduce(dim, idx, upd, "amax", true);
  if (r == "min") return data.scatter_reduce(dim, idx, upd, "amin", true);
  c.fail("reduction '" + r + "' is not none, add, mul, max or min");
}

std::vector<Tensor> scatter_elements(const OpCtx& c) {
  const Tensor& data = c.input(0);
  int64_t axis = c.axis(c.attr_i("axis", 0), data.ndim());
  const Tensor& raw = c.input(1);
  if (raw.shape() != c.input(2).shape()) c.fail("indices and updates must have one shape");
  return {scatter_with(c, data, axis, checked_indices(c, raw, data.shape()[axis]), c.input(2))};
}

// The flat row of each index tuple (the last axis of `indices`, k long) into data's first k axes,
// each entry checked and wrapped; `batch` leading axes shared by data and indices offset the rows.
std::vector<int64_t> nd_rows(const OpCtx& c, const Shape& d, const Tensor& indices, size_t batch) {
  if (!is_int(indices.dtype()) || indices.ndim() < 1) c.fail("indices must be an integer tensor of rank 1 or more");
  const size_t k = static_cast<size_t>(indices.shape().back());
  if (batch + k > d.size()) c.fail("index tuples of " + std::to_string(k) + " exceed data " + shape_str(d));
  std::vector<int64_t> v = indices.cast(DType::Int64).to_vector<int64_t>();
  int64_t rows = prod(d, batch, batch + k), per_batch = k ? static_cast<int64_t>(v.size() / k) / std::max<int64_t>(1, prod(d, 0, batch)) : 0;
  std::vector<int64_t> st = strides_of(Shape(d.begin() + batch, d.begin() + batch + k));
  std::vector<int64_t> out;
  for (size_t t = 0; k && t < v.size() / k; ++t) {
    int64_t r = per_batch ? static_cast<int64_t>(t) / per_batch * rows : 0;
    for (size_t j = 0; j < k; ++j) {
      int64_t i = v[t * k + j], n = d[batch + j];
      if (i < -n || i >= n) c.fail("index " + std::to_string(i) + " is out of range for an axis of size " + std::to_string(n));
      r += (i < 0 ? i + n : i) * st[j];
    }
    out.push_back(r);
  }
  if (k == 0) out.assign(static_cast<size_t>(prod(indices.shape(), 0, indices.shape().size() - 1)), 0);
  return out;
}

std::vector<Tensor> gather_nd(const OpCtx& c) {
  const Tensor& data = c.input(0);
  const Tensor& indices = c.input(1);
  const size_t b = static_cast<size_t>(c.attr_i("batch_dims", 0));
  if (b >= static_cast<size_t>(indices.ndim()) || b > static_cast<size_t>(data.ndim())) c.fail("batch_dims is too large");
  for (size_t i = 0; i < b; ++i)
    if (data.shape()[i] != indices.shape()[i]) c.fail("data and indices differ in the batch dimensions");
  const size_t k = static_cast<size_t>(indices.shape().back());
  std::vector<int64_t> rows = nd_rows(c, data.shape(), indices, b);
  const Shape& d = data.shape();
  Tensor flat = data.reshape({prod(d, 0, b + k), prod(d, b + k)});
  Shape out(indices.shape().begin(), indices.shape().end() - 1);
  out.insert(out.end(), d.begin() + b + k, d.end());
  if (rows.empty()) return {Tensor::zeros(out, data.dtype())};
  Tensor idx = Tensor::from_vector(rows, {static_cast<int64_t>(rows.size())}, DType::Int64);
  return {flat[std::vector<Index>{Index(idx)}].reshape(out)};
}

std::vector<Tensor> scatter_nd(const OpCtx& c) {
  const Tensor& data = c.input(0);
  const Tensor& updates = c.input(2);
  const size_t k = static_cast<size_t>(c.input(1).shape().back());
  std::vector<int64_t> rows = nd_rows(c, data.shape(), c.input(1), 0);
  const Shape& d = data.shape();
  int64_t inner = prod(d, k), m = static_cast<int64_t>(rows.size());
  if (updates.numel() != m * inner) c.fail("updates " + shape_str(updates.shape()) + " do not match the indices and data");
  if (m == 0) return {data};
  Tensor idx = Tensor::from_vector(rows, {m, 1}, DType::Int64).expand({m, inner});
  return {scatter_with(c, data.reshape({prod(d, 0, k), inner}), 0, idx, updates.reshape({m, inner})).reshape(d)};
}

}  // namespace

void add_scatter_ops(OpTable& t) {
  t["ScatterElements"] = scatter_elements;
  t["Scatter"] = scatter_elements;
  t["GatherND"] = gather_nd;
  t["ScatterND"] = scatter_nd;
}

}  // namespace maroon::onnx
