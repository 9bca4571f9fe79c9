// split, chunk, stack and cat (tinygrad's mixin/movement.py and mixin/op.py).
#include "api/internal.h"
#include "maroon/tensor.h"
#include "maroon/primitives.h"

namespace maroon {

using api::resolve_dim;

std::vector<Tensor> Tensor::split(const std::vector<int64_t>& sizes, int64_t dim) const {
  if (ndim() == 0) throw IndexError("[split] needs at least one dimension, got a 0-d tensor");
  dim = resolve_dim("split", dim, ndim());
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  if (total != shape()[dim])
    throw ShapeError("[split] sizes must sum to " + std::to_string(shape()[dim]) + ", got " +
                     std::to_string(total));
  std::vector<Tensor> out;
  int64_t at = 0;
  for (int64_t s : sizes) {
    Pairs p;
    for (int64_t i = 0; i < ndim(); ++i) p.push_back(i == dim ? std::pair{at, at + s} : std::pair{int64_t{0}, shape()[i]});
    out.push_back(shrink(p));
    at += s;
  }
  return out;
}

std::vector<Tensor> Tensor::split(int64_t size, int64_t dim) const {
  if (ndim() == 0) throw IndexError("[split] needs at least one dimension, got a 0-d tensor");
  int64_t d = resolve_dim("split", dim, ndim());
  int64_t n = shape()[d];
  std::vector<int64_t> sizes;
  for (int64_t i = 0; i < std::max<int64_t>(1, n); i += std::max<int64_t>(1, size))
    sizes.push_back(std::min(size, n - i));
  return split(sizes, d);
}

std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim) const {
  if (chunks <= 0) throw ShapeError("[chunk] chunks must be positive, got " + std::to_string(chunks));
  if (ndim() == 0) throw IndexError("[chunk] needs at least one dimension, got a 0-d tensor");
  int64_t d = resolve_dim("chunk", dim, ndim());
  int64_t n = shape()[d];
  if (n == 0) return split(std::vector<int64_t>(chunks, 0), d);
  return split(api::ceildiv(n, chunks), d);
}

Tensor Tensor::stack_all(const std::vector<Tensor>& ts, int64_t dim) {
  if (ts.empty()) throw ShapeError("[stack] needs at least one tensor");
  for (const Tensor& t : ts)
    if (t.shape() != ts[0].shape())
      throw ShapeError("[stack] all shapes must match, got " + shape_str(ts[0].shape()) + " and " +
                       shape_str(t.shape()));
  dim = resolve_dim("stack", dim, ts[0].ndim(), true);
  // tinygrad's STACK copies each source into its slot; here each slot is selected by WHERE
  // from the sources padded along a new leading axis, which keeps every bit (a sum of zero
  // paddings would turn -0 into +0).
  const int64_t n = static_cast<int64_t>(ts.size());
  DType d = ts[0].dtype();
  for (const Tensor& t : ts) d = concrete(least_upper_dtype(d, t.dtype()));
  Shape one = ts[0].shape();
  one.insert(one.begin(), 1);
  Shape full = one;
  full[0] = n;
  Pairs p0(one.size(), {0, 0});
  p0[0] = {0, n - 1};
  Tensor out = ts[0].cast(d).reshape(one).pad(p0);
  for (int64_t i = 1; i < n; ++i) {
    Pairs p(one.size(), {0, 0});
    p[0] = {i, n - 1 - i};
    Tensor slot = ts[i].cast(d).reshape(one).pad(p);
    Shape ms(one.size(), 1);
    Pairs mp(one.size(), {0, 0});
    mp[0] = {i, n - 1 - i};
    Tensor mask = api::filled(ms, true, DType::Bool).pad(mp);
    out = prim::where(mask, slot, out);
  }
  return api::move_first_axis(out, dim);
}

Tensor Tensor::stack(const std::vector<Tensor>& others, int64_t dim) const {
  std::vector<Tensor> all{*this};
  all.insert(all.end(), others.begin(), others.end());
  return stack_all(all, dim);
}

Tensor Tensor::cat_all(const std::vector<Tensor>& ts, int64_t dim) {
  if (ts.empty()) throw ShapeError("[cat] needs at least one tensor");
  if (ts[0].ndim() == 0) throw IndexError("[cat] needs at least one dimension, got a 0-d tensor");
  dim = resolve_dim("cat", dim, ts[0].ndim());
  for (const Tensor& t : ts) {
    bool ok = t.ndim() == ts[0].ndim();
    for (int64_t i = 0; ok && i < t.ndim(); ++i) ok = i == dim || t.shape()[i] == ts[0].shape()[i];
    if (!ok)
      throw ShapeError("[cat] shapes " + shape_str(ts[0].shape()) + " and " + shape_str(t.shape()) +
                       " do not match outside dim " + std::to_string(dim));
  }
  bool same = true;
  for (const Tensor& t : ts) same = same && t.shape()[dim] == ts[0].shape()[dim];
  if (same) return stack_all(ts, dim).flatten(dim, dim + 1);
  // Unequal sizes: zero-pad each into place and add, as tinygrad does.
  std::vector<int64_t> cum{0};
  for (const Tensor& t : ts) cum.push_back(cum.back() + t.shape()[dim]);
  std::optional<Tensor> out;
  for (size_t i = 0; i < ts.size(); ++i) {
    Pairs p(ts[i].ndim(), {0, 0});
    p[dim] = {cum[i], cum.back() - cum[i + 1]};
    Tensor padded = ts[i].pad(p);
    out = out ? (ts[0].dtype() == DType::Bool ? prim::bitwise_or(*out, padded) : prim::add(*out, padded)) : padded;
  }
  return *out;
}

Tensor Tensor::cat(const std::vector<Tensor>& others, int64_t dim) const {
  std::vector<Tensor> all{*this};
  all.insert(all.end(), others.begin(), others.end());
  return cat_all(all, dim);
}

}  // namespace maroon
