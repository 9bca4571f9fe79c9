// SIMD exp2 for binary32 (fast_math.h). Why its bits are the scalar function's on every input:
//
// src/math's exp2 (math.cpp) finishes a binary32 input on its "fast path" when the input is
// finite, 2^-26 <= |x| < 2^20, not an integer and -150 <= x < 128. There it evaluates
// y = (T[j] + T[j] * p(r)) * 2^k in double (exp2_fast; error < 3.2 ulp of y, docs/math.md "Error
// analysis") and accepts y when no rounding boundary of binary32 lies within 8 double ulps of it
// and the result is normal (round_fast); else it falls to the double-double path.
//
// Each lane here takes the same double x (float -> double is exact), computes the same IEEE
// double operations in the same order on the same constants (src/math's exp2_fast_data(); no
// FMA: -ffp-contract=off and no MulAdd, so every target rounds each operation once, as the
// scalar code does), hence the same y, and applies the same acceptance test to y's bits (round-
// to-nearest: the hardware's double -> binary32 conversion then rounds y as the scalar code's
// truncate-and-step does). So an accepted lane holds exactly the scalar result. The kernel's
// domain, 2^-26 <= |x| or x = ±0, and -125 < x < 127, makes y a normal binary32 (no test needed)
// and also holds the integers (zero among them), which the scalar code returns exactly before
// its fast path: there y = 2^x
// exactly, accepted only in round-to-nearest, where it is the exact result (docs/math.md, "The
// SIMD exp2 of the CPU backend"). Lanes outside that domain or rejected by the test are
// recomputed by math::exp2 itself. AVX-512 departs from "the same y" in one place: T[j] is the
// product of two entries read by register permutes instead of a gather (exp2_lanes-inl.h,
// Exp2Table), which puts y within 5.3 double ulps of 2^x instead of 3.2, still below the test's
// 8: an accepted lane is 2^x correctly rounded, which is src/math's result on every binary32
// input (checked against MPFR on all 2^32). In round-to-nearest AVX-512 goes further
// (exp2_lanes-inl.h, Exp2Rn16): a degree-3 polynomial, within 20286 double ulps of 2^x, with a
// 2^15-ulp window; again correctly rounded wherever it accepts. One more shortcut: x < -150 (with -inf), where the scalar
// code returns the rounding of a positive value far below the smallest subnormal (0, or the
// smallest subnormal rounding up; exactly 0 for -inf). tests/cpu/fast_math_test.cpp and
// maroon-exp2-exhaustive compare every lane with math::exp2.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/fast_math.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <cstdint>

#include "cpu/exp2_lanes-inl.h"  // Exp2Span
#include "maroon/round.h"

HWY_BEFORE_NAMESPACE();
namespace maroon::cpu::HWY_NAMESPACE {

void Exp2F32(const void* pa, void* po, int n, Round r) {
  Exp2Span(static_cast<const float*>(pa), static_cast<uint32_t*>(po), n, r);
}

}  // namespace maroon::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "cpu/fast_math.h"

namespace maroon::cpu {

HWY_EXPORT(Exp2F32);

namespace {
void exp2_f32(const void* a, void* o, int n, Round r) { HWY_DYNAMIC_DISPATCH(Exp2F32)(a, o, n, r); }
}  // namespace

uint64_t& exp2_scalar_lanes() {
  thread_local uint64_t n = 0;
  return n;
}

uint64_t& exp2_rn_calls() {
  thread_local uint64_t n = 0;
  return n;
}

MathFn fast_math(Op op, DType in, DType out) {
  if (op == Op::EXP2 && in == DType::Float32 && out == DType::Float32) return exp2_f32;
  return nullptr;
}

}  // namespace maroon::cpu
#endif  // HWY_ONCE
