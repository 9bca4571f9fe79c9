// The register transpose of B panels packed as x @ w.T's (columns a stride apart, each contiguous
// along k), shared by the packed matmul (gemm.cpp) and the small products read in place
// (gemm_direct.cpp, which packs such a panel per task), compiled once per SIMD target like both
// (Highway's -inl pattern: included again for each target, hence the toggled guard). Copies only.
#if defined(MAROON_CPU_GEMM_TRANSPOSE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef MAROON_CPU_GEMM_TRANSPOSE_INL_H_
#undef MAROON_CPU_GEMM_TRANSPOSE_INL_H_
#else
#define MAROON_CPU_GEMM_TRANSPOSE_INL_H_
#endif

#include <atomic>
#include <cstdint>

#include "cpu/gemm_pack.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace maroon::cpu::HWY_NAMESPACE {

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
// The usual unpack/shuffle/lane-swap 8 x 8 transpose of eight registers: o[m] holds element m of
// every r[i], in order of i.
HWY_INLINE void Transpose8Regs(const __m256 r[8], __m256 o[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int m = 0; m < 4; ++m) {
    o[m] = _mm256_permute2f128_ps(u[m], u[m + 4], 0x20);
    o[m + 4] = _mm256_permute2f128_ps(u[m], u[m + 4], 0x31);
  }
}

// Eight columns of B by eight k through registers: rows r[0..8) are columns j0..j0+8 of B (each
// contiguous along k), rows of the result are B's rows k..k+8 over those columns, stored at
// dst + m * nr.
HWY_INLINE void Transpose8x8(const float* s, int64_t stride, float* dst, int64_t nr) {
  __m256 r[8], o[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(s + i * stride);
  Transpose8Regs(r, o);
  for (int m = 0; m < 8; ++m) _mm256_storeu_ps(dst + m * nr, o[m]);
}
#endif

// A transposed B panel (pack_b_transposed's contract: `live` columns `stride` apart, each
// contiguous along k, as [k][nr], columns past live zero). float32 on x86 with AVX2 or better:
// 8 x 8 blocks through registers, eight columns at a time down the whole of k (eight source
// streams the prefetchers follow; blocks of 64 k measured 2-10% slower on 128x784 @ 784x512).
// Element by element it was 31% of a 128x512 @ (512x512).T product (the stores a row of the
// panel apart); a copy either way, so the same bits.
template <class T>
void PackBTransposed(const T* src, int64_t stride, int64_t live, int64_t nr, int64_t K, T* dst) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  if constexpr (sizeof(T) == 4) {
    const int64_t live8 = live / 8 * 8, K8 = K / 8 * 8;
    for (int64_t j = 0; j < live8; j += 8)
      for (int64_t k = 0; k < K8; k += 8) Transpose8x8(src + j * stride + k, stride, dst + k * nr + j, nr);
    for (int64_t k = 0; k < K; ++k) {  // the last columns, the last k, and the zero columns
      T* d = dst + k * nr;
      for (int64_t j = k < K8 ? live8 : 0; j < live; ++j) d[j] = src[j * stride + k];
      for (int64_t j = live; j < nr; ++j) d[j] = T(0);
    }
    g_register_transposed_panels.fetch_add(1, std::memory_order_relaxed);
    return;
  }
#endif
  pack_b_transposed(src, stride, live, nr, K, dst);
}

}  // namespace maroon::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // toggled include guard
