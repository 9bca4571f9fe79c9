// Lane-wise IEEE helpers shared by the SIMD kernels that must give the reference executor's bits
// (fastops.cpp's tile ops, window_gather.cpp's folds), compiled once per SIMD target like them
// (Highway's -inl pattern: included again for each target, hence the toggled guard).
#if defined(MAROON_CPU_LANE_OPS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef MAROON_CPU_LANE_OPS_INL_H_
#undef MAROON_CPU_LANE_OPS_INL_H_
#else
#define MAROON_CPU_LANE_OPS_INL_H_
#endif

#include <cstddef>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace maroon::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class D, class V>
HWY_INLINE V Canonical(D d, V r) {  // NaN -> the canonical quiet NaN
  using T = hn::TFromD<D>;
  const hn::RebindToUnsigned<D> du;
  const auto qnan = sizeof(T) == 4 ? hn::BitCast(d, hn::Set(du, static_cast<hn::TFromD<decltype(du)>>(0x7FC00000u)))
                                   : hn::BitCast(d, hn::Set(du, static_cast<hn::TFromD<decltype(du)>>(0x7FF8000000000000ull)));
  return hn::IfThenElse(hn::IsNaN(r), qnan, r);
}

// IEEE 754-2019 maximum: NaN wins, and +0 beats -0 (AND of the bits keeps +0).
template <class D, class V>
HWY_INLINE V Maximum(D d, V a, V b) {
  V r = hn::IfThenElse(hn::Lt(a, b), b, a);
  r = hn::IfThenElse(hn::Eq(a, b), hn::And(a, b), r);
  return hn::IfThenElse(hn::Or(hn::IsNaN(a), hn::IsNaN(b)), Canonical(d, hn::Add(a, b)), r);
}

// a != b as C++'s: true where either is NaN (Highway's Ne is ordered, so the negation of Eq).
template <class D, class V>
HWY_INLINE hn::Mask<D> NotEqual(D, V a, V b) {
  return hn::Not(hn::Eq(a, b));
}
#if HWY_TARGET == HWY_AVX3
// AVX-512: the unordered compare in one instruction, not a compare and a mask negation.
template <size_t N>
HWY_INLINE hn::Mask512<float> NotEqual(hn::Simd<float, N, 0>, hn::Vec512<float> a, hn::Vec512<float> b) {
  return hn::Mask512<float>{_mm512_cmp_ps_mask(a.raw, b.raw, _CMP_NEQ_UQ)};
}
template <size_t N>
HWY_INLINE hn::Mask512<double> NotEqual(hn::Simd<double, N, 0>, hn::Vec512<double> a, hn::Vec512<double> b) {
  return hn::Mask512<double>{_mm512_cmp_pd_mask(a.raw, b.raw, _CMP_NEQ_UQ)};
}
#endif

#if HWY_TARGET != HWY_SCALAR && !HWY_HAVE_SCALABLE
// v[j] lane c -> v[c] lane j (an L x L transpose; window_gather.cpp's windows, the row kernels'
// folds): each stage takes the even lanes of every pair of vectors, then the odd ones, a perfect
// unshuffle of the L*L sequence (its index bits rotated right by one); log2(L) of them rotate row
// and column bits into each other's place. Moves lanes only: no bit of a value changes.
template <class D, class V, size_t L>
HWY_INLINE void TransposeLanes(D d, V (&v)[L]) {
  for (size_t s = 1; s < L; s *= 2) {
    V w[L];
    for (size_t i = 0; i < L / 2; ++i) {
      w[i] = hn::ConcatEven(d, v[2 * i + 1], v[2 * i]);
      w[i + L / 2] = hn::ConcatOdd(d, v[2 * i + 1], v[2 * i]);
    }
    for (size_t i = 0; i < L; ++i) v[i] = w[i];
  }
}
#endif

}  // namespace maroon::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // MAROON_CPU_LANE_OPS_INL_H_
