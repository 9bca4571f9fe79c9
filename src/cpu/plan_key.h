// The words a schedule's plan (cpu::plan) is a function of, so that a small graph built again
// with the same structure (a Python loop's `(a @ b).numpy()`, an eval step outside TinyJit)
// reuses the decisions instead of taking them again. Used by plan.cpp.
#pragma once
#include <cstdint>
#include <vector>

#include "core/graph.h"

namespace maroon::cpu {

// The largest schedule whose plan is kept: the decisions cost little per node, so keeping them
// pays for small graphs, where the fixed cost is most of the call.
constexpr size_t kPlanKeyMaxNodes = 32;

// Writes into *key everything plan() reads from `order` (a schedule: sources first, root last):
// per node its op, dtype, rounding mode, shape and argument, how many handles it has, and where
// each source is (an earlier step, or a realized leaf: numbered by first use, with its dtype,
// shape and handle count). Not the data, the buffers or the leaves' views, which only execute()
// reads. Returns false (and keeps nothing) for a graph over kPlanKeyMaxNodes nodes.
bool plan_key(const std::vector<Node*>& order, std::vector<int64_t>* key);

}  // namespace maroon::cpu
