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
// scalar code does), hence the same y, and applies the same acceptance test to y's bits. So an
// accepted lane holds exactly the scalar result. Lanes outside the fast path's domain (here a
// narrower one: 2^-26 <= |x|, -130 < x < 128, not an integer) or rejected by the test are
// recomputed by math::exp2 itself. One more shortcut: x < -150 (with -inf), where the scalar
// code returns the rounding of a positive value far below the smallest subnormal (0, or the
// smallest subnormal rounding up; exactly 0 for -inf). tests/cpu/fast_math_test.cpp and
// maroon-exp2-exhaustive compare every lane with math::exp2.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/fast_math.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <cstdint>
#include <cstring>

#include "math/internal.h"
#include "math/math.h"
#include "maroon/round.h"

HWY_BEFORE_NAMESPACE();
namespace maroon::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_HAVE_FLOAT64
// Lanes of one double vector: x (binary32 values widened) -> binary32 result bits in 64-bit
// lanes; *ok marks the lanes whose bits are final. Integer work is signed 64-bit (every value
// compared is below 2^62 in the lanes that count), which every target compares natively.
// `c` is src/math's exp2_fast_data(), fetched once by the caller: fetched here, it was a call per
// vector, with the lanes spilled around it and the coefficients broadcast anew each time.
template <class D, class V = hn::Vec<D>, class VI = hn::Vec<hn::RebindToSigned<D>>>
HWY_INLINE VI Exp2Lanes(D d, V x, Round r, const math::detail::Exp2FastData& c, hn::Mask<D>* ok) {
  const hn::RebindToSigned<D> di;
  const V magic = hn::Set(d, 0x1.8p52);
  // exp2_fast: n = round(128x) (the low bits of 128x + 1.5*2^52, whose ulp is 1),
  // j = n mod 128, k = floor(n / 128), r = x - n/128 (exact).
  const V t = hn::Add(hn::Mul(x, hn::Set(d, 128.0)), magic);
  const V nd = hn::Sub(t, magic);
  const VI n = hn::Sub(hn::BitCast(di, t), hn::BitCast(di, magic));
  const VI j = hn::And(n, hn::Set(di, 127));  // in [0, 128) in every lane: the gather is safe
  const VI k = hn::ShiftRight<7>(n);
  const V rr = hn::Sub(x, hn::Mul(nd, hn::Set(d, 0x1p-7)));
  V p = hn::Mul(rr, hn::Set(d, c.c[5]));
  p = hn::Mul(rr, hn::Add(hn::Set(d, c.c[4]), p));
  p = hn::Mul(rr, hn::Add(hn::Set(d, c.c[3]), p));
  p = hn::Mul(rr, hn::Add(hn::Set(d, c.c[2]), p));
  p = hn::Mul(rr, hn::Add(hn::Set(d, c.c[1]), p));
  const V tj = hn::GatherIndex(d, c.table, j);
  const V scale = hn::BitCast(d, hn::ShiftLeft<52>(hn::Add(k, hn::Set(di, 1023))));
  const VI b = hn::BitCast(di, hn::Mul(hn::Add(tj, hn::Mul(tj, p)), scale));
  // The scalar fast path's domain (a subset of it; see the top of the file).
  const auto integer = hn::And(hn::Eq(rr, hn::Zero(d)), hn::RebindMask(d, hn::Eq(j, hn::Zero(di))));
  const auto domain = hn::AndNot(integer, hn::And(hn::Ge(hn::Abs(x), hn::Set(d, 0x1p-26)),
                                                  hn::And(hn::Gt(x, hn::Set(d, -130.0)),
                                                          hn::Lt(x, hn::Set(d, 128.0)))));
  // round_fast(kF32, y, 8, r): y > 0 with a normal binary32 exponent (-125 <= e <= 126, as
  // there), no boundary within 8 ulps, then truncate to 23 bits and step up per the mode.
  const VI be = hn::ShiftRight<52>(b);
  const auto normal = hn::And(hn::Gt(be, hn::Set(di, 1023 - 126)), hn::Lt(be, hn::Set(di, 1023 + 127)));
  const VI low = hn::And(b, hn::Set(di, (int64_t{1} << 29) - 1));
  const VI half = hn::Set(di, int64_t{1} << 28), full = hn::Set(di, int64_t{1} << 29);
  const VI eight = hn::Set(di, 8);
  hn::Mask<decltype(di)> clear, up;
  if (r == Round::NearestEven) {
    clear = hn::Gt(hn::Abs(hn::Sub(low, half)), eight);
    up = hn::Gt(low, half);
  } else {
    clear = hn::And(hn::Gt(low, eight), hn::Gt(hn::Sub(full, low), eight));
    up = r == Round::Up ? hn::Eq(low, low) : hn::Ne(low, low);  // y > 0: Down is TowardZero
  }
  // (b >> 29) is (biased double exponent << 23) | 23 mantissa bits; rebias 1023 -> 127.
  VI out = hn::Sub(hn::ShiftRight<29>(b), hn::Set(di, int64_t{1023 - 127} << 23));
  out = hn::Add(out, hn::IfThenElseZero(up, hn::Set(di, 1)));  // a carry bumps the exponent
  // x < -150 or -inf: 0, or the smallest subnormal when a finite x rounds up.
  const auto tiny = hn::Lt(x, hn::Set(d, -150.0));
  const VI tiny_bits = r == Round::Up ? hn::IfThenElseZero(hn::RebindMask(di, hn::IsFinite(x)), hn::Set(di, 1))
                                      : hn::Zero(di);
  *ok = hn::Or(tiny, hn::And(domain, hn::RebindMask(d, hn::And(normal, clear))));
  return hn::IfThenElse(hn::RebindMask(di, tiny), tiny_bits, out);
}

void Exp2F32(const void* pa, void* po, int n, Round r) {
  const hn::ScalableTag<double> d;
  const hn::Rebind<float, decltype(d)> df;
  const hn::RebindToUnsigned<decltype(d)> du;
  const hn::Rebind<uint32_t, decltype(d)> du32;
  const float* a = static_cast<const float*>(pa);
  uint32_t* o = static_cast<uint32_t*>(po);
  const int L = static_cast<int>(hn::Lanes(d));
  const math::detail::Exp2FastData& c = math::detail::exp2_fast_data();
  for (int i = 0; i < n; i += L) {
    hn::Mask<decltype(d)> ok;
    const auto bits = Exp2Lanes(d, hn::PromoteTo(d, hn::LoadU(df, a + i)), r, c, &ok);
    hn::StoreU(hn::TruncateTo(du32, hn::BitCast(du, bits)), du32, o + i);
    if (HWY_LIKELY(hn::AllTrue(d, ok))) continue;
    uint8_t mask[8] = {};
    hn::StoreMaskBits(d, ok, mask);
    for (int l = 0; l < L && i + l < n; ++l) {
      if (mask[l / 8] >> (l % 8) & 1) continue;
      uint32_t x;
      std::memcpy(&x, a + i + l, 4);
      o[i + l] = static_cast<uint32_t>(math::exp2(sf::kF32, x, r));
    }
  }
}
#else
// A target without double lanes (32-bit Arm NEON): the scalar function, element by element.
void Exp2F32(const void* pa, void* po, int n, Round r) {
  for (int i = 0; i < n; ++i) {
    uint32_t x;
    std::memcpy(&x, static_cast<const float*>(pa) + i, 4);
    static_cast<uint32_t*>(po)[i] = static_cast<uint32_t>(math::exp2(sf::kF32, x, r));
  }
}
#endif  // HWY_HAVE_FLOAT64

}  // namespace maroon::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "cpu/fast_math.h"

namespace maroon::cpu {

HWY_EXPORT(Exp2F32);

namespace {
void exp2_f32(const void* a, void* o, int n, Round r) { HWY_DYNAMIC_DISPATCH(Exp2F32)(a, o, n, r); }
}  // namespace

MathFn fast_math(Op op, DType in, DType out) {
  if (op == Op::EXP2 && in == DType::Float32 && out == DType::Float32) return exp2_f32;
  return nullptr;
}

}  // namespace maroon::cpu
#endif  // HWY_ONCE
