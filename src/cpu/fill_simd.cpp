// fill_simd.h's fills, compiled once per SIMD target. interp.cpp is built for the baseline, where
// std::fill stores 16 bytes at a time: batchnorm's output kernel, whose five per-channel leaves
// are filled into a tile for each tile that crosses a plane, spent a quarter of its time there
// (perf, one thread, (512,32,20,20)). Whole vectors here (64 bytes on AVX-512).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/fill_simd.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cpu/fill_simd.h"

HWY_BEFORE_NAMESPACE();
namespace maroon::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class T>
HWY_INLINE void FillT(T v, T* HWY_RESTRICT dst, int n) {
  const hn::ScalableTag<T> d;
  const int L = static_cast<int>(hn::Lanes(d));
  const auto vv = hn::Set(d, v);
  int i = 0;
  for (; i + L <= n; i += L) hn::StoreU(vv, d, dst + i);
  for (; i < n; ++i) dst[i] = v;
}

void Fill32(uint32_t v, uint32_t* dst, int n) { FillT(v, dst, n); }
void Fill64(uint64_t v, uint64_t* dst, int n) { FillT(v, dst, n); }

}  // namespace maroon::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace maroon::cpu {

HWY_EXPORT(Fill32);
HWY_EXPORT(Fill64);
void fill_words(uint32_t v, uint32_t* dst, int n) { HWY_DYNAMIC_DISPATCH(Fill32)(v, dst, n); }
void fill_words(uint64_t v, uint64_t* dst, int n) { HWY_DYNAMIC_DISPATCH(Fill64)(v, dst, n); }

}  // namespace maroon::cpu
#endif  // HWY_ONCE
