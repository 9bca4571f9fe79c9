// Two plan rules for compare masks and constant selects (cpu/plan.cpp applies them), found in
// max_pool2d's gradient (tinygrad's recipe): its mask (x == max).cast(float) read by the count of
// maxima and by the scaled gradient, and `mask.where(g, 0)`, the gradient of its -inf pad, which
// pad_constant builds even with nothing to pad. Only speed depends on them: fusing a node or
// sharing a buffer holding exactly a node's bits never changes a bit.
#pragma once
#include <cstdint>
#include <unordered_set>
#include <vector>

#include "core/graph.h"
#include "core/node_map.h"

namespace maroon::cpu {

// The compares cast to float32 or float64 in `order` whose readers all take them fused:
// elementwise kernels (not a matmul's deferred factor, in `deferred`) and sums over at most 64
// trailing positions (try_count_reduce's). Recomputed by each reader from the compare's operands,
// where those are realized (plan.cpp), such a mask is no pass of its own and no buffer: 26 MB for
// the CNN's first pool at batch 512, written once and read twice.
NodeSet mask_candidates(const std::vector<Node*>& order, const std::unordered_set<const Node*>& deferred);

// The operand a WHERE selects everywhere, when its condition is a bool constant seen through
// movement ops that keep every position (a PAD only of zero widths): src[1] for true, src[2] for
// false; else null. WHERE copies the chosen operand's bits, so that operand's buffer, seen through
// its view, holds exactly the result.
const Node* constant_select(const Node& n);
// Gives n (a WHERE constant_select chose a realized operand for) that operand's buffer and view,
// as a movement node takes its source's: no kernel, and no buffer the size of the tensor (the
// CNN's first pool's gradient: 26 MB).
void alias_selected(Node& n);
int64_t constant_select_runs();  // how many times alias_selected has run (for the tests)

}  // namespace maroon::cpu
