// Linear algebra, convolution and the normalizations, as compositions of the Tensor API.
// Sums are Maroon's: each a left fold in index order (docs/spec.md), never fused unless the
// caller's FusedScope says so; an ONNX model's bits are thus those of the unfused composition.
#include "onnx/graph.h"
#include "onnx/pads.h"

namespace maroon::onnx {

namespace {

Tensor float_input(const OpCtx& c, size_t i) {
  const Tensor& x = c.input(i);
  if (!is_float(x.dtype())) c.fail("input " + std::to_string(i) + " must be float, got " + std::string(dtype_name(x.dtype())));
  return x;
}

// (1, C, 1, ..., 1) for a per-channel vector against an input of `rank`.
Shape channel_shape(int64_t rank) {
  Shape s(static_cast<size_t>(rank), 1);
  s[1] = -1;
  return s;
}

std::vector<Tensor> gemm(const OpCtx& c) {
  Tensor a = c.input(0), b = c.input(1);
  if (a.ndim() != 2 || b.ndim() != 2) c.fail("A and B must be 2-D, got " + shape_str(a.shape()) + " and " + shape_str(b.shape()));
  if (c.attr_i("transA", 0)) a = a.transpose(0, 1);
  if (c.attr_i("transB", 0)) b = b.transpose(0, 1);
  Tensor y = a.matmul(b);
  double alpha = c.attr_f("alpha", 1.0), beta = c.attr_f("beta", 1.0);
  if (alpha != 1.0) y = y.mul(Tensor::full({}, alpha, y.dtype()));
  if (c.has(2)) {
    Tensor cc = c.input(2);
    if (beta != 1.0) cc = cc.mul(Tensor::full({}, beta, cc.dtype()));
    y = y.add(cc);
  }
  return {y};
}

// Softmax, LogSoftmax, Hardmax: before opset 13 the input is coerced to 2-D at `axis` and the
// operator runs over the second axis; from 13 it runs over `axis` alone.
std::vector<Tensor> softmax_like(const OpCtx& c, int kind) {
  Tensor x = float_input(c, 0);
  const Shape shape = x.shape();
  if (x.ndim() == 0) c.fail("needs an input of rank 1 or more");
  int64_t axis = c.axis(c.attr_i("axis", c.opset < 13 ? 1 : -1), x.ndim());
  if (c.opset < 13) {
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < x.ndim(); ++i) (i < axis ? outer : inner) *= shape[i];
    x = x.reshape({outer, inner});
    axis = 1;
  }
  if (kind == 0) return {x.softmax(axis).reshape(shape)};
  if (kind == 1) return {x.log_softmax(axis).reshape(shape)};
  // Hardmax: one at the first maximum.
  Tensor idx = x.argmax(axis, true);
  Shape s(static_cast<size_t>(x.ndim()), 1);
  s[axis] = x.shape()[axis];
  return {idx.eq(Tensor::arange(x.shape()[axis]).cast(idx.dtype()).reshape(s)).cast(x.dtype()).reshape(shape)};
}

std::vector<Tensor> conv(const OpCtx& c) {
  Tensor x = c.input(0), w = c.input(1);
  if (x.ndim() < 3 || w.ndim() != x.ndim())
    c.fail("X " + shape_str(x.shape()) + " and W " + shape_str(w.shape()) + " must both be (N, C, spatial...)");
  Shape kernel(w.shape().begin() + 2, w.shape().end());
  if (c.has_attr("kernel_shape") && c.attr_ints("kernel_shape") != std::vector<int64_t>(kernel.begin(), kernel.end()))
    c.fail("kernel_shape " + shape_str(c.attr_ints("kernel_shape")) + " does not match W " + shape_str(w.shape()));
  Window win = window(c, x.shape(), kernel, false);
  std::optional<Tensor> bias;
  if (c.has(2)) bias = c.input(2);
  // The padded input is written out first (one copy of the input), so the convolution reads it
  // through one strided view and the CPU planner runs it as a matmul in place; through a padded
  // view it would gather every window (im2col) element by element. Same values (the pad is +0
  // either way), same products summed in the same order: the same bits.
  Pairs pads{{0, 0}, {0, 0}};
  bool padded = false;
  for (size_t i = 0; i < kernel.size(); ++i) {
    pads.push_back({win.begin[i], win.end[i]});
    padded = padded || win.begin[i] != 0 || win.end[i] != 0;
  }
  if (padded) x = x.pad(pads).mul(Tensor::full({}, 1.0, x.dtype())).realize();
  return {x.conv2d(w, bias, c.attr_i("group", 1), win.strides, win.dilations, {0}, std::nullopt)};
}

std::vector<Tensor> conv_transpose(const OpCtx& c) {
  Tensor x = c.input(0), w = c.input(1);
  if (x.ndim() < 3 || w.ndim() != x.ndim())
    c.fail("X " + shape_str(x.shape()) + " and W " + shape_str(w.shape()) + " must both be (N, C, spatial...)");
  const size_t n = x.ndim() - 2;
  Shape kernel(w.shape().begin() + 2, w.shape().end());
  std::vector<int64_t> strides = c.attr_ints("strides", std::vector<int64_t>(n, 1));
  std::vector<int64_t> dil = c.attr_ints("dilations", std::vector<int64_t>(n, 1));
  std::vector<int64_t> outpad = c.attr_ints("output_padding", std::vector<int64_t>(n, 0));
  std::vector<int64_t> pads = c.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
  if (strides.size() != n || dil.size() != n || outpad.size() != n || pads.size() != 2 * n)
    c.fail("strides, dilations, output_padding and pads must have one entry per spatial axis (pads two)");
  std::string autopad = c.attr_s("auto_pad", "NOTSET");
  std::vector<int64_t> out_shape = c.attr_ints("output_shape");
  if (!out_shape.empty() || autopad == "SAME_UPPER" || autopad == "SAME_LOWER") {
    if (!out_shape.empty() && out_shape.size() != n) c.fail("output_shape must have one entry per spatial axis");
    for (size_t i = 0; i < n; ++i) {
      int64_t in = x.shape()[2 + i];
      int64_t want = out_shape.empty() ? in * strides[i] : out_shape[i];
      int64_t total = strides[i] * (in - 1) + outpad[i] + (kernel[i] - 1) * dil[i] + 1 - want;
      if (total < 0) {  // the output grows at its end (ONNX's reference adds output padding)
        outpad[i] -= total;
        total = 0;
      }
      int64_t small = total / 2, big = total - small;
      bool lower = autopad == "SAME_LOWER";
      pads[i] = lower ? big : small;
      pads[n + i] = lower ? small : big;
    }
  } else if (autopad == "VALID") {
    pads.assign(2 * n, 0);
  } else if (autopad != "NOTSET") {
    c.fail("auto_pad '" + autopad + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
  }
  Window win{strides, dil, {}, {}, {}};  // ceil_extra empty: no ceil_mode padding
  for (size_t i = 0; i < n; ++i) {
    win.begin.push_back(pads[i]);
    win.end.push_back(pads[n + i]);
  }
  std::optional<Tensor> bias;
  if (c.has(2)) bias = c.input(2);
  return {x.conv_transpose2d(w, bias, c.attr_i("group", 1), strides, dil, tinygrad_pads(win), outpad)};
}

std::vector<Tensor> batchnorm(const OpCtx& c) {
  if (c.attr_i("training_mode", 0)) c.fail("training_mode=1 is refused (inference only)");
  if (c.node.outputs.size() > 1) c.fail("the running mean and variance outputs (training) are refused");
  Tensor x = float_input(c, 0);
  Shape r = channel_shape(x.ndim());
  Tensor eps = Tensor::full({}, c.attr_f("epsilon", 1e-5), x.dtype());
  Tensor invstd = c.input(4).add(eps).sqrt().reciprocal();
  // (x - mean) * (scale * invstd) + B, the usual inference folding.
  return {x.sub(c.input(3).reshape(r)).mul(c.input(1).mul(invstd).reshape(r)).add(c.input(2).reshape(r))};
}

std::vector<Tensor> instancenorm(const OpCtx& c) {
  Tensor x = float_input(c, 0);
  std::vector<int64_t> axes;
  for (int64_t i = 2; i < x.ndim(); ++i) axes.push_back(i);
  Shape r = channel_shape(x.ndim());
  Tensor mean = x.mean(Axis(axes), true);
  Tensor d = x.sub(mean);
  Tensor var = d.mul(d).mean(Axis(axes), true);
  Tensor invstd = var.add(Tensor::full({}, c.attr_f("epsilon", 1e-5), x.dtype())).sqrt().reciprocal();
  return {d.mul(invstd).mul(c.input(1).reshape(r)).add(c.input(2).reshape(r))};
}

std::vector<Tensor> layernorm(const OpCtx& c) {
  Tensor x = float_input(c, 0);
  int64_t axis = c.axis(c.attr_i("axis", -1), x.ndim());
  std::vector<int64_t> axes;
  for (int64_t i = axis; i < x.ndim(); ++i) axes.push_back(i);
  DType stash = dtype_from_onnx(static_cast<int32_t>(c.attr_i("stash_type", 1)), c.node.label());
  Tensor xs = x.cast(stash);
  Tensor mean = xs.mean(Axis(axes), true);
  Tensor d = xs.sub(mean);
  Tensor var = d.mul(d).mean(Axis(axes), true);
  Tensor invstd = var.add(Tensor::full({}, c.attr_f("epsilon", 1e-5), stash)).sqrt().reciprocal();
  Tensor y = d.mul(invstd).cast(x.dtype()).mul(c.input(1));
  if (c.has(2)) y = y.add(c.input(2));
  return {y, mean, invstd};
}

std::vector<Tensor> dropout(const OpCtx& c) {
  // Inference: the identity. A training_mode input that is true would need random bits ONNX does
  // not define, so it is refused.
  if (c.has(2) && c.scalar(2) != 0) c.fail("training_mode=true is refused (inference only)");
  const Tensor& x = c.input(0);
  return {x, Tensor::full(x.shape(), true, DType::Bool)};
}

}  // namespace

void add_nn_ops(OpTable& t) {
  t["MatMul"] = [](const OpCtx& c) { return std::vector<Tensor>{c.input(0).matmul(c.input(1))}; };
  t["Gemm"] = gemm;
  t["Softmax"] = [](const OpCtx& c) { return softmax_like(c, 0); };
  t["LogSoftmax"] = [](const OpCtx& c) { return softmax_like(c, 1); };
  t["Hardmax"] = [](const OpCtx& c) { return softmax_like(c, 2); };
  t["Conv"] = conv;
  t["ConvTranspose"] = conv_transpose;
  t["BatchNormalization"] = batchnorm;
  t["InstanceNormalization"] = instancenorm;
  t["LayerNormalization"] = layernorm;
  t["Dropout"] = dropout;
  t["Einsum"] = [](const OpCtx& c) {
    std::vector<Tensor> ops;
    for (size_t i = 0; i < c.count(); ++i) ops.push_back(c.input(i));
    return std::vector<Tensor>{Tensor::einsum(c.attr_s("equation", ""), ops)};
  };
}

}  // namespace maroon::onnx
