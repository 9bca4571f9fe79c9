// GridSample (opset 16, 2-D), PyTorch's grid_sampler_2d as Tensor API calls, each op rounded
// once: the grid unnormalized to pixel coordinates, padded (border: clamped; reflection:
// PyTorch's reflect_coordinates with fmod and floor), then each tap read with one gather over
// the flattened image (taps outside the image masked to 0 by `where`) and the taps' weighted
// values summed left to right in PyTorch's order (bilinear: nw, ne, sw, se; bicubic: rows of
// four, cubic convolution with A = −0.75). Nearest rounds half to even (nearbyint).
#include <optional>

#include "onnx/graph.h"

namespace maroon::onnx {

namespace {

struct Sampler {
  const OpCtx& c;
  Tensor x;      // (N, C, H·W)
  int64_t n, ch, h, w, ho, wo;
  bool align;
  std::string pad;

  Tensor k(double v) const { return Tensor::full({}, v, x.dtype()); }

  // Grid coordinate (−1..1) to pixel coordinate along an axis of `size`.
  Tensor unnormalize(const Tensor& g, int64_t size) const {
    if (align) return g.add(k(1)).div(k(2)).mul(k(static_cast<double>(size - 1)));
    return g.add(k(1)).mul(k(static_cast<double>(size))).sub(k(1)).div(k(2));
  }
  Tensor reflect(const Tensor& v, int64_t twice_low, int64_t twice_high) const {
    if (twice_low == twice_high) return v.mul(k(0));
    const double lo = twice_low / 2.0, span = (twice_high - twice_low) / 2.0;
    Tensor in = v.sub(k(lo)).abs();
    Tensor extra = in.fmod(k(span)), flips = in.div(k(span)).floor();
    return flips.fmod(k(2)).eq(k(0)).where(extra.add(k(lo)), k(span).sub(extra).add(k(lo)));
  }
  Tensor clip(const Tensor& v, int64_t size) const { return v.maximum(k(0)).minimum(k(static_cast<double>(size - 1))); }
  // The padding mode applied to a pixel coordinate.
  Tensor padded(const Tensor& v, int64_t size) const {
    if (pad == "border") return clip(v, size);
    if (pad == "reflection") return clip(align ? reflect(v, 0, 2 * (size - 1)) : reflect(v, -1, 2 * size - 1), size);
    return v;
  }
  // The value at integral float coordinates (iy, ix), (N, Ho·Wo): 0 outside the image.
  Tensor tap(const Tensor& iy, const Tensor& ix) const {
    Tensor inside = ix.ge(k(0)).bitwise_and(ix.le(k(static_cast<double>(w - 1))))
                        .bitwise_and(iy.ge(k(0))).bitwise_and(iy.le(k(static_cast<double>(h - 1))));
    Tensor idx = inside.where(iy.mul(k(static_cast<double>(w))).add(ix), k(0)).cast(DType::Int64);
    Tensor v = x.gather(2, idx.reshape({n, 1, ho * wo}).expand({n, ch, ho * wo}));
    return inside.reshape({n, 1, ho * wo}).where(v, k(0));
  }
};

std::vector<Tensor> grid_sample(const OpCtx& c) {
  const Tensor &x = c.input(0), &grid = c.input(1);
  if (!is_float(x.dtype()) || x.ndim() != 4) c.fail("X must be a 4-D float tensor (N, C, H, W), got " + shape_str(x.shape()));
  const int64_t n = x.shape()[0], ho = grid.ndim() == 4 ? grid.shape()[1] : 0, wo = grid.ndim() == 4 ? grid.shape()[2] : 0;
  if (grid.shape() != Shape{n, ho, wo, 2} || grid.dtype() != x.dtype())
    c.fail("grid must be (" + std::to_string(n) + ", H_out, W_out, 2) of X's dtype, got " + shape_str(grid.shape()));
  const std::string mode = c.attr_s("mode", "bilinear"), pad = c.attr_s("padding_mode", "zeros");
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic") c.fail("unknown mode '" + mode + "'");
  if (pad != "zeros" && pad != "border" && pad != "reflection") c.fail("unknown padding_mode '" + pad + "'");
  const int64_t ch = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  Sampler s{c, x.reshape({n, ch, h * w}), n, ch, h, w, ho, wo, c.attr_i("align_corners", 0) != 0, pad};
  Tensor g = grid.reshape({n, ho * wo, 2});
  Tensor gx = g.shrink({{0, n}, {0, ho * wo}, {0, 1}}).reshape({n, ho * wo});
  Tensor gy = g.shrink({{0, n}, {0, ho * wo}, {1, 2}}).reshape({n, ho * wo});
  Tensor ix = s.unnormalize(gx, w), iy = s.unnormalize(gy, h);
  Tensor out = [&] {
    if (mode == "nearest") return s.tap(s.padded(iy, h).round(), s.padded(ix, w).round());
    if (mode == "bilinear") {
      Tensor px = s.padded(ix, w), py = s.padded(iy, h);
      Tensor x0 = px.floor(), y0 = py.floor(), x1 = x0.add(s.k(1)), y1 = y0.add(s.k(1));
      Tensor nw = x1.sub(px).mul(y1.sub(py)), ne = px.sub(x0).mul(y1.sub(py));
      Tensor sw = x1.sub(px).mul(py.sub(y0)), se = px.sub(x0).mul(py.sub(y0));
      auto wt = [&](const Tensor& t) { return t.reshape({n, 1, ho * wo}); };
      return s.tap(y0, x0).mul(wt(nw)).add(s.tap(y0, x1).mul(wt(ne))).add(s.tap(y1, x0).mul(wt(sw))).add(s.tap(y1, x1).mul(wt(se)));
    }
    // bicubic: taps at floor − 1 .. floor + 2, each coordinate padded on its own.
    Tensor x0 = ix.floor(), y0 = iy.floor(), tx = ix.sub(x0), ty = iy.sub(y0);
    auto coeffs = [&](const Tensor& t) {  // PyTorch's get_cubic_upsampling_coefficients, A = −0.75
      const Tensor a = s.k(-0.75);
      auto near = [&](const Tensor& v) { return a.add(s.k(2)).mul(v).sub(a.add(s.k(3))).mul(v).mul(v).add(s.k(1)); };
      auto far = [&](const Tensor& v) { return a.mul(v).sub(a.mul(s.k(5))).mul(v).add(a.mul(s.k(8))).mul(v).sub(a.mul(s.k(4))); };
      return std::vector<Tensor>{far(t.add(s.k(1))), near(t), near(s.k(1).sub(t)), far(s.k(2).sub(t))};
    };
    std::vector<Tensor> cx = coeffs(tx), cy = coeffs(ty);
    auto wt = [&](const Tensor& t) { return t.reshape({n, 1, ho * wo}); };
    std::optional<Tensor> acc;
    for (int64_t i = 0; i < 4; ++i) {
      Tensor yy = s.padded(y0.add(s.k(static_cast<double>(i - 1))), h);
      std::optional<Tensor> row;
      for (int64_t j = 0; j < 4; ++j) {
        Tensor v = s.tap(yy, s.padded(x0.add(s.k(static_cast<double>(j - 1))), w)).mul(wt(cx[j]));
        row = row ? row->add(v) : v;
      }
      Tensor r = row->mul(wt(cy[i]));
      acc = acc ? acc->add(r) : r;
    }
    return *acc;
  }();
  return {out.reshape({n, ch, ho, wo})};
}

}  // namespace

void add_gridsample_ops(OpTable& t) { t["GridSample"] = grid_sample; }

}  // namespace maroon::onnx
