// The SIMD binary32 exp2 (the reasoning for its bits is at the top of fast_math.cpp), shared by
// fast_math.cpp's tile kernel and fastops.cpp's chains (an EXP2 step). Highway's -inl pattern:
// included once per SIMD target.
#if defined(MAROON_CPU_EXP2_LANES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef MAROON_CPU_EXP2_LANES_INL_H_
#undef MAROON_CPU_EXP2_LANES_INL_H_
#else
#define MAROON_CPU_EXP2_LANES_INL_H_
#endif

#include <cstdint>
#include <cstring>

#include "cpu/fast_math.h"  // exp2_scalar_lanes
#include "hwy/highway.h"
#include "math/internal.h"
#include "math/math.h"
#include "maroon/round.h"

HWY_BEFORE_NAMESPACE();
namespace maroon::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_HAVE_FLOAT64
// T[n mod 128] = 2^((n mod 128) / 128), src/math's table entry, in each lane: a gather.
template <class D>
struct Exp2Table {
  const double* table;
  Exp2Table(D, const math::detail::Exp2FastData& c) : table(c.table) {}
  template <class VI>
  HWY_INLINE hn::Vec<D> operator()(D d, VI n) const {
    return hn::GatherIndex(d, table, hn::And(n, hn::Set(hn::RebindToSigned<D>(), 127)));  // in [0, 128)
  }
};
#if HWY_TARGET == HWY_AVX3
// AVX-512: T[16a + b] ~ T[16a] * T[b], from two in-register permutes of 8 and 16 entries (a and
// b are n's bits 4-6 and 0-3; the permutes read only those) and one product, instead of the
// gather, which held a third of the loop's time on Zen 4. The lane's y is then no longer the
// scalar code's, so the bits rest on an error bound: the entries are RN(2^(i/128)) (gen_tables),
// so T[16a] = 2^(a/8) (1 + e1), T[b] = 2^(b/128) (1 + e2) and the rounded product is
// 2^(j/128) (1 + e1)(1 + e2)(1 + e3), |e_i| <= u = 2^-53: within 3.0001u of 2^(j/128) where
// T[j] is within u. exp2_fast's bound (docs/math.md "Error analysis": 3.2u, of which the table
// is u) becomes 5.2u < 5.3 double ulps of y, below the 8 ulps round_fast's test assumes; so an
// accepted lane is still 2^x correctly rounded, hence src/math's bits (correctly rounded on
// every binary32 input, checked against MPFR). maroon-exp2-exhaustive checks every input.
template <>
struct Exp2Table<hn::Simd<double, 8, 0>> {
  __m512d hi, lo0, lo1;
  Exp2Table(hn::Simd<double, 8, 0>, const math::detail::Exp2FastData& c) {
    const double* t = c.table;
    hi = _mm512_setr_pd(t[0], t[16], t[32], t[48], t[64], t[80], t[96], t[112]);
    lo0 = _mm512_loadu_pd(t);
    lo1 = _mm512_loadu_pd(t + 8);
  }
  HWY_INLINE hn::Vec512<double> operator()(hn::Simd<double, 8, 0>, hn::Vec512<int64_t> n) const {
    const __m512d h = _mm512_permutexvar_pd(_mm512_srli_epi64(n.raw, 4), hi);
    const __m512d l = _mm512_permutex2var_pd(lo0, n.raw, lo1);
    return hn::Vec512<double>{_mm512_mul_pd(h, l)};
  }
};
#endif

// Lanes of one double vector: x (binary32 values widened) -> exp2(x) rounded in r. In
// round-to-nearest the value y itself, which the caller's DemoteTo rounds; in the directed modes
// the binary32 result bits in the low half of each 64-bit lane, which the caller truncates to.
// *ok marks the lanes whose result is final. y is src/math's exp2_fast(x) * 2^k, the same IEEE
// double operations in the same order on the same constants (so within 3.2 double ulps of 2^x,
// docs/math.md "Error analysis"), but for the table entry on AVX-512 (Exp2Table above: within
// 5.3 ulps there); the acceptance test is round_fast's (no binary32 rounding boundary within 8
// double ulps of y), on a domain of x that makes y a normal binary32 (below). Integer work is
// signed 64-bit (every value compared is below 2^62 in the lanes that count), which every target
// compares natively. `c` is src/math's exp2_fast_data(), fetched once by the caller: fetched
// here, it was a call per vector.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V Exp2Lanes(D d, V x, Round r, const math::detail::Exp2FastData& c, const Exp2Table<D>& table,
                       hn::Mask<D>* ok) {
  const hn::RebindToSigned<D> di;
  using VI = hn::Vec<decltype(di)>;
  const V magic = hn::Set(d, 0x1.8p52);
  // exp2_fast: n = round(128x) (the low bits of 128x + 1.5*2^52, whose ulp is 1),
  // j = n mod 128, k = floor(n / 128), r = x - n/128 (exact).
  const V t = hn::Add(hn::Mul(x, hn::Set(d, 128.0)), magic);
  const V nd = hn::Sub(t, magic);
  const VI n = hn::Sub(hn::BitCast(di, t), hn::BitCast(di, magic));
  const VI k = hn::ShiftRight<7>(n);
  const V rr = hn::Sub(x, hn::Mul(nd, hn::Set(d, 0x1p-7)));
  V p = hn::Mul(rr, hn::Set(d, c.c[5]));
  p = hn::Mul(rr, hn::Add(hn::Set(d, c.c[4]), p));
  p = hn::Mul(rr, hn::Add(hn::Set(d, c.c[3]), p));
  p = hn::Mul(rr, hn::Add(hn::Set(d, c.c[2]), p));
  p = hn::Mul(rr, hn::Add(hn::Set(d, c.c[1]), p));
  const V tj = table(d, n);
  const V scale = hn::BitCast(d, hn::ShiftLeft<52>(hn::Add(k, hn::Set(di, 1023))));
  const V y = hn::Mul(hn::Add(tj, hn::Mul(tj, p)), scale);
  // The domain, tested on x alone (off the polynomial's dependency chain): 2^-26 <= |x| and
  // -125 < x < 127. There 2^x lies in (2^-125 (1 + 2^-18), 2^127 (1 - 2^-18)) (binary32's
  // spacing in [64, 128) is 2^-17, and 2^(2^-17) > 1 + 2^-18), so y, within 5.3 double ulps,
  // has a double exponent in [-125, 126]: round_fast's normal-result test always passes and
  // needs no instruction. NaN fails the compares. Integers (exact powers of two, which src/math
  // takes out before its fast path) are in: y = T[0] (1 + 0) 2^k = 2^x exactly, which the test
  // below accepts in round-to-nearest (no midpoint near a power of two) and rejects in the
  // directed modes (y on a boundary); accepted, it is 2^x, which is what src/math returns. The
  // error bound holds for every x here (docs/math.md), so an accepted lane is 2^x correctly
  // rounded whether or not src/math's fast path would have taken x: the same bits, as src/math's
  // exp2 is correctly rounded on every binary32 input (checked against MPFR on all 2^32).
  // Zeros too (softmax's x - max is +0 at each row's maximum: one lane in eight of its 64-wide
  // rows went to the scalar function): n = 0, r = ±0, p = ±0, y = T[0] (1 ± 0) 2^0 = 1
  // exactly, accepted in round-to-nearest (the exact result), rejected in the directed modes.
  const auto domain = hn::And(hn::Or(hn::Ge(hn::Abs(x), hn::Set(d, 0x1p-26)), hn::Eq(x, hn::Zero(d))),
                              hn::And(hn::Gt(x, hn::Set(d, -125.0)), hn::Lt(x, hn::Set(d, 127.0))));
  // x < -150 or -inf: 0, or the smallest subnormal when a finite x rounds up.
  const auto tiny = hn::Lt(x, hn::Set(d, -150.0));
  if (r == Round::NearestEven) {
    // No midpoint within 8 ulps: |low - 2^28| > 8, i.e. (low + 8 - 2^28) mod 2^29 > 16 (the
    // sum lies in [8 - 2^28, 2^28 + 8); its negative values wrap above 2^28). Then the
    // hardware's conversion (round-to-nearest-even, the library's FPU state) rounds y as 2^x.
    const VI w = hn::And(hn::Add(hn::BitCast(di, y), hn::Set(di, 8 - (int64_t{1} << 28))),
                         hn::Set(di, (int64_t{1} << 29) - 1));
    *ok = hn::Or(tiny, hn::And(domain, hn::RebindMask(d, hn::Gt(w, hn::Set(di, 16)))));
    return hn::IfThenZeroElse(tiny, y);  // 0.0 converts to +0 bits
  }
  // Directed: no float within 8 ulps, then truncate to 23 bits and step up per the mode.
  const VI low = hn::And(hn::BitCast(di, y), hn::Set(di, (int64_t{1} << 29) - 1));
  const VI eight = hn::Set(di, 8);
  const auto clear = hn::And(hn::Gt(low, eight), hn::Gt(hn::Sub(hn::Set(di, int64_t{1} << 29), low), eight));
  // (y >> 29) is (biased double exponent << 23) | 23 mantissa bits; rebias 1023 -> 127.
  VI out = hn::Sub(hn::ShiftRight<29>(hn::BitCast(di, y)), hn::Set(di, int64_t{1023 - 127} << 23));
  // y > 0: Down is TowardZero, Up adds one (a carry bumps the exponent).
  if (r == Round::Up) out = hn::Add(out, hn::Set(di, 1));
  const VI tiny_bits = r == Round::Up ? hn::IfThenElseZero(hn::RebindMask(di, hn::IsFinite(x)), hn::Set(di, 1))
                                      : hn::Zero(di);
  *ok = hn::Or(tiny, hn::And(domain, hn::RebindMask(d, clear)));
  // As a double whose low 32 bits are the result: DemoteTo's layout comes from the caller's
  // TruncateTo on this path.
  return hn::BitCast(d, hn::IfThenElse(hn::RebindMask(di, tiny), tiny_bits, out));
}

// o[i] = exp2(a[i]) rounded in r, for i < n: whole vectors, so up to a vector past n is read
// and written (the tiles' kTilePad of slack); every lane below n is the scalar function's. Two
// vectors a pass where there are two: each lane's chain (~40 dependent operations) is long, and
// two independent ones in flight measured faster than one (lanes never meet, so the same bits).
HWY_INLINE void Exp2Span(const float* a, uint32_t* o, int n, Round r) {
  const hn::ScalableTag<double> d;
  const hn::Rebind<float, decltype(d)> df;
  const hn::RebindToUnsigned<decltype(d)> du;
  const hn::Rebind<uint32_t, decltype(d)> du32;
  const int L = static_cast<int>(hn::Lanes(d));
  const math::detail::Exp2FastData& c = math::detail::exp2_fast_data();
  const Exp2Table<hn::ScalableTag<double>> table(d, c);
  // Stores one vector's results at o + i; lanes the fast path did not accept (ok false) from
  // the scalar function.
  auto finish = [&](int i, decltype(hn::Zero(d)) y, hn::Mask<decltype(d)> ok) {
    if (r == Round::NearestEven) {
      hn::StoreU(hn::BitCast(du32, hn::DemoteTo(df, y)), du32, o + i);
    } else {
      hn::StoreU(hn::TruncateTo(du32, hn::BitCast(du, y)), du32, o + i);
    }
    if (HWY_LIKELY(hn::AllTrue(d, ok))) return;
    uint8_t mask[8] = {};
    hn::StoreMaskBits(d, ok, mask);
    for (int l = 0; l < L && i + l < n; ++l) {
      if (mask[l / 8] >> (l % 8) & 1) continue;
      uint32_t x;
      std::memcpy(&x, a + i + l, 4);
      o[i + l] = static_cast<uint32_t>(math::exp2(sf::kF32, x, r));
      ++exp2_scalar_lanes();
    }
  };
  int i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    hn::Mask<decltype(d)> ok0, ok1;
    const auto y0 = Exp2Lanes(d, hn::PromoteTo(d, hn::LoadU(df, a + i)), r, c, table, &ok0);
    const auto y1 = Exp2Lanes(d, hn::PromoteTo(d, hn::LoadU(df, a + i + L)), r, c, table, &ok1);
    finish(i, y0, ok0);
    finish(i + L, y1, ok1);
  }
  for (; i < n; i += L) {
    hn::Mask<decltype(d)> ok;
    const auto y = Exp2Lanes(d, hn::PromoteTo(d, hn::LoadU(df, a + i)), r, c, table, &ok);
    finish(i, y, ok);
  }
}
#else
// A target without double lanes (32-bit Arm NEON): the scalar function, element by element.
HWY_INLINE void Exp2Span(const float* a, uint32_t* o, int n, Round r) {
  for (int i = 0; i < n; ++i) {
    uint32_t x;
    std::memcpy(&x, a + i, 4);
    o[i] = static_cast<uint32_t>(math::exp2(sf::kF32, x, r));
  }
}
#endif  // HWY_HAVE_FLOAT64

}  // namespace maroon::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // MAROON_CPU_EXP2_LANES_INL_H_
