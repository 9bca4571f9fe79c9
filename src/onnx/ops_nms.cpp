// NonMaxSuppression. Every number is computed by the Tensor API: the boxes' corners (min/max
// of the coordinates; for center_point_box, centre ∓ size·0.5, exact halving), the pairwise
// intersection, areas, union and IoU, ONNX Runtime's expressions, each op rounded once; and the
// comparisons with the thresholds. The host only reads the resulting booleans and the scores'
// order and runs the greedy selection (data-dependent output size, as Compress and NonZero).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "onnx/graph.h"

namespace maroon::onnx {

namespace {

// Column `i` of the last axis: (B, N).
Tensor col(const Tensor& t, int64_t i) {
  Pairs p;
  for (int64_t a = 0; a + 1 < t.ndim(); ++a) p.push_back({0, t.shape()[a]});
  p.push_back({i, i + 1});
  return t.shrink(p).squeeze(-1);
}

// suppress[b][i][j]: box j suppresses box i (and i suppresses j) at this IoU threshold, (B, N, N).
Tensor suppression(const Tensor& boxes, bool center, const Tensor& iou_threshold) {
  Tensor ymin = col(boxes, 0), xmin = col(boxes, 1), ymax = col(boxes, 2), xmax = col(boxes, 3);
  if (center) {  // [x_center, y_center, width, height]
    const Tensor half = Tensor::full({}, 0.5, boxes.dtype());
    Tensor xc = col(boxes, 0), yc = col(boxes, 1), w = col(boxes, 2).mul(half), h = col(boxes, 3).mul(half);
    xmin = xc.sub(w), xmax = xc.add(w), ymin = yc.sub(h), ymax = yc.add(h);
  } else {  // [y1, x1, y2, x2], either diagonal
    Tensor y1 = ymin, x1 = xmin;
    ymin = y1.minimum(ymax), ymax = y1.maximum(ymax), xmin = x1.minimum(xmax), xmax = x1.maximum(xmax);
  }
  auto rows = [](const Tensor& t) { return t.unsqueeze(2); };  // (B, N, 1): box i
  auto cols = [](const Tensor& t) { return t.unsqueeze(1); };  // (B, 1, N): box j
  Tensor iw = rows(xmax).minimum(cols(xmax)).sub(rows(xmin).maximum(cols(xmin))).maximum(0.0);
  Tensor ih = rows(ymax).minimum(cols(ymax)).sub(rows(ymin).maximum(cols(ymin))).maximum(0.0);
  Tensor inter = iw.mul(ih);
  Tensor area = xmax.sub(xmin).mul(ymax.sub(ymin));
  Tensor uni = rows(area).add(cols(area)).sub(inter);
  Tensor iou = inter.div(uni);
  return inter.gt(0.0).bitwise_and(rows(area).gt(0.0)).bitwise_and(cols(area).gt(0.0)).bitwise_and(uni.gt(0.0))
      .bitwise_and(iou.gt(iou_threshold));
}

std::vector<Tensor> nms(const OpCtx& c) {
  const Tensor &boxes = c.input(0), &scores = c.input(1);
  if (!is_float(boxes.dtype()) || boxes.dtype() != scores.dtype()) c.fail("boxes and scores must be float tensors of one dtype");
  if (boxes.ndim() != 3 || boxes.shape()[2] != 4) c.fail("boxes must be (batch, boxes, 4), got " + shape_str(boxes.shape()));
  const int64_t nb = boxes.shape()[0], n = boxes.shape()[1];
  if (scores.ndim() != 3 || scores.shape()[0] != nb || scores.shape()[2] != n)
    c.fail("scores " + shape_str(scores.shape()) + " must be (" + std::to_string(nb) + ", classes, " + std::to_string(n) + ")");
  const int64_t nc = scores.shape()[1];
  int64_t max_out = 0;
  if (c.has(2)) {
    std::vector<int64_t> m = c.ints(2);
    if (m.size() != 1) c.fail("max_output_boxes_per_class must hold one value");
    max_out = std::max<int64_t>(m[0], 0);
  }
  auto threshold = [&](size_t i, double def) {
    if (!c.has(i)) return Tensor::full({}, def, scores.dtype());
    const Tensor& t = c.input(i);
    if (t.numel() != 1 || !is_float(t.dtype())) c.fail("input " + std::to_string(i) + " must be one float");
    return t.cast(scores.dtype()).reshape({});
  };
  const bool center = c.attr_i("center_point_box", 0) != 0;
  std::vector<uint8_t> sup = suppression(boxes, center, threshold(3, 0.0)).cast(DType::UInt8).to_vector<uint8_t>();
  std::vector<uint8_t> pass;
  if (c.has(4)) pass = scores.gt(threshold(4, 0.0)).cast(DType::UInt8).to_vector<uint8_t>();
  std::vector<double> s = scores.cast(DType::Float64).to_vector<double>();  // exact
  std::vector<int64_t> out;
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t k = 0; k < nc; ++k) {
      const size_t base = static_cast<size_t>((b * nc + k) * n);
      std::vector<int64_t> order;
      for (int64_t i = 0; i < n; ++i)
        if (pass.empty() || pass[base + i]) order.push_back(i);
      // Highest score first, ties by index; NaN scores last (a strict weak order).
      std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) {
        const double a = s[base + i], d = s[base + j];
        if (std::isnan(a) || std::isnan(d)) return !std::isnan(a) && std::isnan(d);
        return a > d;
      });
      std::vector<int64_t> kept;
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        bool hit = false;
        for (int64_t j : kept) hit = hit || sup[static_cast<size_t>((b * n + i) * n + j)] != 0;
        if (!hit) kept.push_back(i);
      }
      for (int64_t i : kept) out.insert(out.end(), {b, k, i});
    }
  return {Tensor::from_vector(out, {static_cast<int64_t>(out.size() / 3), 3})};
}

}  // namespace

void add_nms_ops(OpTable& t) { t["NonMaxSuppression"] = nms; }

}  // namespace maroon::onnx
