// SIMD tile operations for the common (op, dtype) pairs, compiled for every Highway target and
// chosen at run time. Each is bit-equal to src/ref's meaning of the op (IEEE operations, one
// rounding each, canonical NaN); anything not listed runs through src/ref's scalar code.
#pragma once
#include <string>
#include <vector>

#include "core/ops.h"
#include "maroon/dtype.h"

namespace maroon::cpu {

// out[i] = op(a[i], b[i], c[i]) for i < n; buffers may be read and written up to the next
// multiple of the vector length (tiles carry kTilePad elements of slack).
using FastFn = void (*)(const void* a, const void* b, const void* c, void* out, int n);
FastFn fast_op(Op op, DType in, DType out);

// acc[i] = acc[i] op x[i] for the REDUCE fold (same slack rule); null if none.
using FastReduceFn = void (*)(void* acc, const void* x, int n);
FastReduceFn fast_reduce(ReduceOp op, DType d);

// The target the dispatcher uses now.
std::string current_target_name();

}  // namespace maroon::cpu
