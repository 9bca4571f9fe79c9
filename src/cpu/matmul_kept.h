// Matmul plans kept between calls. A product of two realized factors read through their own
// views (a Python loop's `(a @ b).numpy()`, a model's layers on the same shapes) planned the same
// way on every call: the factors' moving axes, the rows, columns and batches, both operands'
// strides and the layout's lookup, each a few heap blocks, ~3.7k instructions of a 64^2 call.
// A kept plan is a function of everything plan_matmul_node reads for such a product (the
// REDUCE's dtype, rounding mode, shape and axes, the product's shape and both factors' views),
// compared whole, so a hit is what a fresh plan would be, over the new call's buffers.
#pragma once
#include <cstdint>

#include "core/graph.h"
#include "cpu/matmul_plan.h"

namespace maroon::cpu {

// The kept plan for REDUCE `out` over MUL(x, y) (both realized, no movement chain between), with
// x and y's buffers: true when one was kept, else *plan is untouched.
bool find_kept_matmul(const Node& out, const Node& x, const Node& y, MatmulPlan* plan);
// Keeps `plan` (plan_matmul_node's answer for the same nodes) when both operands are read in
// place (a dense copy is made per call, from the data).
void keep_matmul(const Node& out, const Node& x, const Node& y, const MatmulPlan& plan);

// For tests: empty the store; how many products found a kept plan since the last clear.
void clear_kept_matmuls();
int64_t kept_matmul_hits();

}  // namespace maroon::cpu
