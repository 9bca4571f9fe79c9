// SIMD tile operations for the common (op, dtype) pairs, compiled for every Highway target and
// chosen at run time. Each is bit-equal to src/ref's meaning of the op (IEEE operations, one
// rounding each, canonical NaN); anything not listed runs through src/ref's scalar code.
#pragma once
#include <cstdint>
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

// A chain (cpu/kernel.h: Program::segments): ops applied in turn to a running value, each to
// it and `other` (n elements, same slack rule) or to it alone. Square is MUL of the value by
// itself; ADD, MUL and MAX take `other` as their second operand, which changes no bit (ops.def:
// they commute bit for bit). Exp2 is EXP2 rounded to nearest (float32 only; fast_math.h's
// kernel on the running value).
enum class ChainOp : uint8_t { Add, Mul, Max, Square, Recip, Sqrt, Exp2 };
struct ChainStep {
  ChainOp op;
  const void* other;
};
// value = first[i], then each step; out[i] = value. Float32 or float64 elements.
using ChainFn = void (*)(const void* first, const ChainStep* steps, int nsteps, void* out, int n);
ChainFn fast_chain(DType d);
struct Instr;
// The chain op computing `ins` when its running value is its first operand (both, for Square);
// false if no chain kernel computes it.
bool chain_op(const Instr& ins, ChainOp* op);

// The target the dispatcher uses now.
std::string current_target_name();

}  // namespace maroon::cpu
