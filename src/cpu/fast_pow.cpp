// SIMD pow for binary32 with the exponents 2 and 3, rounded to nearest (fast_math.h): GELU's
// tanh form computes x ** 3 and its gradient x ** 2, and src/math's pow takes those through its
// exact case (x^y formed in 128-bit integers, rounded in software) at ~100 ns an element. Why the
// bits are the scalar function's:
//
// A finite binary32 x widens to double exactly; x*x has at most 48 significant bits, so the
// double product xx is exact and rounding it to binary32 once (the hardware conversion, round to
// nearest even under the library's FPU state) is the correctly rounded x^2, which is what the
// scalar exact case returns. For x^3 = xx * x (up to 72 bits), Dekker's two_prod (Veltkamp
// splitting, no FMA; no overflow or underflow: |x^3| lies in [2^-447, 2^384]) gives p + e = x^3
// exactly, p = RN64(x^3). A binary32 rounding boundary (a midpoint; all are doubles) that
// separates x^3 from p would be a double closer to x^3 than p, so the only bad case is p itself
// a midpoint with e != 0. Rounding to odd removes it: when e != 0 and p's last significand bit
// is 0, p is stepped one double ulp toward x^3 (x^3 then lies strictly between p and p', and no
// midpoint lies strictly between two adjacent doubles); the result is then odd, and a midpoint,
// having at most 25 significant bits, is even, so it is never one. (Stepping every inexact p
// would be wrong: an odd p one ulp below a midpoint would land on it.) So RN32 of the result is
// RN32(x^3). e == 0: p is x^3 and the conversion's ties-to-even is the spec's.
//
// Every other lane (another exponent, a NaN or infinite base, a result of FLT_MAX or more in
// magnitude, any directed rounding mode) is computed by math::pow itself. tests/cpu/fast_math_test.cpp compares every lane with math::pow
// on every SIMD target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/fast_pow.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <cstdint>
#include <cstring>

#include "math/math.h"
#include "maroon/round.h"

HWY_BEFORE_NAMESPACE();
namespace maroon::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_HAVE_FLOAT64
// x^2 (y == 2) or x^3 (else) of finite lanes, rounded to nearest binary32 as above.
// *ok is cleared where the result is FLT_MAX or more in magnitude: Highway's DemoteTo saturates
// there on some targets (its scalar one) where the hardware conversion gives inf.
template <class D, class DF>
HWY_INLINE hn::Vec<DF> PowSmallLanes(D d, DF df, hn::Vec<D> x, hn::Mask<D> square, hn::Mask<D>* ok) {
  const hn::RebindToSigned<D> di;
  const auto xx = hn::Mul(x, x);  // exact
  const auto p = hn::Mul(xx, x);
  // Dekker's two_prod: e = xx*x - p exactly (src/math/dd.h's split, lane-wise).
  const auto c = hn::Set(d, 134217729.0);  // 2^27 + 1
  const auto t1 = hn::Mul(c, xx), ah = hn::Sub(t1, hn::Sub(t1, xx)), al = hn::Sub(xx, ah);
  const auto t2 = hn::Mul(c, x), bh = hn::Sub(t2, hn::Sub(t2, x)), bl = hn::Sub(x, bh);
  const auto e = hn::Add(hn::Add(hn::Add(hn::Sub(hn::Mul(ah, bh), p), hn::Mul(ah, bl)), hn::Mul(al, bh)),
                         hn::Mul(al, bl));
  // Round to odd: one double ulp toward x^3 (the magnitude's bits up (+1) when e has p's sign,
  // down (-1) otherwise; the sign bit of e XOR p, spread over the lane, is 0 or -1, and OR 1
  // makes that +-1), only where e != 0 and p's last bit is 0.
  const auto p_bits = hn::BitCast(di, p);
  const auto sign_diff = hn::ShiftRight<63>(hn::Xor(hn::BitCast(di, e), p_bits));
  const auto step = hn::Or(sign_diff, hn::Set(di, int64_t{1}));
  const auto nudged = hn::BitCast(d, hn::Add(p_bits, step));
  const auto even = hn::RebindMask(d, hn::Eq(hn::And(p_bits, hn::Set(di, int64_t{1})), hn::Zero(di)));
  const auto cube = hn::IfThenElse(hn::AndNot(hn::Eq(e, hn::Zero(d)), even), nudged, p);
  const auto r = hn::IfThenElse(square, xx, cube);
  *ok = hn::And(*ok, hn::Lt(hn::Abs(r), hn::Set(d, 3.4028234663852886e38)));  // FLT_MAX
  return hn::DemoteTo(df, r);
}

// The lanes with y in {2, 3} and a finite x; the others are flagged in `fallback` for the caller.
void PowSmallF32(const void* pa, const void* pb, void* po, int n, uint8_t* fallback) {
  const hn::ScalableTag<double> d;
  const hn::Rebind<float, decltype(d)> df;
  const float* a = static_cast<const float*>(pa);
  const float* b = static_cast<const float*>(pb);
  float* o = static_cast<float*>(po);
  const int L = static_cast<int>(hn::Lanes(d));
  for (int i = 0; i < n; i += L) {
    const auto x = hn::PromoteTo(d, hn::LoadU(df, a + i));
    const auto y = hn::PromoteTo(d, hn::LoadU(df, b + i));
    const auto two = hn::Eq(y, hn::Set(d, 2.0));
    auto ok = hn::And(hn::Or(two, hn::Eq(y, hn::Set(d, 3.0))), hn::IsFinite(x));
    hn::StoreU(PowSmallLanes(d, df, x, two, &ok), df, o + i);
    uint8_t mask[8] = {};
    hn::StoreMaskBits(d, ok, mask);
    for (int l = 0; l < L && i + l < n; ++l) fallback[i + l] = !(mask[l / 8] >> (l % 8) & 1);
  }
}
#else
// A target without double lanes (32-bit Arm NEON): every lane goes to the scalar function.
void PowSmallF32(const void*, const void*, void*, int n, uint8_t* fallback) {
  std::memset(fallback, 1, static_cast<size_t>(n));
}
#endif  // HWY_HAVE_FLOAT64

}  // namespace maroon::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "cpu/fast_math.h"
#include "cpu/kernel.h"

namespace maroon::cpu {

HWY_EXPORT(PowSmallF32);

namespace {
void pow_f32(const void* a, const void* b, void* o, int n, Round r) {
  uint8_t fallback[kTile + kTilePad];
  const uint32_t* x = static_cast<const uint32_t*>(a);
  const uint32_t* y = static_cast<const uint32_t*>(b);
  uint32_t* out = static_cast<uint32_t*>(o);
  for (int i0 = 0; i0 < n; i0 += kTile) {  // in tiles: the lane flags live on the stack
    const int m = n - i0 < kTile ? n - i0 : kTile;
    if (r == Round::NearestEven) HWY_DYNAMIC_DISPATCH(PowSmallF32)(x + i0, y + i0, out + i0, m, fallback);
    else std::memset(fallback, 1, static_cast<size_t>(m));
    for (int i = 0; i < m; ++i)
      if (fallback[i]) out[i0 + i] = static_cast<uint32_t>(math::pow(sf::kF32, x[i0 + i], y[i0 + i], r));
  }
}
}  // namespace

MathFn2 fast_math2(Op op, DType in, DType out) {
  if (op == Op::POW && in == DType::Float32 && out == DType::Float32) return pow_f32;
  return nullptr;
}

}  // namespace maroon::cpu
#endif  // HWY_ONCE
