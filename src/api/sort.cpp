// sort, argsort and topk: tinygrad's bitonic network (mixin/op.py), then indices found by
// matching each sorted value to its k-th equal occurrence in the input (so ties keep order).
#include "api/internal.h"
#include "maroon/tensor.h"
#include "maroon/primitives.h"

namespace maroon {

std::pair<Tensor, Tensor> Tensor::sort(int64_t dim, bool descending) const {
  if (ndim() == 0) throw IndexError("[sort] needs at least one dimension, got a 0-d tensor");
  dim = api::resolve_dim("sort", dim, ndim());
  const int64_t orig_len = shape()[dim];
  if (orig_len <= 1) return {*this, zeros(shape(), DType::Int32)};
  int n_stages = 0;
  while ((int64_t{1} << n_stages) < orig_len) ++n_stages;
  Pairs pads(ndim(), {0, 0});
  pads[dim] = {0, (int64_t{1} << n_stages) - orig_len};
  Tensor x = api::pad_constant(*this, pads, descending ? api::dtype_min(dtype()) : api::dtype_max(dtype()))
                 .unflatten(dim, Shape(n_stages, 2));
  auto cat2 = [](const Tensor& a, const Tensor& b, int64_t d) { return a.cat({b}, d); };
  for (int stage = 1; stage <= n_stages; ++stage) {
    int64_t crossover = dim + n_stages - stage - 1;
    std::vector<int64_t> flip_dims;
    for (int64_t i = 1; i < stage + 1 + (ndim() - dim); ++i) flip_dims.push_back(x.ndim() - i);
    if (stage != n_stages) {
      auto bg = x.split(1, crossover);
      x = cat2(bg[0], bg[1].flip(flip_dims), crossover);
    }
    for (int sub = stage - 1; sub >= 0; --sub) {
      int64_t partner = dim + n_stages - sub - 1;
      auto tb = x.split(1, partner);
      Tensor larger = tb[0].maximum(tb[1]), smaller = tb[0].minimum(tb[1]);
      x = descending ? cat2(larger, smaller, partner) : cat2(smaller, larger, partner);
    }
    if (stage != n_stages) {
      auto bg = x.split(1, crossover);
      x = cat2(bg[0], bg[1].flip(flip_dims), crossover);
    }
  }
  x = x.flatten(dim, dim + n_stages - 1).shrink_to(shape());
  Shape ms{orig_len, orig_len};
  ms.insert(ms.end(), ndim() - dim - 1, 1);
  Tensor mask = ones({orig_len, orig_len}, DType::Bool).tril().reshape(ms);
  auto counts = [&](const Tensor& t) {
    return prim::bitwise_and(mask, t.unsqueeze(dim).eq(t.unsqueeze(dim + 1))).sum(dim + 1);
  };
  Tensor count_orig = counts(*this), count_sorted = counts(x);
  Tensor cond = prim::bitwise_and(unsqueeze(dim + 1).eq(x.unsqueeze(dim)),
                                    count_orig.unsqueeze(dim + 1).eq(count_sorted.unsqueeze(dim)));
  Shape is(x.ndim(), 1);
  is[dim] = orig_len;
  Tensor idx = arange(orig_len).reshape(is);
  idx = (cond * idx.unsqueeze(dim + 1)).sum(dim);
  return {x, idx};
}

Tensor Tensor::argsort(int64_t dim, bool descending) const { return sort(dim, descending).second; }

std::pair<Tensor, Tensor> Tensor::topk(int64_t k, int64_t dim, bool largest) const {
  if (ndim() == 0) throw IndexError("[topk] needs at least one dimension, got a 0-d tensor");
  dim = api::resolve_dim("topk", dim, ndim());
  if (k > shape()[dim])
    throw ShapeError("[topk] k=" + std::to_string(k) + " is out of range for shape " + shape_str(shape()));
  auto [x, idx] = sort(dim, largest);
  Shape s(ndim(), -1);
  s[dim] = k;
  return {x.shrink_to(s), idx.shrink_to(s)};
}

}  // namespace maroon
