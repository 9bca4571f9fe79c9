// Resize (and the older Upsample), one axis at a time. For each resized axis the host computes,
// per output position, the source coordinate (coordinate_transformation_mode) and from it the
// taps: one index for nearest, two (linear) or four (cubic) indices with weights, indices clamped
// to the edge as ONNX's reference pads. The tensor is then
//   sum over taps j, in order, of gather(x, axis, index_j) * weight_j   (weights rounded to x's dtype)
// a left fold with each product rounded, so the bits are defined; ONNX's reference sums in
// double, so agreement is within its tolerance. Linear and cubic are separable, as ONNX defines
// them (n-linear / n-cubic); nearest needs no arithmetic at all.
#include <cmath>

#include "onnx/graph.h"

namespace maroon::onnx {

namespace {

struct ResizeMode {
  std::string mode = "nearest", coord = "half_pixel", nearest = "round_prefer_floor";
  double cubic_a = -0.75, extrapolation = 0;
  bool exclude_outside = false;
};

// The source coordinate of output position `o` on an axis of `in` elements resized to length
// `out`: the output size when sizes are given, else in * scale unfloored (as ONNX's reference).
double source(const OpCtx& c, const ResizeMode& m, int64_t o, int64_t in, double out, double scale, double r0,
              double r1) {
  const double x = static_cast<double>(o);
  const std::string& t = m.coord;
  if (t == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (t == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0;
  if (t == "align_corners") return out == 1 ? 0 : x * static_cast<double>(in - 1) / (out - 1);
  if (t == "asymmetric") return x / scale;
  if (t == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (t == "tf_crop_and_resize")
    return out > 1 ? r0 * static_cast<double>(in - 1) + x * (r1 - r0) * static_cast<double>(in - 1) / (out - 1)
                   : 0.5 * (r0 + r1) * static_cast<double>(in - 1);
  c.fail("coordinate_transformation_mode '" + t + "' is not supported");
}

int64_t nearest_index(const ResizeMode& m, double x) {
  double f = std::floor(x);
  if (m.nearest == "floor") return static_cast<int64_t>(f);
  if (m.nearest == "ceil") return static_cast<int64_t>(std::ceil(x));
  if (x - f == 0.5) return static_cast<int64_t>(m.nearest == "round_prefer_ceil" ? f + 1 : f);
  return static_cast<int64_t>(std::round(x));
}

std::vector<double> cubic_coeffs(double r, double a) {
  auto far = [a](double t) { return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a; };
  auto near = [a](double t) { return ((a + 2) * t - (a + 3)) * t * t + 1; };
  return {far(r + 1), near(r), near(1 - r), far(2 - r)};
}

// Resizes `x` along `axis` to `out` elements.
Tensor resize_axis(const OpCtx& c, const ResizeMode& m, const Tensor& x, int64_t axis, int64_t out, double len,
                   double scale, double r0, double r1) {
  const int64_t in = x.shape()[axis];
  const int taps = m.mode == "nearest" ? 1 : m.mode == "linear" ? 2 : 4;
  std::vector<std::vector<int64_t>> idx(taps, std::vector<int64_t>(out));
  std::vector<std::vector<double>> w(taps, std::vector<double>(out));
  std::vector<uint8_t> outside(out, 0);
  for (int64_t o = 0; o < out; ++o) {
    double s = source(c, m, o, in, len, scale, r0, r1);
    if (m.coord == "tf_crop_and_resize" && (s < 0 || s > static_cast<double>(in - 1))) outside[o] = 1;
    if (taps == 1) {
      idx[0][o] = std::clamp<int64_t>(nearest_index(m, s), 0, in - 1);
      continue;
    }
    double f = std::floor(s), r = s - f;
    std::vector<double> k = taps == 2 ? std::vector<double>{1 - r, r} : cubic_coeffs(r, m.cubic_a);
    int64_t first = static_cast<int64_t>(f) - (taps == 4 ? 1 : 0);
    double total = 0;
    for (int j = 0; j < taps; ++j) {
      int64_t i = first + j;
      if (m.exclude_outside && (i < 0 || i >= in)) k[j] = 0;
      total += k[j];
      idx[j][o] = std::clamp<int64_t>(i, 0, in - 1);
    }
    for (int j = 0; j < taps; ++j) w[j][o] = m.exclude_outside && total != 0 ? k[j] / total : k[j];
  }
  std::vector<Index> sel(axis, Index(maroon::slice()));
  Shape ws(static_cast<size_t>(x.ndim()), 1);
  ws[axis] = out;
  std::optional<Tensor> y;
  for (int j = 0; j < taps; ++j) {
    sel.erase(sel.begin() + axis, sel.end());
    sel.push_back(Index(Tensor::from_vector(idx[j], {out}, DType::Int64)));
    Tensor g = x[sel];
    if (taps > 1) g = g.mul(Tensor::from_vector(w[j], ws, DType::Float64).cast(x.dtype()));
    y = y ? y->add(g) : g;
  }
  if (m.coord == "tf_crop_and_resize") {
    Tensor mask = Tensor::from_vector(outside, ws, DType::UInt8).cast(DType::Bool);
    y = mask.where(Tensor::full({}, m.extrapolation, x.dtype()), *y);
  }
  return *y;
}

std::vector<Tensor> resize_with(const OpCtx& c, const ResizeMode& m, const Tensor& x, std::vector<double> scales,
                                std::vector<int64_t> sizes, std::vector<double> roi) {
  if (m.mode != "nearest" && m.mode != "linear" && m.mode != "cubic") c.fail("mode '" + m.mode + "' is not nearest, linear or cubic");
  if (!is_float(x.dtype()) && m.mode != "nearest") c.fail("linear and cubic need a float input");
  const int64_t r = x.ndim();
  if (!sizes.empty() && static_cast<int64_t>(sizes.size()) != r) c.fail("sizes must have one entry per axis");
  if (sizes.empty() && static_cast<int64_t>(scales.size()) != r) c.fail("scales must have one entry per axis");
  Tensor y = x;
  for (int64_t a = 0; a < r; ++a) {
    int64_t in = x.shape()[a];
    int64_t out = sizes.empty() ? static_cast<int64_t>(std::floor(static_cast<double>(in) * scales[a])) : sizes[a];
    double scale = sizes.empty() ? scales[a] : static_cast<double>(out) / static_cast<double>(in);
    if (out < 0 || !(scale > 0)) c.fail("scales and sizes must be positive");
    double r0 = roi.size() == static_cast<size_t>(2 * r) ? roi[a] : 0, r1 = roi.size() == static_cast<size_t>(2 * r) ? roi[r + a] : 1;
    bool identity = out == in && scale == 1 && m.coord != "tf_crop_and_resize";
    double len = sizes.empty() ? static_cast<double>(in) * scales[a] : static_cast<double>(out);
    if (!identity) y = resize_axis(c, m, y, a, out, len, scale, r0, r1);
  }
  return {y};
}

std::vector<double> floats_input(const OpCtx& c, size_t i) {
  if (!c.has(i) || c.input(i).numel() == 0) return {};
  if (!is_float(c.input(i).dtype())) c.fail("input " + std::to_string(i) + " must be float");
  return c.input(i).tolist();
}

std::vector<Tensor> resize(const OpCtx& c) {
  ResizeMode m;
  m.mode = c.attr_s("mode", "nearest");
  if (c.attr_i("antialias", 0)) c.fail("antialias=1 is refused");
  if (c.attr_s("keep_aspect_ratio_policy", "stretch") != "stretch") c.fail("keep_aspect_ratio_policy other than stretch is refused");
  if (c.has_attr("axes")) c.fail("the axes attribute is refused");
  if (c.opset < 11) {  // Resize-10: asymmetric coordinates, scales only
    m.coord = "asymmetric";
    m.nearest = "floor";
    return resize_with(c, m, c.input(0), floats_input(c, 1), {}, {});
  }
  m.coord = c.attr_s("coordinate_transformation_mode", "half_pixel");
  m.nearest = c.attr_s("nearest_mode", "round_prefer_floor");
  m.cubic_a = c.attr_f("cubic_coeff_a", -0.75);
  m.exclude_outside = c.attr_i("exclude_outside", 0) != 0;
  m.extrapolation = c.attr_f("extrapolation_value", 0.0);
  std::vector<int64_t> sizes = c.has(3) && c.input(3).numel() > 0 ? c.ints(3) : std::vector<int64_t>{};
  return resize_with(c, m, c.input(0), floats_input(c, 2), sizes, floats_input(c, 1));
}

std::vector<Tensor> upsample(const OpCtx& c) {
  ResizeMode m;
  m.mode = c.attr_s("mode", "nearest");
  m.coord = "asymmetric";
  m.nearest = "floor";
  std::vector<double> scales = c.opset < 9 ? c.attr_floats("scales") : floats_input(c, 1);
  return resize_with(c, m, c.input(0), scales, {}, {});
}

}  // namespace

void add_resize_ops(OpTable& t) {
  t["Resize"] = resize;
  t["Upsample"] = upsample;
}

}  // namespace maroon::onnx
