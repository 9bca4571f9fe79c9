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

#include "hwy/highway.h"
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
  // The scalar fast path's domain (a subset of it; see the top of fast_math.cpp).
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


// o[i] = exp2(a[i]) rounded in r, for i < n: whole vectors, so up to a vector past n is read
// and written (the tiles' kTilePad of slack); every lane below n is the scalar function's.
HWY_INLINE void Exp2Span(const float* a, uint32_t* o, int n, Round r) {
  const hn::ScalableTag<double> d;
  const hn::Rebind<float, decltype(d)> df;
  const hn::RebindToUnsigned<decltype(d)> du;
  const hn::Rebind<uint32_t, decltype(d)> du32;
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
