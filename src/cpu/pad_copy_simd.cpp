// An image plane of a padded copy (pad_copy.cpp), compiled once per SIMD target: a 4-lane SSE2
// loop (the baseline pad_copy.cpp is built for) was most of the pad copies' samples, about 5% of
// the ONNX ResNet. Integer work only: each element is copied, a NaN replaced by the canonical NaN
// (what MUL by 1 gives), the borders +0, so every target writes the same bits.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/pad_copy_simd.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <cstring>

#include "cpu/pad_copy_simd.h"

HWY_BEFORE_NAMESPACE();
namespace maroon::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// dst[i] = src[i], i < n, with NaN bit patterns (magnitude above infinity's) made canonical:
// whole vectors, then a vector of at most 8 lanes (conv's 8-wide rows on AVX-512), then one by one.
template <class T, class D>
HWY_INLINE void CopyVectors(D d, const T* HWY_RESTRICT src, int64_t n, T* HWY_RESTRICT dst, int64_t* i) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  constexpr T kAbs = sizeof(T) == 4 ? T(0x7FFFFFFFu) : T(0x7FFFFFFFFFFFFFFFull);
  constexpr T kInf = sizeof(T) == 4 ? T(0x7F800000u) : T(0x7FF0000000000000ull);
  constexpr T kCanon = sizeof(T) == 4 ? T(0x7FC00000u) : T(0x7FF8000000000000ull);
  const auto abs = hn::Set(d, kAbs), inf = hn::Set(d, kInf), canon = hn::Set(d, kCanon);
  for (; *i + L <= n; *i += L) {
    const auto v = hn::LoadU(d, src + *i);
    hn::StoreU(hn::IfThenElse(hn::Gt(hn::And(v, abs), inf), canon, v), d, dst + *i);
  }
}

template <class T>
void CopyRow(const T* HWY_RESTRICT src, int64_t n, T* HWY_RESTRICT dst) {
  int64_t i = 0;
  CopyVectors<T>(hn::ScalableTag<T>(), src, n, dst, &i);
  CopyVectors<T>(hn::CappedTag<T, 32 / sizeof(T)>(), src, n, dst, &i);
  constexpr T kAbs = sizeof(T) == 4 ? T(0x7FFFFFFFu) : T(0x7FFFFFFFFFFFFFFFull);
  constexpr T kInf = sizeof(T) == 4 ? T(0x7F800000u) : T(0x7FF0000000000000ull);
  constexpr T kCanon = sizeof(T) == 4 ? T(0x7FC00000u) : T(0x7FF8000000000000ull);
  for (; i < n; ++i) dst[i] = (src[i] & kAbs) > kInf ? kCanon : src[i];
}

template <class T>
HWY_INLINE void Zeros(T* d, int64_t n) {
  if (n == 1) d[0] = 0;
  else if (n == 2) d[0] = d[1] = 0;
  else if (n > 0) std::memset(d, 0, static_cast<size_t>(n) * sizeof(T));
}

template <class T>
void Plane(const PadPlane& p, const T* s, T* d) {
  std::memset(d, 0, static_cast<size_t>(p.lo1 * p.n2) * sizeof(T));
  for (int64_t i = p.lo1; i < p.hi1; ++i) {
    T* row = d + i * p.n2;
    Zeros(row, p.lo2);
    CopyRow(s + i * p.row_stride + p.lo2, p.hi2 - p.lo2, row + p.lo2);
    Zeros(row + p.hi2, p.n2 - p.hi2);
  }
  std::memset(d + p.hi1 * p.n2, 0, static_cast<size_t>((p.n1 - p.hi1) * p.n2) * sizeof(T));
}

void Plane32(const PadPlane& p, const uint32_t* s, uint32_t* d) { Plane(p, s, d); }
void Plane64(const PadPlane& p, const uint64_t* s, uint64_t* d) { Plane(p, s, d); }

}  // namespace maroon::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace maroon::cpu {
HWY_EXPORT(Plane32);
HWY_EXPORT(Plane64);
void pad_plane(const PadPlane& p, const uint32_t* s, uint32_t* d) { HWY_DYNAMIC_DISPATCH(Plane32)(p, s, d); }
void pad_plane(const PadPlane& p, const uint64_t* s, uint64_t* d) { HWY_DYNAMIC_DISPATCH(Plane64)(p, s, d); }
}  // namespace maroon::cpu
#endif
