// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear (docs/onnx.md "Quantization" defines
// their bits): quantizing is round(x ÷ scale) half to even, plus the zero point, then Maroon's
// saturating float→integer cast (docs/spec.md: out-of-range values and ±inf clamp, NaN → 0).
// The add is in the scale's float type: exact wherever the result is inside the target's range
// (|integers| ≤ 256 are exact in every float dtype), and monotonic rounding keeps every other
// sum outside it, so the cast saturates exactly as saturate(round(x ÷ scale) + zero_point).
#include "onnx/graph.h"

namespace maroon::onnx {

namespace {

// A scalar or per-axis (1-D, x.shape[axis] long) parameter, shaped to broadcast against x.
Tensor per_axis(const OpCtx& c, const Tensor& p, const Tensor& x, const char* what) {
  if (p.numel() == 1 && p.ndim() <= 1) return p.reshape({});
  if (p.ndim() != 1) c.fail(std::string(what) + " must be a scalar or 1-D, got " + shape_str(p.shape()));
  const int64_t axis = c.axis(c.attr_i("axis", 1), x.ndim());
  if (p.shape()[0] != x.shape()[axis])
    c.fail(std::string(what) + " has " + std::to_string(p.shape()[0]) + " values for axis " + std::to_string(axis) +
           " of size " + std::to_string(x.shape()[axis]));
  Shape s(static_cast<size_t>(x.ndim()), 1);
  s[axis] = -1;
  return p.reshape(s);
}

Tensor scale_of(const OpCtx& c, const Tensor& x) {
  const Tensor& s = c.input(1);
  if (!is_float(s.dtype())) c.fail("the scale must be float, got " + std::string(dtype_name(s.dtype())));
  return per_axis(c, s, x, "the scale");
}

bool is_8bit(DType d) { return d == DType::UInt8 || d == DType::Int8; }

Tensor quantize(const Tensor& x, const Tensor& scale, const Tensor& zp) {
  return x.cast(scale.dtype()).div(scale).round().add(zp.cast(scale.dtype())).cast(zp.dtype());
}

std::vector<Tensor> quantize_linear(const OpCtx& c) {
  const Tensor& x = c.input(0);
  if (!is_float(x.dtype()) && x.dtype() != DType::Int32) c.fail("x must be float or int32, got " + std::string(dtype_name(x.dtype())));
  if (c.attr_i("saturate", 1) != 1) c.fail("saturate=0 is refused (float8 only)");
  Tensor scale = scale_of(c, x);
  Tensor zp = c.has(2) ? c.input(2) : Tensor::zeros({}, DType::UInt8);
  if (!is_8bit(zp.dtype())) c.fail("the zero point must be uint8 or int8, got " + std::string(dtype_name(zp.dtype())));
  return {quantize(x, scale, per_axis(c, zp, x, "the zero point"))};
}

// (x − zero_point) exactly in int64, cast to the scale's type (one rounding, none for 8-bit
// inputs), times the scale (one rounding).
std::vector<Tensor> dequantize_linear(const OpCtx& c) {
  const Tensor& x = c.input(0);
  if (!is_8bit(x.dtype()) && x.dtype() != DType::Int32) c.fail("x must be uint8, int8 or int32, got " + std::string(dtype_name(x.dtype())));
  Tensor scale = scale_of(c, x);
  Tensor d = x.cast(DType::Int64);
  if (c.has(2)) {
    const Tensor& zp = c.input(2);
    if (zp.dtype() != x.dtype()) c.fail("the zero point must have x's dtype " + std::string(dtype_name(x.dtype())));
    d = d.sub(per_axis(c, zp, x, "the zero point").cast(DType::Int64));
  }
  return {d.cast(scale.dtype()).mul(scale)};
}

// ONNX's function body: the range [min(x, 0), max(x, 0)] mapped onto [0, 255].
std::vector<Tensor> dynamic_quantize_linear(const OpCtx& c) {
  const Tensor& x = c.input(0);
  if (x.dtype() != DType::Float32) c.fail("x must be float32, got " + std::string(dtype_name(x.dtype())));
  auto k = [](double v) { return Tensor::full({}, v, DType::Float32); };
  Tensor lo = x.min().minimum(k(0.0)), hi = x.max().maximum(k(0.0));
  Tensor scale = hi.sub(lo).div(k(255.0));
  Tensor zp = k(0.0).sub(lo.div(scale)).maximum(k(0.0)).minimum(k(255.0)).round().cast(DType::UInt8);
  return {quantize(x, scale, zp), scale, zp};
}

}  // namespace

void add_quantize_ops(OpTable& t) {
  t["QuantizeLinear"] = quantize_linear;
  t["DequantizeLinear"] = dequantize_linear;
  t["DynamicQuantizeLinear"] = dynamic_quantize_linear;
}

}  // namespace maroon::onnx
