// Matmul layouts kept between calls: a repeated small product (a training step's layers, a
// benchmark's loop) finds the offsets it needs instead of building nine lists again. A layout is
// a pure function of its key (the product's shape, reduced axes, output shape and both
// operands' strides and offsets), so a hit returns exactly what a fresh computation would, and
// nothing else (SIMD target, thread count, rounding mode, dtype, data) can make it stale.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "cpu/matmul_plan.h"

namespace maroon::cpu {

// The layout for `key`: the stored one, or make()'s result (stored when small enough). Thread-safe.
std::shared_ptr<const MatmulLayout> matmul_layout(const std::vector<int64_t>& key,
                                                  const std::function<MatmulLayout()>& make);

// For tests: empty the store; how many lookups found a stored layout since the last clear.
void clear_matmul_layouts();
int64_t matmul_layout_hits();

}  // namespace maroon::cpu
