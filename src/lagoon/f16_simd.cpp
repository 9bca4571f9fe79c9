// binary16 arithmetic vectorized with F16C + AVX, used when the CPU has them (checked at run
// time; the library itself is built for baseline x86-64).
//
// Why this is exact: binary16 inputs are exact in binary32; a binary32 +, -, x or / of two
// binary16 values rounds once to 24 bits, and rounding that again to binary16 (vcvtps2ph, in
// the MXCSR mode the RoundGuard set) equals one rounding of the exact result: for nearest
// because 24 >= 2*11 + 2 (Figueroa's double-rounding condition for these operations), for the
// directed modes because two roundings in one direction are one. Overflow and subnormals are
// the conversion's, which is IEEE. NaNs are then made canonical (0x7e00). tests/lagoon checks
// every op and mmul against sf:: in all four modes.
#include <atomic>
#include <cstdint>
#include <cstring>

#include "lagoon/internal.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define MAROON_LAGOON_F16C 1
#endif

namespace maroon::lagoon {

static std::atomic<bool> g_f16_simd{true};
bool f16_simd_enabled() { return g_f16_simd.load(std::memory_order_relaxed) && f16c_available(); }
void set_f16_simd_enabled(bool on) { g_f16_simd.store(on, std::memory_order_relaxed); }

#ifdef MAROON_LAGOON_F16C

// CPUID and XGETBV directly: clang-14's __builtin_cpu_supports does not know "f16c". AVX needs
// the OS to save the YMM registers (OSXSAVE, and XCR0 bits 1 and 2).
bool f16c_available() {
  static const bool ok = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    const bool f16c = c & (1u << 29), avx = c & (1u << 28), osxsave = c & (1u << 27);
    if (!(f16c && avx && osxsave)) return false;
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (lo & 6u) == 6u;
  }();
  return ok;
}

namespace {

__attribute__((target("avx,f16c"))) inline __m128i canon8(__m128i h) {
  const __m128i mag = _mm_and_si128(h, _mm_set1_epi16(0x7fff));
  const __m128i nan = _mm_cmpgt_epi16(mag, _mm_set1_epi16(0x7c00));
  return _mm_or_si128(_mm_andnot_si128(nan, h), _mm_and_si128(nan, _mm_set1_epi16(0x7e00)));
}

__attribute__((target("avx,f16c"))) inline __m256 load8(const uint8_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

__attribute__((target("avx,f16c"))) inline __m128i round8(__m256 x) {
  return canon8(_mm256_cvtps_ph(x, _MM_FROUND_CUR_DIRECTION));
}

__attribute__((target("avx,f16c"))) inline __m256 op8(int op, __m256 a, __m256 b) {
  switch (op) {
    case 0: return _mm256_add_ps(a, b);
    case 1: return _mm256_sub_ps(a, b);
    case 2: return _mm256_mul_ps(a, b);
    default: return _mm256_div_ps(a, b);
  }
}

}  // namespace

// op: 0 add, 1 sub, 2 mul, 3 div. Processes 8 elements at a time, the tail through a padded
// copy (so every element takes the same path).
__attribute__((target("avx,f16c"))) void f16_binary(int op, const uint8_t* a, const uint8_t* b, uint8_t* out,
                                                    uint64_t n) {
  uint64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i r = round8(op8(op, load8(a + 2 * i), load8(b + 2 * i)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * i), r);
  }
  if (i < n) {
    uint8_t ta[16] = {}, tb[16] = {}, tr[16];
    std::memcpy(ta, a + 2 * i, 2 * (n - i));
    std::memcpy(tb, b + 2 * i, 2 * (n - i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(tr), round8(op8(op, load8(ta), load8(tb))));
    std::memcpy(out + 2 * i, tr, 2 * (n - i));
  }
}

// Lagoon's mmul in binary16: per output acc = +0, acc = acc + a_ik * b_kj (k ascending), each
// product and each sum rounded to binary16. i-k-j order, 8 outputs of a row per vector.
__attribute__((target("avx,f16c"))) void f16_mmul(const uint8_t* a, const uint8_t* b, uint8_t* out, uint64_t M,
                                                  uint64_t K, uint64_t P) {
  const uint64_t P8 = (P + 7) / 8 * 8;
  // b as binary32 rows padded to a multiple of 8 (exact conversion).
  float* bf = static_cast<float*>(_mm_malloc(sizeof(float) * K * P8 + 32, 32));
  float* c = static_cast<float*>(_mm_malloc(sizeof(float) * P8 + 32, 32));
  for (uint64_t k = 0; k < K; ++k) {
    for (uint64_t j = 0; j < P8; j += 8) {
      uint8_t t[16] = {};
      std::memcpy(t, b + 2 * (k * P + j), 2 * (j + 8 <= P ? 8 : P - j));
      _mm256_store_ps(bf + k * P8 + j, load8(t));
    }
  }
  for (uint64_t i = 0; i < M; ++i) {
    for (uint64_t j = 0; j < P8; j += 8) _mm256_store_ps(c + j, _mm256_setzero_ps());
    for (uint64_t k = 0; k < K; ++k) {
      uint16_t ah;
      std::memcpy(&ah, a + 2 * (i * K + k), 2);
      const __m256 aik = _mm256_cvtph_ps(_mm_set1_epi16(short(ah)));
      const float* brow = bf + k * P8;
      for (uint64_t j = 0; j < P8; j += 8) {
        __m256 p = _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_mul_ps(aik, _mm256_load_ps(brow + j)),
                                                   _MM_FROUND_CUR_DIRECTION));
        __m256 s = _mm256_add_ps(_mm256_load_ps(c + j), p);
        _mm256_store_ps(c + j, _mm256_cvtph_ps(_mm256_cvtps_ph(s, _MM_FROUND_CUR_DIRECTION)));
      }
    }
    for (uint64_t j = 0; j < P8; j += 8) {
      uint8_t t[16];
      _mm_storeu_si128(reinterpret_cast<__m128i*>(t), round8(_mm256_load_ps(c + j)));
      std::memcpy(out + 2 * (i * P + j), t, 2 * (j + 8 <= P ? 8 : P - j));
    }
  }
  _mm_free(bf);
  _mm_free(c);
}

#else

bool f16c_available() { return false; }
void f16_binary(int, const uint8_t*, const uint8_t*, uint8_t*, uint64_t) {}
void f16_mmul(const uint8_t*, const uint8_t*, uint8_t*, uint64_t, uint64_t, uint64_t) {}

#endif

}  // namespace maroon::lagoon
