// RMSNorm and rotary position embeddings (maroon/transformer.h), as tinygrad composes them;
// docs/spec-model.md §5a is their bit-level statement.
#include "maroon/transformer.h"

#include <string>

#include "maroon/error.h"

namespace maroon::nn {

RMSNorm::RMSNorm(int64_t d, double eps_, bool affine) : dim(d), eps(eps_) {
  if (d <= 0) throw ShapeError("[RMSNorm] dim must be positive, got " + std::to_string(d));
  if (affine) weight = Tensor::ones({d});
}

Tensor RMSNorm::operator()(const Tensor& x) const {
  if (x.ndim() == 0 || x.shape().back() != dim)
    throw ShapeError("[RMSNorm] the last dimension of " + shape_str(x.shape()) + " must be " + std::to_string(dim));
  // tinygrad's _norm on x.float(), cast back: float16 and bfloat16 normalise in float32.
  Tensor xf = x.cast(DType::Float32);
  Tensor y = xf.mul(xf.square().mean(-1, true).add(eps).rsqrt()).cast(x.dtype());
  return weight ? y.mul(*weight) : y;
}

StateDict RMSNorm::state_dict() const {
  if (!weight) return {};
  return {{"weight", *weight}};
}

Tensor precompute_freqs_cis(int64_t dim, int64_t end, double theta) {
  if (dim <= 0 || dim % 2 != 0)
    throw ShapeError("[precompute_freqs_cis] dim must be even and positive, got " + std::to_string(dim));
  if (end < 0) throw ShapeError("[precompute_freqs_cis] end must be >= 0, got " + std::to_string(end));
  // 1 / theta^(arange(0, dim, 2) / dim): the exponent is an int32 tensor divided by an int, so
  // a float32 true division (both cast, then MUL by RECIP), then POW with a constant base.
  Tensor expo = Tensor::arange(0, dim, 2).div(Scalar(dim));
  Tensor freqs = Tensor::full(expo.shape(), theta, expo.dtype()).pow(expo).reciprocal();
  Tensor t = Tensor::arange(end).unsqueeze(1).mul(freqs.unsqueeze(0));
  return t.cos().cat({t.sin()}, -1);
}

Tensor apply_rope(const Tensor& x, const Tensor& freqs_cis) {
  if (x.ndim() < 2 || x.shape().back() % 2 != 0)
    throw ShapeError("[apply_rope] x must be (..., T, d) with d even, got " + shape_str(x.shape()));
  const int64_t t = x.shape()[x.ndim() - 2], d = x.shape().back();
  if (freqs_cis.ndim() != 2 || freqs_cis.shape()[1] != d || freqs_cis.shape()[0] < t)
    throw ShapeError("[apply_rope] freqs_cis " + shape_str(freqs_cis.shape()) + " must be (>=" + std::to_string(t) +
                     ", " + std::to_string(d) + ") for x " + shape_str(x.shape()));
  std::vector<Tensor> cs = freqs_cis.shrink({{0, t}, {0, d}}).chunk(2, -1);
  std::vector<Tensor> xs = x.chunk(2, -1);
  const Tensor &cos = cs[0], &sin = cs[1], &x1 = xs[0], &x2 = xs[1];
  return (x1 * cos - x2 * sin).cat({x2 * cos + x1 * sin}, -1);
}

}  // namespace maroon::nn
