// The fast CPU backend: runs a schedule with fused elementwise kernels, reductions vectorised
// across outputs, a packed matmul for MUL+REDUCE ADD, SIMD (Highway, runtime dispatch) and
// threads. Every kernel equals src/ref bit for bit; tests/cpu proves it per op, dtype, shape
// class, SIMD target and thread count.
#pragma once
#include <vector>

#include "core/graph.h"

namespace maroon::cpu {

// Realizes the nodes of `order` (a schedule: sources first). Intermediate elementwise nodes that
// nothing else needs are fused into their consumer and left unrealized.
void run(const std::vector<Node*>& order);

}  // namespace maroon::cpu
