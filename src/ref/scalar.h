// The reference meaning of every elementwise primitive on one element: bits in, bits out.
// This file is the executable form of docs/spec.md; every fast kernel must agree with it.
#pragma once
#include <cstdint>

#include "core/graph.h"

namespace maroon::ref {

// Applies elementwise op `op` to operands of dtype `in` (for WHERE: the value operands' dtype),
// producing a value of dtype `out`, rounding in `r`. Operand bits are zero-extended.
uint64_t eval(Op op, DType in, DType out, Round r, const uint64_t* operands);

// The IDENTITY of a binary op in dtype d (maroon/ops.def; asserts it has one), the identity a
// REDUCE starts its left fold from (its combiner's), and one step of the fold: acc op x.
uint64_t identity(Op op, DType d);
uint64_t reduce_identity(ReduceOp op, DType d);
uint64_t reduce_step(ReduceOp op, DType d, Round r, uint64_t acc, uint64_t x);

// CAST of one value (also what constants go through).
uint64_t cast(DType from, DType to, uint64_t bits, Round r);

}  // namespace maroon::ref
