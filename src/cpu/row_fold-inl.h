// Folds of short rows across lanes (lane t folds row t), shared by the row kernels
// (row_softmax.cpp, row_layernorm.cpp). Highway's -inl pattern: included once per SIMD target.
#if defined(MAROON_CPU_ROW_FOLD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef MAROON_CPU_ROW_FOLD_INL_H_
#undef MAROON_CPU_ROW_FOLD_INL_H_
#else
#define MAROON_CPU_ROW_FOLD_INL_H_
#endif

#include <algorithm>
#include <cstdint>

#include "cpu/lane_ops-inl.h"  // TransposeLanes
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace maroon::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Lane t = the left fold by `op` of p[t * step + k], k < n, from `a`: rows (lanes past g repeat
// row g - 1) read a vector at a time and transposed in registers; the last n mod L positions
// gathered. The same lane op on the same values in the same order as a reduction's fold.
template <class D, class Op, class T = hn::TFromD<D>>
HWY_INLINE hn::Vec<D> FoldRows(D d, const T* p, int64_t step, int n, int g, hn::Vec<D> a, Op op) {
  const hn::RebindToSigned<D> di;
  int k = 0;
#if HWY_TARGET != HWY_SCALAR && !HWY_HAVE_SCALABLE
  constexpr size_t kL = hn::MaxLanes(D());
  const int L = static_cast<int>(hn::Lanes(d));
  const T* rows[kL];
  for (int j = 0; j < L; ++j) rows[j] = p + std::min(j, g - 1) * step;
  for (; k + L <= n; k += L) {
    hn::Vec<D> v[kL];
    for (int j = 0; j < L; ++j) v[j] = hn::LoadU(d, rows[j] + k);
    TransposeLanes(d, v);
    for (int c = 0; c < L; ++c) a = op(a, v[c]);
  }
#endif
  const auto idx = hn::Mul(hn::Min(hn::Iota(di, 0), hn::Set(di, g - 1)), hn::Set(di, static_cast<int32_t>(step)));
  for (; k < n; ++k) a = op(a, hn::GatherIndex(d, p + k, idx));
  return a;
}

}  // namespace maroon::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // MAROON_CPU_ROW_FOLD_INL_H_
