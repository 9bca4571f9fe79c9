// Softmax over a tensor's last axis as one kernel, row by row while the row is in L1
// (row_softmax.cpp). Tensor::softmax is four kernels on the fused backend: the row maximum, the
// exponentials (written out: two readers), their row sum and the product with its reciprocal,
// each a pass over the whole tensor (attention's scores: 2 MB per layer of the ONNX encoder).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "core/graph.h"

namespace maroon::cpu {

// out = e * expand(1 / sum(e)), e = exp2((x + expand(max(x) * neg)) * scale), the sum and the
// maximum over x's last axis (keepdim), float32, round-to-nearest: Tensor::softmax's graph
// (neg = -1, scale = log2 e). `inner`: the nodes computed inside the kernel, sources first.
struct RowSoftmax {
  Node* x = nullptr;
  uint32_t neg = 0, scale = 0;  // float32 bits
  std::vector<Node*> inner;
};

// Whether n, a MUL about to get a kernel of its own, ends such a softmax whose inner nodes
// nothing else reads: only_here(m, k) says m's only readers are the k slots of the pattern.
// x must be realized before n runs (`x->realized` as the plan's walk has marked it).
bool match_row_softmax(Node* n, const std::function<bool(const Node*, int)>& only_here, RowSoftmax* site);

// Computes n: each row's maximum, exponentials, sum and products, the same operations in the
// same order as the four kernels (the folds left to right from -inf and +0), so the same bits.
// False, with nothing written, when x is not laid out as contiguous rows.
bool run_row_softmax(Node& n, const RowSoftmax& site);

// Tasks run by the kernel (tests check the path ran).
int64_t row_softmax_tasks();

}  // namespace maroon::cpu
