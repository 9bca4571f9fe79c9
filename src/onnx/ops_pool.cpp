// Pooling: the input padded (ONNX's pads, then ceil_mode's extra end padding), cut into windows
// with the Tensor API's pool (tinygrad's _pool: views only), then reduced over the window axes:
// MAX for MaxPool; for AveragePool a left-fold sum divided by the count of the cells that count
// (all of the window with count_include_pad, else only the input's; never ceil_mode's extra).
#include <limits>
#include <optional>

#include "onnx/graph.h"
#include "onnx/pads.h"

namespace maroon::onnx {

namespace {

// The lowest value of `d`: the padding that never wins a max.
Scalar lowest(DType d) {
  if (is_float(d)) return -std::numeric_limits<double>::infinity();
  if (d == DType::Bool || is_unsigned(d)) return int64_t{0};
  return -(int64_t{1} << (bitwidth(d) - 1));
}

Shape kernel_of(const OpCtx& c, const Tensor& x) {
  std::vector<int64_t> k = c.attr_ints("kernel_shape");
  if (k.empty()) c.fail("attribute 'kernel_shape' is required");
  if (x.ndim() != static_cast<int64_t>(k.size()) + 2)
    c.fail("input " + shape_str(x.shape()) + " does not match kernel_shape " + shape_str(k));
  return k;
}

// Windows that tile the input (stride = kernel, no dilation, no padding: the common 2x2 stride 2
// pool) as one reshape and permute of the input: (N, C, out..., kernel...), the elements of
// every window in the order pool() gives them, so a reduction over them folds the same values in
// the same order (the same bits). One strided view, which the reduction reads as an affine
// leaf; pool()'s repeat-shrink-reshape stack is read through a division per element (the ONNX
// CNN's two MaxPools were a fifth of its time that way). Empty when the windows do not tile.
std::optional<Tensor> tiled_windows(const Tensor& x, const Window& w, const Shape& k) {
  const size_t n = k.size();
  Shape cut{x.shape()[0], x.shape()[1]}, split{x.shape()[0], x.shape()[1]};
  std::vector<int64_t> order{0, 1};
  for (size_t i = 0; i < n; ++i) {
    if (w.strides[i] != k[i] || w.dilations[i] != 1 || w.begin[i] || w.end[i] || w.ceil_extra[i]) return {};
    const int64_t out = x.shape()[2 + i] / k[i];
    if (out < 1) return {};
    cut.push_back(out * k[i]);  // floor mode drops the rows no window reaches
    split.insert(split.end(), {out, k[i]});
    order.push_back(2 + 2 * static_cast<int64_t>(i));
  }
  for (size_t i = 0; i < n; ++i) order.push_back(3 + 2 * static_cast<int64_t>(i));
  return x.shrink_to(cut).reshape(split).permute(order);
}

// Pads `x` by the window's pads (value `v`) and ceil_mode's extra (value `extra_v`), then cuts
// it into windows: (N, C, out..., kernel...).
Tensor windows(const Tensor& x, const Window& w, const Shape& k, Scalar v, Scalar extra_v) {
  if (std::optional<Tensor> t = tiled_windows(x, w, k)) return *t;
  Pairs p{{0, 0}, {0, 0}}, q{{0, 0}, {0, 0}};
  for (size_t i = 0; i < k.size(); ++i) {
    p.push_back({w.begin[i], w.end[i]});
    q.push_back({0, w.ceil_extra[i]});
  }
  // A padding of nothing is left out: a non-zero pad value is a WHERE over a mask, which the CPU
  // planner would write out in full.
  auto pad = [](const Tensor& t, const Pairs& ps, Scalar value) {
    for (auto [b, e] : ps)
      if (b != 0 || e != 0) return t.pad_value(ps, value);
    return t;
  };
  return pad(pad(x, p, v), q, extra_v).pool(k, w.strides, w.dilations);
}

std::vector<int64_t> window_axes(size_t n) {
  std::vector<int64_t> axes;
  for (int64_t i = -static_cast<int64_t>(n); i < 0; ++i) axes.push_back(i);
  return axes;
}

std::vector<Tensor> maxpool(const OpCtx& c) {
  const Tensor& x = c.input(0);
  if (c.node.outputs.size() > 1 && !c.node.outputs[1].empty()) c.fail("the Indices output is refused");
  if (c.attr_i("storage_order", 0) != 0) c.fail("storage_order=1 is refused");
  Shape k = kernel_of(c, x);
  Window w = window(c, x.shape(), k, true);
  Scalar low = lowest(x.dtype());
  return {windows(x, w, k, low, low).max(Axis(window_axes(k.size())))};
}

std::vector<Tensor> avgpool(const OpCtx& c) {
  const Tensor& x = c.input(0);
  if (!is_float(x.dtype())) c.fail("needs a float input");
  Shape k = kernel_of(c, x);
  Window w = window(c, x.shape(), k, true);
  const bool include = c.attr_i("count_include_pad", 0) != 0;
  std::vector<int64_t> axes = window_axes(k.size());
  Tensor sum = windows(x, w, k, 0.0, 0.0).sum(Axis(axes));
  Shape one(x.shape());
  one[0] = one[1] = 1;
  Tensor count = windows(Tensor::full(one, 1.0, x.dtype()), w, k, include ? 1.0 : 0.0, 0.0).sum(Axis(axes));
  return {sum.div(count)};
}

std::vector<Tensor> global_pool(const OpCtx& c, bool max) {
  const Tensor& x = c.input(0);
  if (x.ndim() < 3) c.fail("input " + shape_str(x.shape()) + " must be (N, C, spatial...)");
  std::vector<int64_t> axes;
  for (int64_t i = 2; i < x.ndim(); ++i) axes.push_back(i);
  return {max ? x.max(Axis(axes), true) : x.mean(Axis(axes), true)};
}

}  // namespace

void add_pool_ops(OpTable& t) {
  t["MaxPool"] = maxpool;
  t["AveragePool"] = avgpool;
  t["GlobalMaxPool"] = [](const OpCtx& c) { return global_pool(c, true); };
  t["GlobalAveragePool"] = [](const OpCtx& c) { return global_pool(c, false); };
}

}  // namespace maroon::onnx
