// scatter and scatter_reduce (tinygrad's mixin/op.py): one-hot masks along `dim`, then a
// reduction or a masked merge.
#include "api/internal.h"
#include "maroon/tensor.h"
#include "maroon/primitives.h"

namespace maroon {

namespace {

std::pair<Tensor, Tensor> pre_scatter(const Tensor& self, int64_t dim, const Tensor& index, Tensor src) {
  if (self.ndim() == 0) throw IndexError("[scatter] needs at least one dimension, got a 0-d tensor");
  dim = api::resolve_dim("scatter", dim, self.ndim());
  if (index.ndim() != self.ndim() || src.ndim() != self.ndim())
    throw ShapeError("[scatter] self, index and src must have the same ndim: " + shape_str(self.shape()) + ", " +
                     shape_str(index.shape()) + ", " + shape_str(src.shape()));
  for (int64_t d = 0; d < self.ndim(); ++d)
    if ((d != dim && self.shape()[d] < index.shape()[d]) || src.shape()[d] < index.shape()[d])
      throw ShapeError("[scatter] index " + shape_str(index.shape()) + " does not fit self " +
                       shape_str(self.shape()) + " and src " + shape_str(src.shape()));
  if (self.dtype() != src.dtype())
    throw DTypeError("[scatter] self dtype " + api::dt(self.dtype()) + " differs from src dtype " + api::dt(src.dtype()));
  src = src.shrink_to(index.shape());
  Shape es = src.shape();
  es.push_back(self.shape()[dim]);
  src = src.unsqueeze(-1).expand(es).transpose(-1, dim);
  Tensor mask = index.unsqueeze(-1).one_hot_along_dim(self.shape()[dim]).transpose(-1, dim);
  Shape ps = self.shape();
  ps.push_back(-1);
  return {src.pad_to(ps), mask.pad_to(ps)};
}

}  // namespace

Tensor Tensor::scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src_in, const std::string& reduce,
                              bool include_self) const {
  auto [src, mask] = pre_scatter(*this, dim, index, src_in);
  // (captured by name: C++20 lets a lambda capture a structured binding, clang 14 does not)
  auto inv_mask = [&, &mask = mask](const Tensor& a, const Tensor& b) { return mask.any(-1).logical_not().where(a, b); };
  if (reduce == "sum")
    return mask.where(src, 0).sum(-1).add(include_self ? *this : inv_mask(*this, const_like(0)));
  if (reduce == "prod")
    return mask.where(src, 1).prod(-1).mul(include_self ? *this : inv_mask(*this, const_like(1)));
  if (reduce == "amax") {
    Scalar m = api::dtype_min(src.dtype());
    return mask.where(src, m).max(-1).maximum(include_self ? *this : inv_mask(*this, const_like(m)));
  }
  if (reduce == "amin") {
    Scalar m = api::dtype_max(src.dtype());
    return mask.where(src, m).min(-1).minimum(include_self ? *this : inv_mask(*this, const_like(m)));
  }
  if (reduce == "mean") {
    Tensor one = api::filled(shape(), 1, DType::Int32);
    Tensor count = mask.where(1, 0).sum(-1).add(include_self ? one : inv_mask(one, one.const_like(0)));
    return mask.where(src, 0).sum(-1).add(include_self ? *this : inv_mask(*this, const_like(0))).div(count);
  }
  throw ShapeError("[scatter_reduce] reduce='" + reduce + "' must be one of sum, prod, mean, amax, amin");
}

Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src_in) const {
  auto [src, mask] = pre_scatter(*this, dim, index, src_in);
  // _masked_merge over the last axis: later indices win.
  auto ms = mask.split(1, -1), vs = src.split(1, -1);
  Tensor m = ms[0], v = vs[0];
  for (size_t i = 1; i < ms.size(); ++i) {
    v = ms[i].where(vs[i], v);
    m = prim::bitwise_or(m, ms[i]);
  }
  return m.squeeze(-1).where(v.squeeze(-1), *this);
}

Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce) const {
  if (reduce == "add") return scatter_reduce(dim, index, src, "sum", true);
  if (reduce == "multiply") return scatter_reduce(dim, index, src, "prod", true);
  if (!reduce.empty()) throw ShapeError("[scatter] reduce='" + reduce + "' must be None (''), 'add' or 'multiply'");
  return scatter(dim, index, src);
}

Tensor Tensor::scatter(int64_t dim, const Tensor& index, Scalar src, const std::string& reduce) const {
  return scatter(dim, index, api::filled(index.shape(), src, dtype()), reduce);
}

}  // namespace maroon
