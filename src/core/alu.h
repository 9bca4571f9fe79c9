// Any elementwise primitive by its op, over Tensors (tinygrad's UOp.alu): one builder for code
// that walks the op table, such as the backend harness and the determinism battery.
#pragma once
#include <vector>

#include "core/ops.h"
#include "maroon/tensor.h"

namespace maroon {

// The Unary, Binary, Compare and Ternary ops with the Tensor API's broadcasting and promotion
// (WHERE takes its condition first, as a bool tensor). CAST and BITCAST need a target dtype and
// are not covered; std::invalid_argument for them and every other op kind.
Tensor alu(Op op, const std::vector<Tensor>& x);

}  // namespace maroon
