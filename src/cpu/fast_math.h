// Vectorised correctly rounded transcendentals for the CPU backend (Highway, one copy per
// target, chosen at run time like fastops.h). Each equals src/math's scalar function bit for bit
// on every input, in every rounding mode: the lanes repeat the scalar fast path's double
// operations exactly and its acceptance test; every lane the scalar code would not finish on
// that path (special values, exact cases, near-boundary results) is computed by src/math itself.
// tests/cpu/fast_math_test.cpp samples that on every target; maroon-exp2-exhaustive checks all
// 2^32 binary32 inputs.
#pragma once
#include <cstdint>

#include "core/ops.h"
#include "maroon/dtype.h"
#include "maroon/round.h"

namespace maroon::cpu {

// out[i] = op(a[i]) rounded in `r`, for i < n. Reads and writes whole vectors (tiles carry
// kTilePad elements of slack). Runs under the library's FPU state (round-to-nearest, no
// flush-to-zero) whatever `r` is: the kernel rounds to `r` itself.
using MathFn = void (*)(const void* a, void* out, int n, Round r);
// The kernel for (op, in -> out), or null when there is none (then src/ref's scalar code runs).
MathFn fast_math(Op op, DType in, DType out);

// The same for a binary op: out[i] = op(a[i], b[i]) rounded in `r` (same slack rule). POW on
// binary32 (src/cpu/fast_pow.cpp): SIMD for the exponents 2 and 3, src/math for the rest.
using MathFn2 = void (*)(const void* a, const void* b, void* out, int n, Round r);
MathFn2 fast_math2(Op op, DType in, DType out);

// Per thread: lanes the SIMD binary32 exp2 (exp2_lanes-inl.h) handed to math::exp2 so far, its
// tile kernel and chain steps alike (the tests check which arguments the lanes finish).
uint64_t& exp2_scalar_lanes();

// Per thread: calls of AVX-512's round-to-nearest exp2 (exp2_lanes-inl.h, Exp2Rn16) by a kernel:
// the tile kernel's nearest mode, a chain's or accumulator's pass with an EXP2 step, a softmax
// group. Tests check that the path ran on AVX-512 (and on no other target).
uint64_t& exp2_rn_calls();

}  // namespace maroon::cpu
