// Lane-wise IEEE helpers shared by the SIMD kernels that must give the reference executor's bits
// (fastops.cpp's tile ops, window_gather.cpp's folds), compiled once per SIMD target like them
// (Highway's -inl pattern: included again for each target, hence the toggled guard).
#if defined(MAROON_CPU_LANE_OPS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef MAROON_CPU_LANE_OPS_INL_H_
#undef MAROON_CPU_LANE_OPS_INL_H_
#else
#define MAROON_CPU_LANE_OPS_INL_H_
#endif

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

}  // namespace maroon::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // MAROON_CPU_LANE_OPS_INL_H_
