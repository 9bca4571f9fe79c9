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

#include "cpu/fast_math.h"  // exp2_scalar_lanes, exp2_rn_calls
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

#if HWY_TARGET == HWY_AVX3
// AVX-512, round-to-nearest only (the tile kernel's nearest mode, the chain and accumulator
// steps, softmax): sixteen binary32 lanes a call, with a cheaper evaluation than src/math's and
// a wider acceptance window, so its bits rest on an error bound alone (docs/math.md, "The SIMD
// exp2 of the CPU backend", step 5). Per double lane: n = round(128x) read from the low bits of
// t = 128x + M (M = 1.5*2^52 + 1023*128, its low 7 bits zero, so t's low 7 bits are n mod 128
// and bits 7-18 are the biased exponent 1023 + floor(n/128): the permutes and 2^k read t's bits
// with no integer arithmetic), r = x - n/128 (exact, |r| <= 2^-8; held as 128x - n, the
// coefficients scaled by powers of two to match), T[j] = T[16a] * T[b] as in Exp2Table, and
// p = r (c1 + r (c2 + r c3)), the Taylor polynomial of 2^r - 1 to degree 3 on src/math's
// coefficients (instead of degree 5). Error of y = (T + T p) 2^k against 2^x:
// truncation |r ln2|^4 / 24 * 2^|r| < 2.2455e-12 (relative to 2^r > 0.9973: < 2.2516e-12), the
// polynomial's roundings and coefficients < 0.03u, the table product 3.0001u, T*p 0.003u, the
// sum u (u = 2^-53): below 2.2521e-12 = 20285u relative, so y is within 20286 double ulps of 2^x
// (an ulp of y exceeds u*y). The test accepts y when no binary32 midpoint lies within
// kExp2RnWindow = 2^15 ulps of it: then 2^x and y round alike (no midpoint between them; past a
// power of two the nearest midpoint is 2^27 ulps away), and the conversion rounds y to nearest-
// even (the library's FPU state). About 2^-13 of ordinary lanes fail it and go to math::exp2.
// The domain: -125 < x < 127 (2^x a normal binary32; all of it, zeros, subnormals and tiny |x|
// included, where n = 0, r = x and y is 1 + p rounded: the bound holds on the whole domain, and
// x = +-0 gives y = 1 exactly) or x < -150 (-inf included), which is clamped to -151: y =
// 2^-151 exactly (r = 0, T[0] = 1), which the test accepts and the conversion rounds to +0, the
// scalar function's result there. NaN fails both compares. maroon-exp2-exhaustive checks every
// binary32 input (2026-12-04: all 2^32 in nearest-even, 0 mismatches on every x86 target).
constexpr int32_t kExp2RnWindow = 1 << 15;
// Every constant as a whole vector, read by the instructions as memory operands: held in
// registers they were rebuilt by broadcasts (the accumulator kernel's eight held vectors leave
// too few registers), a port-5 instruction each.
struct alignas(64) Exp2RnData {
  double hi[8];   // T[16a], a < 8
  double lo[16];  // T[b], b < 16
  double c1[8], c2[8], c3[8];  // src/math's ln2^i / i! times 2^(-7i), for 128 r
  double magic[8], x128[8];
  int32_t wadd[16], wmask[16], wmin[16], evens[16];
  float above[16], below[16], tiny[16], clamp[16];
};
HWY_INLINE const Exp2RnData& exp2_rn_data() {
  static const Exp2RnData data = [] {
    const math::detail::Exp2FastData& c = math::detail::exp2_fast_data();
    Exp2RnData v{};
    for (int a = 0; a < 8; ++a) v.hi[a] = c.table[16 * a];
    for (int b = 0; b < 16; ++b) v.lo[b] = c.table[b];
    for (int i = 0; i < 8; ++i) {
      v.c1[i] = c.c[1] * 0x1p-7;  // exact scalings, so p is the same double as from r
      v.c2[i] = c.c[2] * 0x1p-14;
      v.c3[i] = c.c[3] * 0x1p-21;
      v.magic[i] = 0x1.8p52 + 1023.0 * 128.0;
      v.x128[i] = 128.0;
    }
    for (int i = 0; i < 16; ++i) {
      v.wadd[i] = kExp2RnWindow - (1 << 28);
      v.wmask[i] = (1 << 29) - 1;
      v.wmin[i] = 2 * kExp2RnWindow;
      v.evens[i] = 2 * i;
      v.above[i] = -125.0f;
      v.below[i] = 127.0f;
      v.tiny[i] = -150.0f;
      v.clamp[i] = -151.0f;
    }
    return v;
  }();
  return data;
}

// Eight lanes of Exp2Rn16: x widened -> y, 2^x within 20286 double ulps.
HWY_INLINE __m512d Exp2Rn8(__m512d x, const Exp2RnData& c) {
  const __m512d magic = _mm512_load_pd(c.magic);
  const __m512d x128 = _mm512_mul_pd(x, _mm512_load_pd(c.x128));  // exact
  const __m512d t = _mm512_add_pd(x128, magic);
  const __m512i tb = _mm512_castpd_si512(t);
  const __m512d r = _mm512_sub_pd(x128, _mm512_sub_pd(t, magic));  // 128 r, exact
  const __m512d h = _mm512_permutexvar_pd(_mm512_srli_epi64(tb, 4), _mm512_load_pd(c.hi));
  const __m512d l = _mm512_permutex2var_pd(_mm512_load_pd(c.lo), tb, _mm512_load_pd(c.lo + 8));
  const __m512d tj = _mm512_mul_pd(h, l);
  const __m512d scale = _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_srli_epi64(tb, 7), 52));
  __m512d p = _mm512_mul_pd(r, _mm512_load_pd(c.c3));
  p = _mm512_mul_pd(r, _mm512_add_pd(_mm512_load_pd(c.c2), p));
  p = _mm512_mul_pd(r, _mm512_add_pd(_mm512_load_pd(c.c1), p));
  return _mm512_mul_pd(_mm512_add_pd(tj, _mm512_mul_pd(tj, p)), scale);
}

// Sixteen binary32 lanes x -> exp2(x) rounded to nearest; *ok marks the lanes that are final.
HWY_INLINE __m512 Exp2Rn16(__m512 x, const Exp2RnData& c, __mmask16* ok) {
  const __mmask16 in = _mm512_cmp_ps_mask(x, _mm512_load_ps(c.above), _CMP_GT_OQ) &
                       _mm512_cmp_ps_mask(x, _mm512_load_ps(c.below), _CMP_LT_OQ);
  const __mmask16 tiny = _mm512_cmp_ps_mask(x, _mm512_load_ps(c.tiny), _CMP_LT_OQ);
  const __m512 xc = _mm512_max_ps(x, _mm512_load_ps(c.clamp));
  const __m512d y0 = Exp2Rn8(_mm512_cvtps_pd(_mm512_castps512_ps256(xc)), c);
  const __m512d y1 = Exp2Rn8(_mm512_cvtps_pd(_mm512_extractf32x8_ps(xc, 1)), c);
  // The test on the sixteen low words at once (the 29 bits it reads are in each lane's low
  // half): |low - 2^28| > W, i.e. (low + W - 2^28) mod 2^29 > 2W, as round_fast's test.
  const __m512i low = _mm512_permutex2var_epi32(_mm512_castpd_si512(y0), _mm512_load_si512(c.evens),
                                                _mm512_castpd_si512(y1));
  const __m512i w = _mm512_and_si512(_mm512_add_epi32(low, _mm512_load_si512(c.wadd)), _mm512_load_si512(c.wmask));
  *ok = static_cast<__mmask16>((in | tiny) & _mm512_cmpgt_epi32_mask(w, _mm512_load_si512(c.wmin)));
  return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(y0)), _mm512_cvtpd_ps(y1), 1);
}

// The lanes of y that `ok` leaves out, from math::exp2 (cold: about one call in 500).
HWY_NOINLINE inline __m512 Exp2RnFix(__m512 x, __m512 y, __mmask16 ok) {
  alignas(64) uint32_t xs[16], ys[16];
  _mm512_store_ps(xs, x);
  _mm512_store_ps(ys, y);
  for (int l = 0; l < 16; ++l) {
    if (ok >> l & 1) continue;
    ys[l] = static_cast<uint32_t>(math::exp2(sf::kF32, xs[l], Round::NearestEven));
    ++exp2_scalar_lanes();
  }
  return _mm512_load_ps(ys);
}

// A whole vector's exp2 rounded to nearest, every lane final (including lanes a caller ignores).
HWY_INLINE __m512 Exp2RnVec(__m512 x, const Exp2RnData& c) {
  __mmask16 ok;
  const __m512 y = Exp2Rn16(x, c, &ok);
  return HWY_LIKELY(ok == 0xFFFF) ? y : Exp2RnFix(x, y, ok);
}
#endif  // HWY_TARGET == HWY_AVX3

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
#if HWY_TARGET == HWY_AVX3
  if (r == Round::NearestEven) {  // sixteen lanes a step (Exp2Rn16): reads and writes up to 15 past n
    const Exp2RnData& rc = exp2_rn_data();
    ++exp2_rn_calls();
    for (int i = 0; i < n; i += 16) {
      const __m512 x = _mm512_loadu_ps(a + i);
      __mmask16 ok;
      __m512 y = Exp2Rn16(x, rc, &ok);
      // Lanes past n count as done: whatever the slack holds never reaches the scalar function.
      if (n - i < 16) ok |= static_cast<__mmask16>(0xFFFFu << (n - i));
      if (HWY_UNLIKELY(ok != 0xFFFF)) y = Exp2RnFix(x, y, ok);
      _mm512_storeu_ps(o + i, y);
    }
    return;
  }
#endif
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
