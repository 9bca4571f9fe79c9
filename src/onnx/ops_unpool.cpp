// MaxUnpool: each value of X written to the output element its index names (MaxPool's Indices:
// flat over the whole output tensor, batch and channel included), zeros elsewhere. Indices are
// checked on the host (checked_indices: out of range is an error, not a silent drop); the result
// is one scatter into zeros, so it moves values and computes none. A position named twice gets
// the Tensor API's scatter rule (ONNX leaves it undefined).
#include "onnx/graph.h"

namespace maroon::onnx {

namespace {

std::vector<Tensor> max_unpool(const OpCtx& c) {
  const Tensor& x = c.input(0);
  const Tensor& ind = c.input(1);
  if (x.ndim() < 3) c.fail("X must be (N, C, spatial...), got " + shape_str(x.shape()));
  if (ind.shape() != x.shape()) c.fail("I " + shape_str(ind.shape()) + " must have X's shape " + shape_str(x.shape()));
  const size_t n = static_cast<size_t>(x.ndim() - 2);
  std::vector<int64_t> k = c.attr_ints("kernel_shape");
  if (k.size() != n) c.fail("kernel_shape must have " + std::to_string(n) + " values");
  std::vector<int64_t> s = c.attr_ints("strides", std::vector<int64_t>(n, 1));
  std::vector<int64_t> p = c.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
  if (s.size() != n || p.size() != 2 * n) c.fail("strides and pads must have " + std::to_string(n) + " and " + std::to_string(2 * n) + " values");
  Shape out{x.shape()[0], x.shape()[1]};
  for (size_t i = 0; i < n; ++i) {
    if (k[i] < 1 || s[i] < 1 || p[i] < 0 || p[i + n] < 0) c.fail("kernel_shape and strides must be positive, pads non-negative");
    out.push_back((x.shape()[2 + i] - 1) * s[i] + k[i] - p[i] - p[i + n]);
  }
  const int64_t total = prod(out);
  Tensor idx = checked_indices(c, ind.reshape({-1}), total);
  Tensor y = Tensor::zeros({total}, x.dtype()).scatter(0, idx, x.reshape({-1})).reshape(out);
  if (!c.has(2)) return {y};
  // output_shape: the indices still address the default shape (as the conformance data's
  // expected output has it); the result is zero-padded at the end of each spatial axis.
  std::vector<int64_t> want = c.ints(2);
  if (want.size() != out.size()) c.fail("output_shape must have " + std::to_string(out.size()) + " values");
  Pairs pad;
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] < out[i] || (i < 2 && want[i] != out[i]))
      c.fail("output_shape " + shape_str(want) + " is smaller than the default " + shape_str(out));
    pad.push_back({0, want[i] - out[i]});
  }
  return {y.pad(pad)};
}

}  // namespace

void add_unpool_ops(OpTable& t) { t["MaxUnpool"] = max_unpool; }

}  // namespace maroon::onnx
