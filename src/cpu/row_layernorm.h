// Layer normalization over a tensor's last axis as one kernel, row by row while the row is in
// L1 (row_layernorm.cpp). The ONNX LayerNormalization (and Tensor::layernorm with an affine
// scale and shift) is three kernels on the fused backend: the row sums, x - mean written out (it
// has two readers), and the squares' sums with the normalization after them.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "core/graph.h"

namespace maroon::cpu {

// out = (c * expand(1 / sqrt(sum(c * c) * k2 + eps))) * gamma + beta, c = x + expand(sum(x) * k1
// * neg), the sums over x's last axis (keepdim), float32, round-to-nearest. The scalars (k1, neg,
// k2, eps) and the rows gamma, beta are nodes realized before the kernel runs, read through views
// (a scalar broadcast, a row of the last axis' length broadcast over the others).
struct RowLayerNorm {
  Node* x = nullptr;
  Node *k1 = nullptr, *neg = nullptr, *k2 = nullptr, *eps = nullptr;  // one element each
  Node *gamma = nullptr, *beta = nullptr;  // one row each; both null for Tensor::layernorm's (out = c * ...)
  std::vector<Node*> inner;  // computed inside, sources first
};

// Whether n, an ADD (or, without gamma and beta, the MUL by the reciprocal) about to get a kernel
// of its own, ends such a layernorm whose inner nodes
// nothing else reads (only_here as for match_row_softmax). x may be unrealized (an op over realized
// leaves the plan recomputes in each reader): the plan then writes it out (plan.cpp).
bool match_row_layernorm(Node* n, const std::function<bool(const Node*, int)>& only_here, RowLayerNorm* site);

// Computes n with the same operations in the same order as the three kernels (the sums left
// folds from +0): the same bits. False, with nothing written, when x, gamma or beta is not
// laid out contiguously.
bool run_row_layernorm(Node& n, const RowLayerNorm& site);

int64_t row_layernorm_tasks();

}  // namespace maroon::cpu
