// QLinearMatMul, QLinearConv: the exact int32 MatMulInteger / ConvInteger of the zero-point-
// shifted operands (ops_misc.cpp; QLinearConv's int32 bias added exactly), then requantized
// (docs/onnx.md "Quantization"): cast(round(float(acc) · ((a_scale · b_scale) ÷ y_scale)) +
// y_zero_point, y_zero_point's dtype), the cast saturating. float(acc) rounds once where
// |acc| > 2^24; every other step is one Tensor API op rounded once (÷ is Maroon's division).
#include "onnx/graph.h"

namespace maroon::onnx {

namespace {

// Runs table operator `op` on the inputs `idx` of `c` (same node, so the same attributes).
Tensor delegate(const OpCtx& c, const char* op, const std::vector<size_t>& idx) {
  OpCtx sub{c.node, c.opset, {}};
  for (size_t i : idx) sub.in.push_back(c.has(i) ? c.in[i] : std::nullopt);
  return op_table().at(op)(sub)[0];
}

Tensor float_scale(const OpCtx& c, size_t i) {
  const Tensor& s = c.input(i);
  if (s.dtype() != DType::Float32) c.fail("input " + std::to_string(i) + " (a scale) must be float32");
  return s;
}

Tensor requantize(const OpCtx& c, const Tensor& acc, const Tensor& multiplier) {
  const Tensor& zp = c.input(7);
  if (zp.dtype() != DType::UInt8 && zp.dtype() != DType::Int8) c.fail("y_zero_point must be uint8 or int8");
  if (zp.numel() != 1) c.fail("y_zero_point must hold one value");
  return acc.cast(DType::Float32).mul(multiplier).round().add(zp.reshape({}).cast(DType::Float32)).cast(zp.dtype());
}

Tensor scalar_scale(const OpCtx& c, size_t i) {
  Tensor s = float_scale(c, i);
  if (s.numel() != 1) c.fail("input " + std::to_string(i) + " (a scale) must hold one value, got " + shape_str(s.shape()));
  return s.reshape({});
}

std::vector<Tensor> qlinear_matmul(const OpCtx& c) {
  Tensor acc = delegate(c, "MatMulInteger", {0, 3, 2, 5});
  Tensor bs = float_scale(c, 4);  // a scalar, or per column of B (broadcast on the last axis)
  if (bs.ndim() > 1) c.fail("b_scale must be a scalar or 1-D");
  Tensor m = scalar_scale(c, 1).mul(bs.numel() == 1 ? bs.reshape({}) : bs).div(scalar_scale(c, 6));
  return {requantize(c, acc, m)};
}

std::vector<Tensor> qlinear_conv(const OpCtx& c) {
  Tensor acc = delegate(c, "ConvInteger", {0, 3, 2, 5});
  Shape per_channel(static_cast<size_t>(acc.ndim()), 1);
  per_channel[1] = -1;
  if (c.has(8)) {
    const Tensor& b = c.input(8);
    if (b.dtype() != DType::Int32 || b.ndim() != 1 || b.shape()[0] != acc.shape()[1])
      c.fail("B must be int32 with one value per output channel, got " + shape_str(b.shape()));
    acc = acc.add(b.reshape(per_channel));
  }
  Tensor ws = float_scale(c, 4);
  if (ws.numel() != 1 && (ws.ndim() != 1 || ws.shape()[0] != acc.shape()[1]))
    c.fail("w_scale must be a scalar or one value per output channel, got " + shape_str(ws.shape()));
  Tensor m = scalar_scale(c, 1).mul(ws.numel() == 1 ? ws.reshape({}) : ws.reshape(per_channel)).div(scalar_scale(c, 6));
  return {requantize(c, acc, m)};
}

}  // namespace

void add_qlinear_ops(OpTable& t) {
  t["QLinearMatMul"] = qlinear_matmul;
  t["QLinearConv"] = qlinear_conv;
}

}  // namespace maroon::onnx
