// SHA-256's compression function on the x86 SHA extensions (SHA-NI: sha256rnds2, sha256msg1/2),
// chosen at run time when the CPU has them. Why not OpenSSL, which does the same: the Python
// wheel must load nothing beyond libc/libm/libgcc/libstdc++ (tools/test_packages.sh), and the
// portable maroon::Sha256 hashes 170 MB/s here against 1.6 GB/s for these instructions, which
// committing a run's full state every step needs (8 MB per step for the MNIST MLP with Adam).
// The digests are the same either way; tests/verify compares the two on every length.
#include "verify/sha256_ni.h"

#include "data/sha256_constants.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace maroon::verify {

#if defined(__x86_64__)

bool have_sha_ni() {
  static const bool yes = [] {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSE4_1) || !(c & bit_SSSE3)) return false;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    return (b & (1u << 29)) != 0;  // CPUID.(EAX=7,ECX=0):EBX.SHA[bit 29]
  }();
  return yes;
}

using sha256_constants::kK;

// FIPS 180-4's 64 rounds per block, four at a time, for L messages at once (their chains
// interleaved). The state is kept as the instructions want it, (A,B,E,F) and (C,D,G,H); message
// words W[4i..4i+3] are M[i]: the first four from the block (big-endian), then M[i] =
// msg2(msg1(M[i-4], M[i-3]) + (M[i-2], M[i-1]) shifted by one word, M[i-1]), which is W[t] =
// s1(W[t-2]) + W[t-7] + s0(W[t-15]) + W[t-16] four words at a time. (Four messages spill
// registers and ran no faster than one.)
template <int L>
__attribute__((target("sha,sse4.1,ssse3"))) inline void blocks_of(uint32_t* const state[L],
                                                                   const uint8_t* const data[L], size_t blocks) {
  const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i s0[L], s1[L];
  for (int l = 0; l < L; ++l) {
    __m128i tmp = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(&state[l][0])), 0xB1);  // CDAB
    s1[l] = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(&state[l][4])), 0x1B);   // EFGH
    s0[l] = _mm_alignr_epi8(tmp, s1[l], 8);     // ABEF
    s1[l] = _mm_blend_epi16(s1[l], tmp, 0xF0);  // CDGH
  }
  for (size_t b = 0; b < blocks; ++b) {
    __m128i abef[L], cdgh[L], m[L][4];
    for (int l = 0; l < L; ++l) abef[l] = s0[l], cdgh[l] = s1[l];
    // Unrolled, so that m[] lives in registers and the branch folds away.
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) {
#pragma GCC unroll 2
      for (int l = 0; l < L; ++l) {
        __m128i w;
        if (i < 4) {
          w = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data[l] + 64 * b + 16 * i)), bswap);
        } else {
          __m128i x = _mm_add_epi32(_mm_sha256msg1_epu32(m[l][i % 4], m[l][(i + 1) % 4]),
                                    _mm_alignr_epi8(m[l][(i + 3) % 4], m[l][(i + 2) % 4], 4));
          w = _mm_sha256msg2_epu32(x, m[l][(i + 3) % 4]);
        }
        m[l][i % 4] = w;  // m[i % 4] held M[i-4], no longer needed
        __m128i wk = _mm_add_epi32(w, _mm_load_si128(reinterpret_cast<const __m128i*>(&kK[4 * i])));
        s1[l] = _mm_sha256rnds2_epu32(s1[l], s0[l], wk);
        s0[l] = _mm_sha256rnds2_epu32(s0[l], s1[l], _mm_shuffle_epi32(wk, 0x0E));
      }
    }
    for (int l = 0; l < L; ++l) s0[l] = _mm_add_epi32(s0[l], abef[l]), s1[l] = _mm_add_epi32(s1[l], cdgh[l]);
  }
  for (int l = 0; l < L; ++l) {
    __m128i tmp = _mm_shuffle_epi32(s0[l], 0x1B);          // FEBA
    __m128i dchg = _mm_shuffle_epi32(s1[l], 0xB1);         // DCHG
    _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[l][0]), _mm_blend_epi16(tmp, dchg, 0xF0));  // DCBA
    _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[l][4]), _mm_alignr_epi8(dchg, tmp, 8));     // HGFE
  }
}

__attribute__((target("sha,sse4.1,ssse3"))) void sha256_ni_blocks(uint32_t state[8], const uint8_t* data,
                                                                     size_t blocks) {
  uint32_t* const s[1] = {state};
  const uint8_t* const d[1] = {data};
  blocks_of<1>(s, d, blocks);
}

__attribute__((target("sha,sse4.1,ssse3"))) void sha256_ni_blocks2(uint32_t a[8], const uint8_t* p, uint32_t b[8],
                                                                      const uint8_t* q, size_t blocks) {
  uint32_t* const s[2] = {a, b};
  const uint8_t* const d[2] = {p, q};
  blocks_of<2>(s, d, blocks);
}

#else

bool have_sha_ni() { return false; }
void sha256_ni_blocks(uint32_t*, const uint8_t*, size_t) {}
void sha256_ni_blocks2(uint32_t*, const uint8_t*, uint32_t*, const uint8_t*, size_t) {}

#endif

}  // namespace maroon::verify
