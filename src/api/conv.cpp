// conv2d, conv_transpose2d, pooling and the normalizations (tinygrad's mixin/op.py).
#include <algorithm>

#include "api/internal.h"
#include "maroon/tensor.h"
#include "maroon/primitives.h"

namespace maroon {

namespace {

// tinygrad's resolve_pool_pads: flat (left, right, top, bottom, ...) in reverse axis order.
std::vector<int64_t> resolve_pool_pads(const std::vector<int64_t>& padding, size_t dims) {
  if (padding.size() == 1) return std::vector<int64_t>(2 * dims, padding[0]);
  if (padding.size() == dims) {
    std::vector<int64_t> out;
    for (size_t i = dims; i-- > 0;) out.insert(out.end(), {padding[i], padding[i]});
    return out;
  }
  if (padding.size() == 2 * dims) return padding;
  throw ShapeError("[conv2d] padding must have 1, " + std::to_string(dims) + " or " + std::to_string(2 * dims) +
                   " entries, got " + std::to_string(padding.size()));
}

// flat_to_grouped: reverse pairs, so the first pair pads the first spatial axis.
Pairs flat_to_grouped(const std::vector<int64_t>& flat) {
  Pairs out;
  for (size_t i = flat.size(); i >= 2; i -= 2) out.push_back({flat[i - 2], flat[i - 1]});
  return out;
}

std::vector<int64_t> per_axis(const std::vector<int64_t>& v, size_t n) {
  return v.size() == 1 ? std::vector<int64_t>(n, v[0]) : v;
}

Pairs spatial_pads(const char* op, const Shape& shape, const Pairs& grouped) {
  const int64_t ndim = static_cast<int64_t>(shape.size());
  if (ndim < static_cast<int64_t>(grouped.size()))
    throw ShapeError(std::string("[") + op + "] input " + shape_str(shape) + " has fewer axes than the " +
                     std::to_string(grouped.size()) + " the kernel pools");
  Pairs p(ndim - grouped.size(), {0, 0});
  p.insert(p.end(), grouped.begin(), grouped.end());
  return p;
}

}  // namespace

Tensor Tensor::conv2d(const Tensor& weight, std::optional<Tensor> bias, int64_t groups,
                      std::vector<int64_t> stride, std::vector<int64_t> dilation,
                      std::vector<int64_t> padding, std::optional<bool> fused) const {
  if (ndim() < 3 || ndim() != weight.ndim())
    throw ShapeError("[conv2d] input " + shape_str(shape()) + " does not match weight " + shape_str(weight.shape()));
  if (groups < 1) throw ShapeError("[conv2d] groups must be positive, got " + std::to_string(groups));
  int64_t bs = shape()[0], cin_ = shape()[1], cout = weight.shape()[0], cin = weight.shape()[1];
  Shape HW(weight.shape().begin() + 2, weight.shape().end());
  if (groups * cin != cin_ || cout % groups != 0)
    throw ShapeError("[conv2d] input " + shape_str(shape()) + " does not match weight " + shape_str(weight.shape()) +
                     " with groups=" + std::to_string(groups));
  std::vector<int64_t> pads = resolve_pool_pads(padding, HW.size());
  Tensor x = api::pad_constant(*this, spatial_pads("conv2d", shape(), flat_to_grouped(pads)), 0.0)
                 .pool(HW, per_axis(stride, HW.size()), per_axis(dilation, HW.size()));
  int64_t rcout = cout / groups;
  Shape oyx(x.shape().begin() + 2, x.shape().end() - HW.size());
  const int64_t no = static_cast<int64_t>(oyx.size()), nk = static_cast<int64_t>(HW.size());
  Shape r1{bs, groups, cin, 1}, e1{bs, groups, cin, rcout};
  r1.insert(r1.end(), oyx.begin(), oyx.end());
  e1.insert(e1.end(), oyx.begin(), oyx.end());
  r1.insert(r1.end(), HW.begin(), HW.end());
  e1.insert(e1.end(), HW.begin(), HW.end());
  std::vector<int64_t> perm{0, 1, 3};
  for (int64_t i = 0; i < no; ++i) perm.push_back(4 + i);
  perm.push_back(2);
  for (int64_t i = 0; i < nk; ++i) perm.push_back(4 + no + i);
  const bool fuse = api::use_fused(fused, concrete(least_upper_dtype(x.dtype(), weight.dtype())));
  // Fused, x is not expanded over cout: REDUCE_MULACC broadcasts it, and its gradient then sums
  // over cout as part of one fused reduction rather than through EXPAND's separate sum.
  x = fuse ? x.reshape(r1).permute(perm) : x.reshape(r1).expand(e1).permute(perm);
  Shape wr{1, groups, rcout};
  wr.insert(wr.end(), no, 1);
  wr.push_back(cin);
  wr.insert(wr.end(), HW.begin(), HW.end());
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < 1 + no; ++i) axes.push_back(-1 - i);
  Shape out{bs, cout};
  out.insert(out.end(), oyx.begin(), oyx.end());
  const DType res = concrete(least_upper_dtype(x.dtype(), weight.dtype()));
  Tensor ret = fuse ? prim::fused_reduce(x.cast(sum_acc_dtype(res)), weight.reshape(wr).cast(sum_acc_dtype(res)), axes)
                          .reshape(out).cast(res)
                    : (x * weight.reshape(wr)).sum(Axis(axes), true).reshape(out);
  if (!bias) return ret;
  Shape bsh{1, -1};
  bsh.insert(bsh.end(), nk, 1);
  return ret.add(bias->reshape(bsh));
}

Tensor Tensor::conv_transpose2d(const Tensor& weight, std::optional<Tensor> bias, int64_t groups,
                                std::vector<int64_t> stride, std::vector<int64_t> dilation,
                                std::vector<int64_t> padding, std::vector<int64_t> output_padding) const {
  if (groups < 1) throw ShapeError("[conv_transpose2d] groups must be positive, got " + std::to_string(groups));
  for (const auto& v : {stride, dilation})
    for (int64_t s : v)
      if (s < 1)
        throw ShapeError("[conv_transpose2d] stride and dilation must be positive, got stride " +
                         shape_str(stride) + " dilation " + shape_str(dilation));
  Shape HW(weight.shape().begin() + 2, weight.shape().end());
  const size_t nk = HW.size();
  std::vector<int64_t> flips;
  for (int64_t i = 3; i <= weight.ndim(); ++i) flips.push_back(i);
  Tensor w = weight.unflatten(0, {groups, -1}).transpose(1, 2).flip(flips);
  Pairs pads = flat_to_grouped(resolve_pool_pads(padding, nk));
  stride = per_axis(stride, nk);
  dilation = per_axis(dilation, nk);
  output_padding = per_axis(output_padding, nk);
  Tensor x = *this;
  bool strided = false;
  for (int64_t s : stride) strided = strided || s > 1;
  if (strided) {
    // Interleave stride-1 zeros between the input pixels.
    Shape r{x.shape()[0], x.shape()[1]};
    for (size_t i = 0; i < nk; ++i) r.insert(r.end(), {x.shape()[2 + i], 1});
    x = x.reshape(r);
    Pairs p(x.ndim(), {0, 0});
    for (size_t i = 0; i < nk; ++i) p[3 + 2 * i] = {0, stride[i] - 1};
    x = x.pad(p);
    Shape r2{x.shape()[0], x.shape()[1]};
    for (size_t i = 0; i < nk; ++i) r2.push_back(x.shape()[2 + 2 * i] * stride[i]);
    x = x.reshape(r2);
    Shape s2{-1, -1};
    for (size_t i = 0; i < nk; ++i) s2.push_back(x.shape()[2 + i] - (stride[i] - 1));
    x = x.shrink_to(s2);
  }
  std::vector<int64_t> newpad;
  for (size_t i = nk; i-- > 0;) {
    int64_t k = HW[i], d = dilation[i];
    newpad.push_back((k - 1) * d - pads[i].first);
    newpad.push_back((k - 1) * d - pads[i].second + output_padding[i]);
  }
  return x.conv2d(w.flatten(0, 1), bias, groups, {1}, dilation, newpad);
}

Tensor Tensor::max_pool2d(std::vector<int64_t> k, std::vector<int64_t> stride,
                          std::vector<int64_t> dilation, std::vector<int64_t> padding) const {
  k = per_axis(k, 2);
  if (stride.empty()) stride = k;
  std::vector<int64_t> pads = resolve_pool_pads(padding, k.size());
  Tensor pooled = api::pad_constant(*this, spatial_pads("max_pool2d", shape(), flat_to_grouped(pads)), api::dtype_min(dtype()))
                      .pool(k, per_axis(stride, k.size()), per_axis(dilation, k.size()));
  std::vector<int64_t> axes;
  for (int64_t i = -static_cast<int64_t>(k.size()); i < 0; ++i) axes.push_back(i);
  return pooled.max(Axis(axes));
}

Tensor Tensor::avg_pool2d(std::vector<int64_t> k, std::vector<int64_t> stride,
                          std::vector<int64_t> dilation, std::vector<int64_t> padding,
                          bool count_include_pad) const {
  k = per_axis(k, 2);
  if (stride.empty()) stride = k;
  std::vector<int64_t> pads = resolve_pool_pads(padding, k.size());
  std::vector<int64_t> axes;
  for (int64_t i = -static_cast<int64_t>(k.size()); i < 0; ++i) axes.push_back(i);
  auto pool = [&](const Tensor& x) {
    return api::pad_constant(x, spatial_pads("avg_pool2d", x.shape(), flat_to_grouped(pads)), 0.0)
        .pool(k, per_axis(stride, k.size()), per_axis(dilation, k.size()));
  };
  if (!count_include_pad) return pool(*this).sum(Axis(axes)).div(pool(const_like(1)).sum(Axis(axes)));
  return pool(*this).mean(Axis(axes));
}

Tensor Tensor::batchnorm(std::optional<Tensor> weight, std::optional<Tensor> bias, const Tensor& mean,
                         const Tensor& invstd, Axis axis) const {
  std::vector<int64_t> ax = api::resolve_axes("batchnorm", axis, ndim());
  Shape s;
  for (int64_t i = 0; i < ndim(); ++i)
    s.push_back(std::binary_search(ax.begin(), ax.end(), i) ? shape()[i] : 1);
  Tensor x = sub(mean.reshape(s));
  if (weight) x = x.mul(weight->reshape(s));
  Tensor ret = x.mul(invstd.ndim() == static_cast<int64_t>(ax.size()) ? invstd.reshape(s) : invstd);
  return bias ? ret.add(bias->reshape(s)) : ret;
}

Tensor Tensor::layernorm(Axis axis, double eps) const {
  Tensor y = sub(mean(axis, true));
  return y.mul(y.mul(y).mean(axis, true).add(eps).rsqrt());
}



std::pair<Tensor, Tensor> Tensor::max_pool2d_with_indices(std::vector<int64_t> k, std::vector<int64_t> stride,
                                                          std::vector<int64_t> dilation,
                                                          std::vector<int64_t> padding) const {
  k = per_axis(k, 2);
  if (stride.empty()) stride = k;
  std::vector<int64_t> pads = resolve_pool_pads(padding, k.size());
  Pairs sp = spatial_pads("max_pool2d", shape(), flat_to_grouped(pads));
  Tensor pooled = api::pad_constant(*this, sp, api::dtype_min(dtype()))
                      .pool(k, per_axis(stride, k.size()), per_axis(dilation, k.size()));
  std::vector<int64_t> axes;
  for (int64_t i = -static_cast<int64_t>(k.size()); i < 0; ++i) axes.push_back(i);
  Shape spatial(shape().end() - k.size(), shape().end());
  int64_t sz = 1;
  for (int64_t d : spatial) sz *= d;
  Tensor idx = arange(sz, 0, -1).reshape(spatial);
  Tensor m = pooled.eq(pooled.max(Axis(axes), true));
  Tensor ip = api::pad_constant(idx, spatial_pads("max_pool2d", idx.shape(), flat_to_grouped(pads)), api::dtype_min(idx.dtype()))
                  .pool(k, per_axis(stride, k.size()), per_axis(dilation, k.size()));
  Tensor sel = m * ip;
  return {pooled.max(Axis(axes)), prim::add(sel.max(Axis(axes)).neg(), sz)};
}

Tensor Tensor::max_unpool2d(const Tensor& indices, std::vector<int64_t> k, std::vector<int64_t> stride,
                            std::vector<int64_t> dilation, std::vector<int64_t> padding,
                            std::optional<Shape> output_size) const {
  if (ndim() < 2 || ndim() < static_cast<int64_t>(k.size()))
    throw ShapeError("[max_unpool2d] input " + shape_str(shape()) + " has fewer axes than (batch, channel) and the kernel " +
                     shape_str(k));
  int64_t bs = shape()[0], c = shape()[1];
  Shape spatial(shape().begin() + 2, shape().end());
  const size_t n = spatial.size();
  if (output_size && output_size->size() < n)
    throw ShapeError("[max_unpool2d] output_size " + shape_str(*output_size) + " has fewer axes than the input's " +
                     std::to_string(n) + " spatial axes");
  Shape out;
  if (!output_size) {
    std::vector<int64_t> k_ = per_axis(k, n), d_ = per_axis(dilation, n), s_ = per_axis(stride.empty() ? k : stride, n);
    if (k_.size() != n || d_.size() != n || s_.size() != n)
      throw ShapeError("[max_unpool2d] kernel " + shape_str(k) + ", stride and dilation need 1 or " + std::to_string(n) +
                       " entries for input " + shape_str(shape()));
    Pairs p_ = flat_to_grouped(resolve_pool_pads(padding, n));
    for (size_t i = 0; i < n; ++i)
      out.push_back((spatial[i] - 1) * s_[i] - (p_[i].first + p_[i].second) + (d_[i] * (k_[i] - 1) + 1));
  } else {
    out.assign(output_size->end() - n, output_size->end());
  }
  int64_t total = 1;
  for (int64_t d : out) total *= d;
  Tensor ret = indices.reshape({bs, c, 1, -1}).one_hot_along_dim(total, 2).where(reshape({bs, c, 1, -1}), 0).sum(3);
  Shape fs{bs, c};
  fs.insert(fs.end(), out.begin(), out.end());
  return ret.reshape(fs);
}

}  // namespace maroon
