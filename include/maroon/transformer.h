// The transformer pieces that nn.h and the Tensor API do not already hold: RMSNorm and rotary
// position embeddings (tinygrad's nn.RMSNorm and tinygrad/llm/model.py's precompute_freqs_cis
// and apply_rope). Attention (Tensor::scaled_dot_product_attention), layernorm, gelu, silu and
// nn::Embedding are in tensor.h and nn.h. Every one is a fixed composition of primitives;
// docs/spec-model.md §5a gives each, in order.
#pragma once
#include <cstdint>
#include <optional>

#include "maroon/nn.h"
#include "maroon/tensor.h"

namespace maroon::nn {

// y = x * rsqrt(mean(x², -1, keepdim) + eps), then * weight (ones at init) when affine.
class RMSNorm : public Module {
 public:
  explicit RMSNorm(int64_t dim, double eps = 1e-6, bool elementwise_affine = true);
  Tensor operator()(const Tensor& x) const;
  StateDict state_dict() const override;
  int64_t dim;
  double eps;
  std::optional<Tensor> weight;
};

// The rotation table (end, dim): cos(t·f_i) for i < dim/2, then sin(t·f_i), with
// f_i = 1 / theta^(2i/dim) and t = 0..end-1. dim must be even and positive.
Tensor precompute_freqs_cis(int64_t dim, int64_t end, double theta = 10000.0);
// Rotates the pairs (x_i, x_{i+d/2}) of the last axis of x (…, T, d) by the table's rows 0..T-1
// (the half-split, "rotate half" layout of GPT-NeoX and tinygrad's apply_rope):
// [x1·cos − x2·sin, x2·cos + x1·sin].
Tensor apply_rope(const Tensor& x, const Tensor& freqs_cis);

}  // namespace maroon::nn
