// Window attributes (see pads.h). Output sizes follow ONNX's operator definitions:
//   floor mode: out = floor((in + pads - ((k - 1) * d + 1)) / s) + 1
//   ceil mode:  the same with ceil, less a last window that would start in the end padding;
//   SAME_UPPER / SAME_LOWER: out = ceil(in / s), the odd padding at the end / the beginning.
#include "onnx/pads.h"

namespace maroon::onnx {

namespace {

void same_pads(Window& w, const Shape& x, const Shape& kernel, bool lower) {
  for (size_t i = 0; i < kernel.size(); ++i) {
    int64_t in = x[2 + i], s = w.strides[i];
    int64_t out = (in + s - 1) / s;
    int64_t total = std::max<int64_t>(0, (out - 1) * s + (kernel[i] - 1) * w.dilations[i] + 1 - in);
    int64_t small = total / 2, big = total - small;
    w.begin[i] = lower ? big : small;
    w.end[i] = lower ? small : big;
  }
}

}  // namespace

Window window(const OpCtx& c, const Shape& x, const Shape& kernel, bool pool) {
  const size_t n = kernel.size();
  if (x.size() != n + 2) c.fail("input " + shape_str(x) + " does not have 2 + " + std::to_string(n) + " axes");
  Window w;
  w.strides = c.attr_ints("strides", std::vector<int64_t>(n, 1));
  w.dilations = c.attr_ints("dilations", std::vector<int64_t>(n, 1));
  std::vector<int64_t> pads = c.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
  if (w.strides.size() != n || w.dilations.size() != n || pads.size() != 2 * n)
    c.fail("strides, dilations and pads must have one entry per spatial axis (pads two), for " +
           std::to_string(n) + " spatial axes");
  for (size_t i = 0; i < n; ++i) {
    if (w.strides[i] < 1 || w.dilations[i] < 1 || kernel[i] < 1) c.fail("strides, dilations and kernel must be positive");
    if (pads[i] < 0 || pads[n + i] < 0) c.fail("pads must not be negative");
    w.begin.push_back(pads[i]);
    w.end.push_back(pads[n + i]);
  }
  std::string autopad = c.attr_s("auto_pad", "NOTSET");
  if (autopad == "SAME_UPPER" || autopad == "SAME_LOWER") same_pads(w, x, kernel, autopad == "SAME_LOWER");
  else if (autopad == "VALID") w.begin.assign(n, 0), w.end.assign(n, 0);
  else if (autopad != "NOTSET") c.fail("auto_pad '" + autopad + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
  const bool ceil = pool && c.attr_i("ceil_mode", 0) != 0;
  for (size_t i = 0; i < n; ++i) {
    int64_t span = x[2 + i] + w.begin[i] + w.end[i], eff = (kernel[i] - 1) * w.dilations[i] + 1;
    if (span < eff) c.fail("the kernel (" + std::to_string(eff) + " with dilation) is larger than the padded input (" +
                           std::to_string(span) + ") on spatial axis " + std::to_string(i));
    int64_t extra = 0;
    if (ceil) {
      int64_t out = (span - eff + w.strides[i] - 1) / w.strides[i] + 1;
      if ((out - 1) * w.strides[i] >= x[2 + i] + w.begin[i]) --out;  // starts in the end padding
      extra = std::max<int64_t>(0, (out - 1) * w.strides[i] + eff - span);
    }
    w.ceil_extra.push_back(extra);
  }
  return w;
}

std::vector<int64_t> tinygrad_pads(const Window& w) {
  std::vector<int64_t> out;
  for (size_t i = w.begin.size(); i-- > 0;) out.insert(out.end(), {w.begin[i], w.end[i]});
  return out;
}

}  // namespace maroon::onnx
