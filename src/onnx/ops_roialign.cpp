// RoiAlign (avg mode, a fixed sampling_ratio): ONNX Runtime's algorithm as Tensor API ops, each
// rounded once in ONNX Runtime's order: per RoI the start and bin size (x·spatial_scale − offset,
// (end − start) ÷ bins, legacy output_half_pixel at least 1), the sample points
// start + p·bin + (i + 0.5)·bin ÷ grid, each sampled bilinearly (points outside [−1, size] give 0;
// clamped to the last row/column as ONNX Runtime does) with one gather per corner, then the
// bin's samples summed as a left fold in (row, column) order and divided by their count.
#include "onnx/graph.h"

namespace maroon::onnx {

namespace {

struct Axis1 {  // one axis's sample quantities, (R, samples)
  Tensor valid, low, high, l, h;
};

Axis1 sample_axis(const Tensor& pos, int64_t size) {
  auto k = [&](double v) { return Tensor::full({}, v, pos.dtype()); };
  Tensor valid = pos.ge(k(-1)).bitwise_and(pos.le(k(static_cast<double>(size))));
  Tensor p = pos.maximum(k(0));
  Tensor low = p.floor();
  Tensor at_end = low.ge(k(static_cast<double>(size - 1)));
  low = at_end.where(k(static_cast<double>(size - 1)), low);
  Tensor high = at_end.where(low, low.add(k(1)));
  p = at_end.where(low, p);
  Tensor l = p.sub(low);
  return {valid, low, high, l, k(1).sub(l)};
}

std::vector<Tensor> roi_align(const OpCtx& c) {
  const Tensor &x = c.input(0), &rois = c.input(1);
  if (!is_float(x.dtype()) || x.ndim() != 4) c.fail("X must be a 4-D float tensor (N, C, H, W), got " + shape_str(x.shape()));
  if (rois.ndim() != 2 || rois.shape()[1] != 4 || rois.dtype() != x.dtype())
    c.fail("rois must be (num_rois, 4) of X's dtype, got " + shape_str(rois.shape()));
  const int64_t n = x.shape()[0], ch = x.shape()[1], hh = x.shape()[2], ww = x.shape()[3], r = rois.shape()[0];
  const Tensor& bi = c.input(2);
  if (bi.ndim() != 1 || bi.shape()[0] != r) c.fail("batch_indices must have one value per RoI");
  if (c.attr_s("mode", "avg") != "avg") c.fail("mode '" + c.attr_s("mode", "avg") + "' is refused (avg only)");
  const int64_t ph = c.attr_i("output_height", 1), pw = c.attr_i("output_width", 1), g = c.attr_i("sampling_ratio", 0);
  if (ph < 1 || pw < 1) c.fail("output_height and output_width must be positive");
  if (g <= 0) c.fail("sampling_ratio " + std::to_string(g) + " is refused (the adaptive grid is data-dependent); give a positive one");
  const std::string ctm = c.attr_s("coordinate_transformation_mode", c.opset >= 16 ? "half_pixel" : "output_half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel") c.fail("unknown coordinate_transformation_mode '" + ctm + "'");
  const bool half = ctm == "half_pixel";
  const DType dt = x.dtype();
  auto k = [&](double v) { return Tensor::full({}, v, dt); };
  auto col = [&](int64_t i) { return rois.shrink({{0, r}, {i, i + 1}}); };  // (R, 1)
  const Tensor scale = k(c.attr_f("spatial_scale", 1.0)), off = k(half ? 0.5 : 0.0);
  // Sample positions along one axis: (R, bins·g), bin-major.
  auto positions = [&](int64_t lo_col, int64_t hi_col, int64_t bins) {
    Tensor start = col(lo_col).mul(scale).sub(off), end = col(hi_col).mul(scale).sub(off);
    Tensor len = end.sub(start);
    if (!half) len = len.maximum(k(1));
    Tensor bin = len.div(k(static_cast<double>(bins)));
    std::vector<float> p, q;
    for (int64_t b = 0; b < bins; ++b)
      for (int64_t i = 0; i < g; ++i) p.push_back(static_cast<float>(b)), q.push_back(static_cast<float>(i) + 0.5f);
    Tensor pt = Tensor::from_vector(p, {1, bins * g}).cast(dt), qt = Tensor::from_vector(q, {1, bins * g}).cast(dt);
    return start.add(pt.mul(bin)).add(qt.mul(bin).div(k(static_cast<double>(g))));
  };
  Axis1 ya = sample_axis(positions(1, 3, ph), hh), xa = sample_axis(positions(0, 2, pw), ww);
  const int64_t sy = ph * g, sx = pw * g, s = sy * sx;
  auto rows = [&](const Tensor& t) { return t.reshape({r, sy, 1}); };
  auto cols = [&](const Tensor& t) { return t.reshape({r, 1, sx}); };
  Tensor img = x.reshape({n, ch * hh * ww}).gather(0, checked_indices(c, bi, n).reshape({r, 1}).expand({r, ch * hh * ww}))
                   .reshape({r, ch, hh * ww});
  auto tap = [&](const Tensor& yi, const Tensor& xi) {
    Tensor idx = rows(yi).mul(k(static_cast<double>(ww))).add(cols(xi)).cast(DType::Int64).reshape({r, 1, s});
    return img.gather(2, idx.expand({r, ch, s}));
  };
  auto w = [&](const Tensor& a, const Tensor& b) { return rows(a).mul(cols(b)).reshape({r, 1, s}); };
  Tensor val = tap(ya.low, xa.low).mul(w(ya.h, xa.h)).add(tap(ya.low, xa.high).mul(w(ya.h, xa.l)))
                   .add(tap(ya.high, xa.low).mul(w(ya.l, xa.h))).add(tap(ya.high, xa.high).mul(w(ya.l, xa.l)));
  Tensor valid = rows(ya.valid).bitwise_and(cols(xa.valid)).reshape({r, 1, s});
  val = valid.where(val, k(0)).reshape({r, ch, ph, g, pw, g}).permute({0, 1, 2, 4, 3, 5}).reshape({r, ch, ph, pw, g * g});
  return {val.sum(Axis(std::vector<int64_t>{-1})).div(k(static_cast<double>(g * g)))};
}

}  // namespace

void add_roialign_ops(OpTable& t) { t["RoiAlign"] = roi_align; }

}  // namespace maroon::onnx
