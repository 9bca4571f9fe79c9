// HannWindow, HammingWindow, BlackmanWindow: ONNX's function bodies (opset 17) as Tensor API
// calls, in float32 with the body's constants (float32 values of 2π and of the coefficients),
// then cast to output_datatype. So the operator and its "_expanded" form give the same bits:
//   N = periodic ? size : size − 1      step = τ ÷ N      a = arange(size)·step
//   y = (A0 − A1·cos(a)) + A2·cos(a·2)
#include "onnx/graph.h"

namespace maroon::onnx {

namespace {

std::vector<Tensor> window(const OpCtx& c, float a0, float a1, float a2) {
  const Tensor& size_in = c.input(0);
  if (!is_int(size_in.dtype()) || size_in.numel() != 1) c.fail("size must be one integer, got " + shape_str(size_in.shape()));
  const int64_t size = size_in.cast(DType::Int64).to_vector<int64_t>()[0];
  if (size < 0 || size > (int64_t{1} << 24)) c.fail("size " + std::to_string(size) + " is outside [0, 2^24]");
  const DType out = dtype_from_onnx(static_cast<int32_t>(c.attr_i("output_datatype", 1)), c.node.label());
  const bool periodic = c.attr_i("periodic", 1) != 0;
  const DType f = DType::Float32;
  auto k = [&](double v) { return Tensor::full({}, v, f); };
  // N as the body computes it (size·p + (size − 1)·(1 − p)): exact small integers either way.
  Tensor n = k(static_cast<double>(periodic ? size : size - 1));
  Tensor step = k(6.2831854820251465).div(n);
  Tensor a = Tensor::arange(size).cast(f).mul(step);
  Tensor y = k(a0).sub(k(a1).mul(a.cos())).add(k(a2).mul(a.mul(k(2.0)).cos()));
  return {y.cast(out)};
}

}  // namespace

void add_window_ops(OpTable& t) {
  t["HannWindow"] = [](const OpCtx& c) { return window(c, 0.5f, 0.5f, 0.0f); };
  t["HammingWindow"] = [](const OpCtx& c) { return window(c, 0.54347825050354f, 0.45652174949645996f, 0.0f); };
  t["BlackmanWindow"] = [](const OpCtx& c) { return window(c, 0.41999998688697815f, 0.5f, 0.07999999821186066f); };
}

}  // namespace maroon::onnx
