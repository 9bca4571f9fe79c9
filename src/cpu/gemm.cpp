// The matmul kernel: REDUCE ADD over MUL of two strided leaves. Each output is summed exactly as
// src/ref sums it: acc = +0, then acc = acc + round(a[i,k] * b[k,j]) for k = 0, 1, ... in
// order, multiply and add rounded separately (Lagoon's mmul, SoftBLAS gemm). Speed comes only
// from doing many outputs at once: packed panels, a register tile of 6x4, 12x2 or 4x2 vectors
// across j (the last rows and columns by shorter or narrower kernels: MicroEdge), and blocking
// over k that stores and reloads the running sums exactly.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/gemm.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "cpu/gemm.h"
#include "cpu/gemm_pack.h"
#include "cpu/gemm_micro-inl.h"
#include "cpu/gemm_transpose-inl.h"

namespace maroon::cpu {
std::atomic<int64_t>& direct_task_count();  // shared by every target's kernel (defined below)
std::atomic<int64_t>& span_a_panel_count();
std::atomic<int64_t>& span_b_panel_count();
std::atomic<int64_t>& column_run_task_count();
std::atomic<int64_t>& edge_task_count(GemmEdge kind);  // shared by every target's kernel (defined below)
std::atomic<int64_t>& fused_tile_task_count();
std::atomic<int64_t>& task_span_panel_count();
std::atomic<int64_t>& a_in_place_task_count();
}  // namespace maroon::cpu

HWY_BEFORE_NAMESPACE();
namespace maroon::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Where a micro-kernel reads its B panel for a k block: packed ([k][NV vectors], contiguous), or
// in place in B (gemm_direct_panel): vector j of row k at base[j] + kb[k].
template <class T>
struct BSource {
  const T* packed;
  const T* base[4];
  const int64_t* kb;
};

// The micro-kernel body for a register tile of MAROON_ROWS rows by MAROON_COLS vectors:
// row r of the tile (at c[r]) += sum over k of ap[k][r] * bp[k][..], one rounding for each
// product and each sum, k in increasing order. first: the sums start here from +0 (the fold's
// identity), nothing is loaded. last: the sums are final, so a NaN is made the canonical one.
// Rows are pointers, so a tile is read and written in place in the output or in a scratch tile.
// A macro, because the accumulators must be named registers (SVE's sizeless vectors cannot live
// in arrays).
// The tile's end: on the last k block a NaN made the canonical one, then every row stored.
#define MAROON_MICRO_FINISH                     \
  if (last) {                                   \
    const auto nan = hn::Set(d, CanonicalNaN<T>()); \
    MAROON_ROWS(MAROON_CANON)                   \
  }                                             \
  MAROON_ROWS(MAROON_STORE)
#define MAROON_MICRO_BODY(MR, NV)                                                    \
  const hn::ScalableTag<T> d;                                                        \
  const size_t L = hn::Lanes(d);                                                     \
  const T* HWY_RESTRICT bp = bs.packed;                                              \
  const int64_t* HWY_RESTRICT kb = bs.kb;                                            \
  MAROON_BCOLS(MAROON_BASE)                                                          \
  MAROON_ROWS(MAROON_LOAD)                                                           \
  for (int k = 0; k < kc; ++k) {                                                     \
    MAROON_BCOLS(MAROON_LOADB)                                                       \
    const T* a = ap + k * (MR);                                                      \
    MAROON_ROWS(MAROON_STEP)                                                         \
  }                                                                                  \
  MAROON_MICRO_FINISH
// B's vector j of row k: from the packed panel ([k][NV vectors]), or in place (kDirect).
#define MAROON_BASE(j) const T* bb##j = bs.base[j];
#define MAROON_LOADB(j) \
  const auto b##j = kDirect ? hn::LoadU(d, bb##j + kb[k]) : hn::LoadU(d, bp + (k * kNV + (j)) * L);
#define MAROON_LOADC(r, j) auto c##r##j = first ? hn::Zero(d) : hn::LoadU(d, c[r] + (j) * L);
#define MAROON_LOAD(r) MAROON_COLS(MAROON_LOADC, r)
#define MAROON_STEPC(r, j) c##r##j = ProductStep<kFma>(d, a + (r), b##j, c##r##j);
#define MAROON_STEP(r) MAROON_COLS(MAROON_STEPC, r)
#define MAROON_CANONC(r, j) c##r##j = hn::IfThenElse(hn::IsNaN(c##r##j), nan, c##r##j);
#define MAROON_CANON(r) MAROON_COLS(MAROON_CANONC, r)
#define MAROON_STOREC(r, j) hn::StoreU(c##r##j, d, c[r] + (j) * L);
#define MAROON_STORE(r) MAROON_COLS(MAROON_STOREC, r)
#undef MAROON_ROWS
#undef MAROON_COLS
#undef MAROON_BCOLS

template <class T, bool kDirect, bool kFma>
HWY_NOINLINE void Micro4x2(const T* HWY_RESTRICT ap, const BSource<T>& bs, int kc, T* const* c, bool first,
                           bool last) {
#define MAROON_ROWS(X) X(0) X(1) X(2) X(3)
#define MAROON_COLS(Y, r) Y(r, 0) Y(r, 1)
#define MAROON_BCOLS(Z) Z(0) Z(1)
  constexpr size_t kNV = 2;
  MAROON_MICRO_BODY(4, 2)
#undef MAROON_ROWS
#undef MAROON_COLS
#undef MAROON_BCOLS
}

template <class T, bool kDirect, bool kFma>
HWY_NOINLINE void Micro12x2(const T* HWY_RESTRICT ap, const BSource<T>& bs, int kc, T* const* c, bool first,
                            bool last) {
#define MAROON_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define MAROON_COLS(Y, r) Y(r, 0) Y(r, 1)
#define MAROON_BCOLS(Z) Z(0) Z(1)
  constexpr size_t kNV = 2;
  MAROON_MICRO_BODY(12, 2)
#undef MAROON_ROWS
#undef MAROON_COLS
#undef MAROON_BCOLS
}

template <class T, bool kDirect, bool kFma>
HWY_NOINLINE void Micro6x4(const T* HWY_RESTRICT ap, const BSource<T>& bs, int kc, T* const* c, bool first,
                            bool last) {
#define MAROON_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define MAROON_COLS(Y, r) Y(r, 0) Y(r, 1) Y(r, 2) Y(r, 3)
#define MAROON_BCOLS(Z) Z(0) Z(1) Z(2) Z(3)
  constexpr size_t kNV = 4;
  MAROON_MICRO_BODY(6, 4)
#undef MAROON_ROWS
#undef MAROON_COLS
#undef MAROON_BCOLS
}

// 8 rows: conv2d's 16, 32 and 64 output channels fill whole tiles (6 rows computed 18, 36, 66).
template <class T, bool kDirect, bool kFma>
HWY_NOINLINE void Micro8x3(const T* HWY_RESTRICT ap, const BSource<T>& bs, int kc, T* const* c, bool first,
                            bool last) {
#define MAROON_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define MAROON_COLS(Y, r) Y(r, 0) Y(r, 1) Y(r, 2)
#define MAROON_BCOLS(Z) Z(0) Z(1) Z(2)
  constexpr size_t kNV = 3;
  MAROON_MICRO_BODY(8, 3)
#undef MAROON_ROWS
#undef MAROON_COLS
#undef MAROON_BCOLS
}

// A tile whose A is read in place, not packed (Block's a_in_place): row r's element k is at
// A + off[r] + kA[k], broadcast from there as the packed tiles broadcast theirs from the panel.
// The same steps in the same k order as the packed tile (the packed panel holds copies of
// these elements), so the same bits. B is packed.
template <class T>
using MicroAFn = void (*)(const T*, const int64_t*, const int64_t*, const BSource<T>&, int, T* const*, bool, bool);
#define MAROON_MICRO_A_BODY(MR, NV)                                                  \
  const hn::ScalableTag<T> d;                                                        \
  const size_t L = hn::Lanes(d);                                                     \
  const T* HWY_RESTRICT bp = bs.packed;                                              \
  MAROON_ROWS(MAROON_OFFSET)                                                         \
  MAROON_ROWS(MAROON_LOAD)                                                           \
  for (int k = 0; k < kc; ++k) {                                                     \
    MAROON_BCOLS(MAROON_LOADBP)                                                      \
    const T* a = A + kA[k];                                                          \
    MAROON_ROWS(MAROON_STEPA)                                                        \
  }                                                                                  \
  MAROON_MICRO_FINISH
#define MAROON_OFFSET(r) const int64_t o##r = off[r];
#define MAROON_LOADBP(j) const auto b##j = hn::LoadU(d, bp + (k * kNV + (j)) * L);
#define MAROON_STEPAC(r, j) c##r##j = ProductStep<kFma>(d, a + o##r, b##j, c##r##j);
#define MAROON_STEPA(r) MAROON_COLS(MAROON_STEPAC, r)
template <class T, bool kFma>
HWY_NOINLINE void MicroA12x2(const T* HWY_RESTRICT A, const int64_t* off, const int64_t* HWY_RESTRICT kA,
                             const BSource<T>& bs, int kc, T* const* c, bool first, bool last) {
#define MAROON_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define MAROON_COLS(Y, r) Y(r, 0) Y(r, 1)
#define MAROON_BCOLS(Z) Z(0) Z(1)
  constexpr size_t kNV = 2;
  MAROON_MICRO_A_BODY(12, 2)
#undef MAROON_ROWS
#undef MAROON_COLS
#undef MAROON_BCOLS
}
template <class T, bool kFma>
HWY_NOINLINE void MicroA6x4(const T* HWY_RESTRICT A, const int64_t* off, const int64_t* HWY_RESTRICT kA,
                            const BSource<T>& bs, int kc, T* const* c, bool first, bool last) {
#define MAROON_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define MAROON_COLS(Y, r) Y(r, 0) Y(r, 1) Y(r, 2) Y(r, 3)
#define MAROON_BCOLS(Z) Z(0) Z(1) Z(2) Z(3)
  constexpr size_t kNV = 4;
  MAROON_MICRO_A_BODY(6, 4)
#undef MAROON_ROWS
#undef MAROON_COLS
#undef MAROON_BCOLS
}

// Edge tiles: the last rows or columns of a product that do not fill a register tile (a batch of
// 128 rows in 6-row tiles leaves 2, a 784-column weight gradient in 64-column panels leaves 16),
// computed by a kernel of R rows by V vectors that reads the whole tile's panels (A's [k][MR],
// B's [k][kNV vectors]) and skips the padded rows and columns: 6 x 4 computed 24 vectors for 4 in
// those. Each output is the same fold over k as in a whole tile, so not a bit changes. The
// accumulators of the largest edge (12 x 4) are named; those outside R x V are discarded by
// `if constexpr`, so R x V of them are live.
#define MAROON_EROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define MAROON_ECOLS(Y, r) Y(r, 0) Y(r, 1) Y(r, 2) Y(r, 3)
#define MAROON_EBCOLS(Z) Z(0) Z(1) Z(2) Z(3)
#define MAROON_EON(r, j) if constexpr ((r) < R && (j) < V)
#define MAROON_EDECL(r, j) [[maybe_unused]] auto c##r##j = hn::Zero(d);
#define MAROON_ELOADC(r, j) MAROON_EON(r, j) if (!first) c##r##j = hn::LoadU(d, c[r] + (j) * L);
#define MAROON_EBASE(j) [[maybe_unused]] const T* bb##j = bs.base[j];
#define MAROON_ELOADB(j)                                                                                   \
  [[maybe_unused]] auto b##j = hn::Zero(d);                                                                \
  if constexpr ((j) < V) {                                                                                 \
    b##j = kDirect ? hn::LoadU(d, bb##j + kb[k]) : hn::LoadU(d, bp + (k * kNV + (j)) * L);                \
    KeepInRegister(b##j);                                                                                  \
  }
#define MAROON_ESTEP(r, j) MAROON_EON(r, j) c##r##j = ProductStep<kFma>(d, a + (r), b##j, c##r##j);
#define MAROON_ECANON(r, j) MAROON_EON(r, j) c##r##j = hn::IfThenElse(hn::IsNaN(c##r##j), nan, c##r##j);
#define MAROON_ESTORE(r, j) MAROON_EON(r, j) hn::StoreU(c##r##j, d, c[r] + (j) * L);
#define MAROON_EROW(r) MAROON_ECOLS(MAROON_EDO, r)
// A step over k vector by vector: each B vector loaded once, then used by every row.
#define MAROON_ECOLSTEP(j)                                                                       \
  MAROON_ELOADB(j)                                                                               \
  MAROON_ESTEP(0, j) MAROON_ESTEP(1, j) MAROON_ESTEP(2, j) MAROON_ESTEP(3, j) MAROON_ESTEP(4, j) \
  MAROON_ESTEP(5, j) MAROON_ESTEP(6, j) MAROON_ESTEP(7, j) MAROON_ESTEP(8, j) MAROON_ESTEP(9, j) \
  MAROON_ESTEP(10, j) MAROON_ESTEP(11, j)

// Pins v to a register. GCC let MulBroadcast's product take the register of its B operand and
// loaded B again for the next row (twice the loads in the 2 x 4 edge: 70% of a 6 x 4 tile's time
// for a third of its work); a value out of an asm cannot be loaded again.
template <class V>
HWY_INLINE void KeepInRegister(V& v) {
#if (HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL) && defined(__GNUC__)
  asm("" : "+v"(v.raw));
#else
  (void)v;
#endif
}

template <class T, bool kDirect, bool kFma, int R, int V, int MR, size_t kNV>
HWY_NOINLINE void MicroEdge(const T* HWY_RESTRICT ap, const BSource<T>& bs, int kc, T* const* c, bool first,
                            bool last) {
  static_assert(R <= MR && V <= static_cast<int>(kNV) && R <= 12 && V <= 4);
  const hn::ScalableTag<T> d;
  const size_t L = hn::Lanes(d);
  const T* HWY_RESTRICT bp = bs.packed;
  [[maybe_unused]] const int64_t* HWY_RESTRICT kb = bs.kb;
  MAROON_EBCOLS(MAROON_EBASE)
#define MAROON_EDO MAROON_EDECL
  MAROON_EROWS(MAROON_EROW)
#undef MAROON_EDO
#define MAROON_EDO MAROON_ELOADC
  MAROON_EROWS(MAROON_EROW)
#undef MAROON_EDO
  for (int k = 0; k < kc; ++k) {
    const T* a = ap + k * MR;
    MAROON_EBCOLS(MAROON_ECOLSTEP)
  }
  if (last) {
    const auto nan = hn::Set(d, CanonicalNaN<T>());
#define MAROON_EDO MAROON_ECANON
    MAROON_EROWS(MAROON_EROW)
#undef MAROON_EDO
  }
#define MAROON_EDO MAROON_ESTORE
  MAROON_EROWS(MAROON_EROW)
#undef MAROON_EDO
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
// Six rows of A by eight k (rows[r] + off .. + 8, each contiguous), as eight groups of six (the
// panel's [k][6] layout) at dst: the 8 x 8 transpose with two unused rows; each group is stored
// as eight floats, the next group overwriting the two extra, and the last as four plus two.
HWY_INLINE void Pack6x8(const float* const* rows, int64_t off, float* dst) {
  __m256 r[8], o[8];
  for (int i = 0; i < 6; ++i) r[i] = _mm256_loadu_ps(rows[i] + off);
  r[6] = r[7] = _mm256_setzero_ps();
  Transpose8Regs(r, o);
  for (int m = 0; m < 7; ++m) _mm256_storeu_ps(dst + 6 * m, o[m]);
  _mm_storeu_ps(dst + 42, _mm256_castps256_ps128(o[7]));
  _mm_storel_pi(reinterpret_cast<__m64*>(dst + 46), _mm256_extractf128_ps(o[7], 1));
}

// Eight rows of A by eight k (rows[r] + off .. + 8, each contiguous), as eight groups of eight at
// dst: the 8 x 8 transpose (the 8 x 3 tile's panels: conv2d's weights computed transposed, 16 to
// 64 output channels, each row contiguous along (cin, kh, kw)).
HWY_INLINE void Pack8x8(const float* const* rows, int64_t off, float* dst) {
  __m256 r[8], o[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(rows[i] + off);
  Transpose8Regs(r, o);
  for (int m = 0; m < 8; ++m) _mm256_storeu_ps(dst + 8 * m, o[m]);
}

// Twelve rows of A by eight k (rows[r] + off .. + 8, each contiguous), as eight groups of twelve
// at dst: rows 0-7 through the 8 x 8 transpose, rows 8-11 as four 4 x 4 transposes within
// 128-bit lanes (group m's four in the low half of u[m % 4] for m < 4, the high half after).
HWY_INLINE void Pack12x8(const float* const* rows, int64_t off, float* dst) {
  __m256 r[8], o[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(rows[i] + off);
  Transpose8Regs(r, o);
  for (int m = 0; m < 8; ++m) _mm256_storeu_ps(dst + 12 * m, o[m]);
  const __m256 a = _mm256_loadu_ps(rows[8] + off), b = _mm256_loadu_ps(rows[9] + off);
  const __m256 c = _mm256_loadu_ps(rows[10] + off), e = _mm256_loadu_ps(rows[11] + off);
  const __m256 t0 = _mm256_unpacklo_ps(a, b), t1 = _mm256_unpackhi_ps(a, b);
  const __m256 t2 = _mm256_unpacklo_ps(c, e), t3 = _mm256_unpackhi_ps(c, e);
  const __m256 u[4] = {_mm256_shuffle_ps(t0, t2, 0x44), _mm256_shuffle_ps(t0, t2, 0xEE),
                       _mm256_shuffle_ps(t1, t3, 0x44), _mm256_shuffle_ps(t1, t3, 0xEE)};
  for (int m = 0; m < 4; ++m) {
    _mm_storeu_ps(dst + 12 * m + 8, _mm256_castps256_ps128(u[m]));
    _mm_storeu_ps(dst + 12 * (m + 4) + 8, _mm256_extractf128_ps(u[m], 1));
  }
}

// MR rows (4, 6 or 12) by four k (rows[r] + off .. + 4, each contiguous), as four groups of MR at
// dst: 4 x 4 transposes of 128-bit registers, the last two of six rows as pairs of 64 bits.
template <int MR>
HWY_INLINE void PackRowsX4(const float* const* rows, int64_t off, float* dst) {
  for (int g = 0; g + 4 <= MR; g += 4) {
    const __m128 a = _mm_loadu_ps(rows[g] + off), b = _mm_loadu_ps(rows[g + 1] + off);
    const __m128 c = _mm_loadu_ps(rows[g + 2] + off), e = _mm_loadu_ps(rows[g + 3] + off);
    const __m128 t0 = _mm_unpacklo_ps(a, b), t1 = _mm_unpackhi_ps(a, b);  // k 0, 1 and k 2, 3 of a, b
    const __m128 t2 = _mm_unpacklo_ps(c, e), t3 = _mm_unpackhi_ps(c, e);
    _mm_storeu_ps(dst + g, _mm_movelh_ps(t0, t2));
    _mm_storeu_ps(dst + MR + g, _mm_movehl_ps(t2, t0));
    _mm_storeu_ps(dst + 2 * MR + g, _mm_movelh_ps(t1, t3));
    _mm_storeu_ps(dst + 3 * MR + g, _mm_movehl_ps(t3, t1));
  }
  if constexpr (MR % 4 == 2) {
    const __m128 a = _mm_loadu_ps(rows[MR - 2] + off), b = _mm_loadu_ps(rows[MR - 1] + off);
    const __m128 lo = _mm_unpacklo_ps(a, b), hi = _mm_unpackhi_ps(a, b);
    _mm_storel_pi(reinterpret_cast<__m64*>(dst + MR - 2), lo);
    _mm_storeh_pi(reinterpret_cast<__m64*>(dst + 2 * MR - 2), lo);
    _mm_storel_pi(reinterpret_cast<__m64*>(dst + 3 * MR - 2), hi);
    _mm_storeh_pi(reinterpret_cast<__m64*>(dst + 4 * MR - 2), hi);
  }
}

// A panel of MR (4, 6 or 12) whole rows of float32 whose rows are not all adjacent, eight k at a
// time through registers wherever eight consecutive k are eight adjacent elements (kA steps by
// one), then four, the other k element by element. Two products take it: the usual matmul (each row
// contiguous along the whole of k) and conv2d's weight gradient computed transposed, whose rows
// are (cin, ky, kx) and whose k are (image, oy, ox): runs of k along an output row (20 for
// beautiful_mnist's second layer, 8 for its third, 6 for its fourth). The panel is [k][MR] as
// pack_a_panel writes it: a copy either way, so the same bits. Returns the number of blocks of 8
// or 4 k transposed; *runs:
// how many runs of adjacent k the panel had.
template <int MR>
int64_t PackARows(const float* const* rows, const int64_t* kA, int kc, float* dst, int64_t* runs) {
  int64_t blocks = 0;
  *runs = 0;
  for (int k = 0, e; k < kc; ++*runs) {
    for (e = k + 1; e < kc && kA[e] == kA[e - 1] + 1;) ++e;  // k .. e: one run of adjacent elements
    for (; k + 8 <= e; k += 8, ++blocks) {
      if constexpr (MR == 4) {
        PackRowsX4<MR>(rows, kA[k], dst + k * MR);
        PackRowsX4<MR>(rows, kA[k] + 4, dst + (k + 4) * MR);
      } else if constexpr (MR == 6) {
        Pack6x8(rows, kA[k], dst + k * MR);
      } else if constexpr (MR == 8) {
        Pack8x8(rows, kA[k], dst + k * MR);
      } else {
        Pack12x8(rows, kA[k], dst + k * MR);
      }
    }
    if (k + 4 <= e) {  // a run's last 4 to 7 k (20 = 8 + 8 + 4; the fourth layer's runs of 6)
      PackRowsX4<MR>(rows, kA[k], dst + k * MR);
      k += 4;
      ++blocks;
    }
    for (; k < e; ++k)
      for (int r = 0; r < MR; ++r) dst[k * MR + r] = rows[r][kA[k]];
  }
  return blocks;
}
#endif

#if HWY_TARGET == HWY_AVX3 && defined(__GNUC__)
// Rows [r0, r1) of a panel that lie within 32 elements after the first (offsets from it in idx,
// lanes r0..r1 of the vector that PackASpan stores).
struct SpanSegment {
  __m512i idx;
  __mmask16 lo, hi, lanes;  // the span's lanes in the first and second 16; the panel's lanes
  int64_t first;            // rows[r0] - rows[0]
  int64_t second;           // where the second load starts: 16 on, or 0 (nothing read) for a short span
};

inline bool FindSegment(const float* const* rows, int r0, int r1, SpanSegment* s) {
  alignas(64) int32_t idx[16] = {};
  int64_t span = 1;
  for (int r = r0; r < r1; ++r) {
    const int64_t o = rows[r] - rows[r0];
    if (o < 0 || o >= 32) return false;
    idx[r] = static_cast<int32_t>(o);
    span = std::max(span, o + 1);
  }
  s->idx = _mm512_load_si512(idx);
  s->lo = static_cast<__mmask16>((1u << std::min<int64_t>(span, 16)) - 1);
  s->hi = static_cast<__mmask16>((1u << std::max<int64_t>(span - 16, 0)) - 1);
  s->lanes = static_cast<__mmask16>(((1u << r1) - 1) & ~((1u << r0) - 1));
  s->first = rows[r0] - rows[0];
  s->second = span > 16 ? 16 : 0;  // no address past the span is formed
  return true;
}

inline __m512 LoadSegment(const SpanSegment& s, const float* p) {
  return _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(s.lo, p + s.first), s.idx, _mm512_maskz_loadu_ps(s.hi, p + s.first + s.second));
}

// A panel of MR float32 rows in at most two groups, each within 32 elements of its first row
// (conv2d's im2col rows when the product is not computed transposed: output positions along a
// row, 2 apart for a stride-2 conv, and those of the next row), one k at a time: the elements of
// k are rows[r][kA[k]], so two masked loads of each group's span and a lane permute give the
// panel's row k ([k][MR]), stored through a mask. Element by element (PackARows' loop, for runs
// of k shorter than 4: a 3x3 window's rows of three) this packing was 38% of a 16->32 stride-2
// conv's time. Masked lanes are not read, and every lane read lies between two elements of the
// panel's rows. A copy either way, so the same bits. False (nothing written) if the rows are not
// so.
// Rows [0, MR) as one group within 32 elements of the first (*split = MR) or two (the second
// from *split on); false if they are not.
template <int MR>
bool FindGroups(const float* const* rows, SpanSegment* a, SpanSegment* b, int* split) {
  *split = MR;
  if (FindSegment(rows, 0, MR, a)) return true;
  int s = 1;
  while (s < MR && rows[s] - rows[0] >= 0 && rows[s] - rows[0] < 32) ++s;
  *split = s;
  return FindSegment(rows, 0, s, a) && FindSegment(rows, s, MR, b);
}

template <int MR>
bool PackASpan(const float* const* rows, const int64_t* kA, int kc, float* dst) {
  static_assert(MR <= 16, "one vector of lanes per k");
  SpanSegment a, b;
  int split;  // the second group's first row, if any
  if (!FindGroups<MR>(rows, &a, &b, &split)) return false;
  const __mmask16 out = static_cast<__mmask16>((1u << MR) - 1);
  const float* const base = rows[0];
  if (split == MR) {
    for (int k = 0; k < kc; ++k) _mm512_mask_storeu_ps(dst + k * MR, out, LoadSegment(a, base + kA[k]));
  } else {
    for (int k = 0; k < kc; ++k) {
      const float* p = base + kA[k];
      _mm512_mask_storeu_ps(dst + k * MR, out, _mm512_mask_mov_ps(LoadSegment(a, p), b.lanes, LoadSegment(b, p)));
    }
  }
  span_a_panel_count().fetch_add(1, std::memory_order_relaxed);
  return true;
}

// A B panel of NV vectors of float32 (columns col[0, live), the rest zero) where each vector's 16
// columns lie in one or two groups within 32 elements of their first (PackASpan's rows, here the
// columns of conv2d's im2col matrix computed transposed: output positions 2 apart along a row for
// a stride-2 conv, or two rows of an 8-wide image), as [k][16 NV]: per k two masked loads per
// group, a lane permute, a blend of the groups; a vector at a time down k, so its masks and lane
// indices stay in registers. Element by element (pack_b_panels' runs of one) such a panel kept
// stride-2 convs from being computed transposed. A copy either way, so the same bits. False
// (nothing written) if a vector is partly live, some live vector's columns are not so, or all
// are adjacent (a plain copy, or read in place).
template <int NV>
struct SpanPanel {
  SpanSegment a[NV], b[NV];
  int split[NV];
  const float* base[NV];
  int nv;  // live vectors; the rest of the panel is zero
};

// Whether a B panel (columns col[0, live)) is such a panel, and its segments if so.
template <int NV>
bool FindSpanPanel(const float* B, const int64_t* col, int64_t live, SpanPanel<NV>* s) {
  if (live % 16 != 0) return false;
  s->nv = static_cast<int>(std::min<int64_t>(live / 16, NV));
  bool apart = false;
  for (int v = 0; v < s->nv; ++v) {
    const float* rows[16];
    for (int r = 0; r < 16; ++r) rows[r] = B + col[16 * v + r];
    if (!FindGroups<16>(rows, &s->a[v], &s->b[v], &s->split[v])) return false;
    s->base[v] = rows[0];
    apart = apart || !adjacent(col + 16 * v, 16);
  }
  return apart;
}

// Rows kB[0, K) of a panel FindSpanPanel found, as [k][16 NV] at dst.
template <int NV>
void PackSpanPanel(const SpanPanel<NV>& sp, const int64_t* kB, int64_t K, float* dst) {
  constexpr int64_t kStep = 16 * NV;
  for (int v = 0; v < sp.nv; ++v) {
    const SpanSegment s = sp.a[v];
    const float* const base = sp.base[v];
    float* d = dst + 16 * v;
    if (sp.split[v] == 16) {
      for (int64_t k = 0; k < K; ++k) _mm512_storeu_ps(d + k * kStep, LoadSegment(s, base + kB[k]));
    } else {
      const SpanSegment t = sp.b[v];
      for (int64_t k = 0; k < K; ++k) {
        const float* p = base + kB[k];
        _mm512_storeu_ps(d + k * kStep, _mm512_mask_mov_ps(LoadSegment(s, p), t.lanes, LoadSegment(t, p)));
      }
    }
  }
  for (int v = sp.nv; v < NV; ++v)
    for (int64_t k = 0; k < K; ++k) _mm512_storeu_ps(dst + k * kStep + 16 * v, _mm512_setzero_ps());
}

template <int NV>
bool PackBSpan(const float* B, const int64_t* col, int64_t live, const int64_t* kB, int64_t K, float* dst) {
  SpanPanel<NV> sp;
  if (!FindSpanPanel<NV>(B, col, live, &sp)) return false;
  PackSpanPanel<NV>(sp, kB, K, dst);
  span_b_panel_count().fetch_add(1, std::memory_order_relaxed);
  return true;
}
#endif

// pack_a_panel, with full panels of four (AVX2's tile), six or twelve float32 rows that are not
// all adjacent (PackARows) transposed in registers on x86 with AVX2 or better. Element by element it was 6%
// of a 128x512 @ 512x512 product (six whole rows), and 9% of the CPU samples of a CNN training
// step (the second layer's weight gradient, twelve rows read through kA).
template <class T, int MR>
void PackAPanel(const GemmArgs& g, int64_t b, int64_t i0, int64_t k0, int kc, T* dst) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  if constexpr (sizeof(T) == 4 && (MR == 4 || MR == 6 || MR == 8 || MR == 12)) {
    if (i0 + MR <= g.M) {
      const T* A = static_cast<const T*>(g.A) + g.batchA[b];
      const T* rows[MR];
      bool adj = true;  // rows one element apart are pack_a_panel's memcpy
      for (int r = 0; r < MR; ++r) {
        rows[r] = A + g.rowA[i0 + r];
        adj = adj && rows[r] == rows[0] + r;
      }
      if (!adj) {
#if HWY_TARGET == HWY_AVX3 && defined(__GNUC__)
        // Only where k's runs of adjacent elements are shorter than 4 (conv2d's windows of three):
        // longer ones (the weight gradient's output rows) go through PackARows' transposes.
        const int64_t* kA = g.kA + k0;
        if constexpr (MR >= 6) {
          if (kc >= 4 && kA[3] != kA[0] + 3 && PackASpan<MR>(rows, kA, kc, dst)) return;
        }
#endif
        int64_t runs = 0;
        const int64_t blocks = PackARows<MR>(rows, g.kA + k0, kc, dst, &runs);
        if (blocks == 0) g_row_a_panels.fetch_add(1, std::memory_order_relaxed);  // no run of 8 k
        else (runs == 1 ? g_register_a_panels : g_register_window_a_panels).fetch_add(1, std::memory_order_relaxed);
        return;
      }
    }
  }
#endif
  pack_a_panel<T, MR>(g, b, i0, k0, kc, dst);
}

// B panels [p0, p1) packed by PackBSpan where the first one can be (float32, AVX-512): the others
// that cannot, one by one as PackB would (in place, or pack_b_panels). False, nothing written, if the first panel is not such a panel.
template <class T, int NV>
bool SpanPanels(const GemmArgs& g, int64_t b, T* bpack, int64_t p0, int64_t p1) {
#if HWY_TARGET == HWY_AVX3 && defined(__GNUC__)
  if constexpr (sizeof(T) == 4) {
    const hn::ScalableTag<T> d;
    const int64_t L = static_cast<int64_t>(hn::Lanes(d)), nr = NV * L;
    const float* B = static_cast<const float*>(g.B) + g.batchB[b];
    auto span = [&](int64_t p) {
      return PackBSpan<NV>(B, g.colB + p * nr, std::min(nr, g.N - p * nr), g.kB, g.K, bpack + p * g.K * nr);
    };
    if (!span(p0)) return false;
    for (int64_t p = p0 + 1; p < p1; ++p)
      if (!span(p) && !(g.direct_b && gemm_direct_panel(g, p, nr, L)))
        pack_b_panels<T, PackBTransposed<T>>(g, b, nr, bpack, p, p + 1);
    return true;
  }
#endif
  (void)g, (void)b, (void)bpack, (void)p0, (void)p1;
  return false;
}

// Panels a task packs itself, a k block at a time, just before its tiles read them
// (GemmArgs::span_in_block): PackBSpan's panels (float32, AVX-512), not read in place. Packed
// whole up front (a 8-wide image's 64 -> 64 conv: 576 x 256 floats a task, 590 KB) they went
// to L2 and came back, and pushed the image out of it; a k block's panel (at most 160 x 64
// floats) stays in L1. A copy either way, so the same bits. Elsewhere an empty struct.
#if HWY_TARGET == HWY_AVX3 && defined(__GNUC__)
template <int NV>
using TaskSpan = SpanPanel<NV>;
#else
template <int NV>
struct TaskSpan {};
#endif

// Whether panel p of batch b is one (PackB skips it), and its segments in *s if so.
template <class T, int NV>
bool TaskSpanPanel(const GemmArgs& g, int64_t b, int64_t p, TaskSpan<NV>* s) {
#if HWY_TARGET == HWY_AVX3 && defined(__GNUC__)
  if constexpr (sizeof(T) == 4) {
    constexpr int64_t nr = NV * 16;
    if (!g.span_in_block || (g.direct_b && gemm_direct_panel(g, p, nr, 16))) return false;
    return FindSpanPanel<NV>(static_cast<const float*>(g.B) + g.batchB[b], g.colB + p * nr, std::min(nr, g.N - p * nr),
                             s);
  }
#endif
  (void)g, (void)b, (void)p, (void)s;
  return false;
}

// Rows kB[0, kc) of such a panel at dst ([k][NR]).
template <class T, int NV>
void PackTaskSpan(const TaskSpan<NV>& s, const int64_t* kB, int kc, T* dst) {
#if HWY_TARGET == HWY_AVX3 && defined(__GNUC__)
  if constexpr (sizeof(T) == 4) return PackSpanPanel<NV>(s, kB, kc, dst);
#endif
  (void)s, (void)kB, (void)kc, (void)dst;
}

// Packs every B panel of batch b once; all tasks of the batch share them. A is packed by each
// task for its own rows, a k block at a time, so no buffer ever holds all of A: for conv2d, A is
// the im2col matrix, many times larger than the image.
// Panels the kernel reads in place (gemm_direct_panel) are skipped.
template <class T, int NV>
void PackB(const GemmArgs& g, int64_t b, T* bpack, int64_t p0, int64_t p1) {
  const hn::ScalableTag<T> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d)), nr = NV * L;
  if (g.span_in_block) {  // the task packs PackBSpan's panels itself
    for (int64_t p = p0; p < p1; ++p) {
      TaskSpan<NV> s;
      if (!TaskSpanPanel<T, NV>(g, b, p, &s) && !(g.direct_b && gemm_direct_panel(g, p, nr, L)))
        pack_b_panels<T, PackBTransposed<T>>(g, b, nr, bpack, p, p + 1);
    }
    return;
  }
  if (p0 < p1 && SpanPanels<T, NV>(g, b, bpack, p0, p1)) return;
  if (!g.direct_b) return pack_b_panels<T, PackBTransposed<T>>(g, b, nr, bpack, p0, p1);
  for (int64_t p = p0; p < p1; ++p)
    if (!gemm_direct_panel(g, p, nr, L)) pack_b_panels<T, PackBTransposed<T>>(g, b, nr, bpack, p, p + 1);
}

// One task: rows [i0, i0+MC) x columns [j0, j0+span) of batch b, k blocked by gemm_kc (the running
// sums are stored and reloaded exactly, so blocking changes no bit) and columns by NC. A is
// packed once per k block and used for every column block; each B panel is then read by every
// row panel in turn, so it stays in L1 while A's panels (the whole block's, in L2) pass by (row
// panels outside, the other way round, streamed each B panel from L2 again for every row panel).
// Tiles are independent sums, so their order changes no bit. A register tile whose output columns
// are adjacent and whose kernel computes only rows and columns of the output keeps its running
// sums in the output itself; the rest (edges past the output, or an output with scattered
// columns) in a scratch tile copied out at the end.
template <class T>
using MicroFn = void (*)(const T*, const BSource<T>&, int, T* const*, bool, bool);

// A tile's kernel and the rows and vectors it computes (an edge kernel's fewer than the tile's).
template <class T>
struct TileKernel {
  MicroFn<T> fn;
  int rows, vecs;
};
// The kernel for an edge tile of `rows` rows and `vecs` vectors of the product (fewer than the
// tile's of either); direct: B read in place (whole panels only, so vecs is the tile's).
template <class T>
using EdgeFn = TileKernel<T> (*)(int64_t rows, int64_t vecs, bool direct);

// How many runs of adjacent offsets idx[0, n) is in.
inline int64_t ColumnRuns(const int64_t* idx, int64_t n) {
  int64_t runs = n > 0;
  for (int64_t j = 1; j < n; ++j) runs += idx[j] != idx[j - 1] + 1;
  return runs;
}

// Whether a task reads A in place (MicroA) instead of packing it: only where each element of
// a packed panel would be read by a single tile (one column panel) and k runs through A in runs
// (its first four k adjacent). First for conv2d's weight gradient computed transposed, whose A
// is the im2col matrix (rows (cin, ky, kx), k (image, oy, ox) in runs along output rows):
// packed, the copy of every element (PackARows) was a fifth of beautiful_mnist's second-layer
// weight gradient (fused, one thread: 123 -> 89 ms with A in place; 66 -> 54 ms on two threads).
// Then a row-major A too (session 32): the ONNX transformer's x @ W of 64 columns (its second
// FFN layer, K 256, and the attention's output projection), whose packing was 5% of a fused run
// (`perf`): fused 8.10 / 8.45 -> 7.72 / 8.27 ms (min / median of 14 alternating rounds, one
// thread), default 10.51 / 10.67 -> 10.03 / 10.47 (8 rounds); the CNN, ResNet, MobileNet, the
// MNIST MLP and the MNIST CNN's training measured the same either way. A forward
// conv's rows of three (PackASpan's panels) measured the same either way on the ONNX CNN and
// ResNet, and keep their packing (their first four k are not adjacent). The path never changes
// a bit.
inline bool AInPlace(const GemmArgs& g, int64_t np) { return np == 1 && g.K >= 64 && g.kA[3] == g.kA[0] + 3; }

template <class T, int kMR, int NV, MicroFn<T> Micro, MicroFn<T> MicroDirect, EdgeFn<T> Edge = nullptr,
          MicroAFn<T> MicroA = nullptr>
void Block(const GemmArgs& g, const T* bpack, int64_t task) {
  const hn::ScalableTag<T> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d)), NR = NV * L;
  const GemmTaskBox box = gemm_task_box(g, task);
  const int64_t b = box.b, i0 = box.i0, j0 = box.j0, mc = box.mc, nc = box.nc;
  const int64_t mp = (mc + kMR - 1) / kMR, np = (nc + NR - 1) / NR;
  const int64_t ldc = np * NR;
  T* const C = static_cast<T*>(g.C) + g.batchC[b];
  if (g.K == 0) {  // empty sums: +0
    for (int64_t i = 0; i < mc; ++i)
      for (int64_t j = 0; j < nc; ++j) C[g.rowC[i0 + i] + g.colC[j0 + j]] = T(0);
    return;
  }
  // Panel pj's output columns are adjacent; it is read in place; packed here (TaskSpanPanel).
  thread_local std::vector<char> unit, in_b, in_task;
  unit.resize(static_cast<size_t>(np));
  in_b.resize(static_cast<size_t>(np));
  in_task.resize(static_cast<size_t>(np));
  // Segments of those panels (a vector of them was not given the 64-byte alignment of their
  // lane indices): aligned here by hand.
  thread_local std::unique_ptr<uint64_t[]> span_mem;
  thread_local size_t span_cap = 0;
  const size_t span_bytes = static_cast<size_t>(np) * sizeof(TaskSpan<NV>) + alignof(TaskSpan<NV>);
  auto* const spans = reinterpret_cast<TaskSpan<NV>*>(
      (reinterpret_cast<uintptr_t>(scratch(&span_mem, &span_cap, span_bytes)) + alignof(TaskSpan<NV>) - 1) /
      alignof(TaskSpan<NV>) * alignof(TaskSpan<NV>));
  bool any_in_b = false, all_in_b = true;
  int64_t task_spans = 0;
  for (int64_t pj = 0; pj < np; ++pj) {
    unit[pj] = adjacent(g.colC + j0 + pj * NR, std::min(NR, nc - pj * NR));
    in_b[pj] = gemm_direct_panel(g, j0 / NR + pj, NR, static_cast<int64_t>(hn::Lanes(d)));
    any_in_b |= in_b[pj] != 0;
    all_in_b &= in_b[pj] != 0;
    in_task[pj] = TaskSpanPanel<T, NV>(g, b, j0 / NR + pj, &spans[pj]);
    task_spans += in_task[pj];
  }
  if (any_in_b) direct_task_count().fetch_add(1, std::memory_order_relaxed);
  if (task_spans) {
    span_b_panel_count().fetch_add(task_spans, std::memory_order_relaxed);
    task_span_panel_count().fetch_add(task_spans, std::memory_order_relaxed);
  }
  const T* const B = static_cast<const T*>(g.B) + g.batchB[b];
  // Tile (pi, pj)'s kernel: the whole tile's, or an edge kernel that computes no padded row or
  // column (or fewer of them).
  bool edge[3] = {};  // the GemmEdge kinds this task ran, for the harness's path checks
  auto kernel = [&](int64_t pi, int64_t pj) -> TileKernel<T> {
    const int64_t rows = std::min<int64_t>(kMR, mc - pi * kMR), vecs = (std::min(NR, nc - pj * NR) + L - 1) / L;
    if constexpr (Edge != nullptr) {
      if (rows < kMR || vecs < NV) {
        const TileKernel<T> e = Edge(rows, vecs, in_b[pj] != 0);
        edge[static_cast<int>(in_b[pj] ? GemmEdge::kShortRowsBInPlace : GemmEdge::kShortRows)] |= e.rows < kMR;
        edge[static_cast<int>(GemmEdge::kNarrowColumns)] |= e.vecs < NV;
        return e;
      }
    }
    return {in_b[pj] ? MicroDirect : Micro, kMR, NV};
  };
  // Whether the tile keeps its sums in the output: its columns adjacent there, and every row and
  // column its kernel computes one of the output's.
  auto in_place = [&](int64_t pi, int64_t pj, const TileKernel<T>& t) {
    return unit[pj] && pi * kMR + t.rows <= mc && pj * NR + t.vecs * L <= nc;
  };
  // Grown without zero-filling (every element read is written first): vectors resized between
  // tasks of different widths zeroed what they grew by, 7% of a 128x10 @ 10x512 product.
  thread_local std::unique_ptr<uint64_t[]> cmem, amem;
  thread_local size_t ccap = 0, acap = 0;
  T* const ctile = static_cast<T*>(scratch(&cmem, &ccap, static_cast<size_t>(mp * kMR * ldc) * sizeof(T)));
  const int64_t KC = gemm_kc(g, all_in_b);
  T* const apack = static_cast<T*>(scratch(&amem, &acap, static_cast<size_t>(mp * kMR * KC) * sizeof(T)));
  thread_local std::unique_ptr<uint64_t[]> smem;
  thread_local size_t scap = 0;
  T* const spack = task_spans ? static_cast<T*>(scratch(&smem, &scap, static_cast<size_t>(KC * NR) * sizeof(T))) : nullptr;
  // With one column panel each row panel of A is read once per k block: packed just before its
  // tile, so that it is read back from L1 (packed all first, the block's panels, 48 KB for the
  // CNN's weight gradients, left L1 before their tiles ran). beautiful_mnist's second layer's
  // weight gradient, fused, batch 512, two threads: 71-73 -> 66-70 ms; the ONNX transformer,
  // fused, one thread: 9.2-10.0 -> 8.9-9.2 ms (alternating rounds). Packing order changes no bit.
  const bool pack_each = np == 1;
  // A packed once for every task (GemmArgs::apacked): its panels for k block k0 are read there.
  const T* const shared_a = g.apacked && g.apacked_mr == kMR && i0 == 0 ? static_cast<const T*>(g.apacked) : nullptr;
  // A read in place (AInPlace): every tile whole (kMR x NV, its rows past the product's reading
  // the last row again and landing in the scratch tile), B packed.
  const bool a_in_place = MicroA != nullptr && !shared_a && !any_in_b && task_spans == 0 && AInPlace(g, np);
  if (a_in_place) a_in_place_task_count().fetch_add(1, std::memory_order_relaxed);
  const T* const A = static_cast<const T*>(g.A) + g.batchA[b];
  auto tile = [&](int64_t pi, int64_t pj) { return a_in_place ? TileKernel<T>{nullptr, kMR, NV} : kernel(pi, pj); };
  for (int64_t k0 = 0; k0 < g.K; k0 += KC) {
    const int kc = static_cast<int>(std::min<int64_t>(KC, g.K - k0));
    auto pack_a = [&](int64_t pi) {
      if (!shared_a) PackAPanel<T, kMR>(g, b, i0 + pi * kMR, k0, kc, apack + pi * kc * kMR);
    };
    auto a_panel = [&](int64_t pi) -> const T* {
      return shared_a ? shared_a + (pi * g.K + k0) * kMR : apack + pi * kc * kMR;
    };
    if (!pack_each && !a_in_place)
      for (int64_t pi = 0; pi < mp; ++pi) pack_a(pi);
    for (int64_t pj = 0; pj < np; ++pj) {
      BSource<T> bs{bpack + ((j0 / NR + pj) * g.K + k0) * NR, {}, g.kB + k0};
      if (in_b[pj])
        for (int j = 0; j < NV; ++j) bs.base[j] = B + g.colB[j0 + pj * NR + j * L];
      if (in_task[pj]) {
        PackTaskSpan<T, NV>(spans[pj], g.kB + k0, kc, spack);
        bs.packed = spack;
      }
      for (int64_t pi = 0; pi < mp; ++pi) {
        if (pack_each && !a_in_place) pack_a(pi);
        const TileKernel<T> t = tile(pi, pj);
        const bool out = in_place(pi, pj, t);
        T* rows[kMR];
        for (int r = 0; r < kMR; ++r) {  // rows past t.rows: never touched by the kernel
          const int64_t i = pi * kMR + r;
          rows[r] = out && r < t.rows ? C + g.rowC[i0 + i] + g.colC[j0 + pj * NR] : ctile + i * ldc + pj * NR;
        }
        if (a_in_place) {
          int64_t off[kMR];
          for (int r = 0; r < kMR; ++r) off[r] = g.rowA[i0 + std::min<int64_t>(pi * kMR + r, mc - 1)];
          if constexpr (MicroA != nullptr) MicroA(A, off, g.kA + k0, bs, kc, rows, k0 == 0, k0 + kc == g.K);
          continue;
        }
        t.fn(a_panel(pi), bs, kc, rows, k0 == 0, k0 + kc == g.K);
      }
    }
  }
  bool column_runs = false;  // a tile written as its rows' runs of columns, for the harness
  for (int64_t pj = 0; pj < np; ++pj) {  // tiles not kept in place
    const int64_t ja = pj * NR, jb = std::min(nc, (pj + 1) * NR);
    for (int64_t pi = 0; pi < mp; ++pi) {
      if (in_place(pi, pj, tile(pi, pj))) continue;
      const int64_t ia = pi * kMR, ib = std::min(mc, (pi + 1) * kMR);
      if (unit[pj]) {  // an edge tile
        for (int64_t i = ia; i < ib; ++i)
          for (int64_t j = ja; j < jb; ++j) C[g.rowC[i0 + i] + g.colC[j0 + j]] = ctile[i * ldc + j];
        continue;
      }
      // Columns in runs (conv2d computed transposed: a panel across two images, its rows the
      // channels a plane apart): each row's runs of adjacent columns copied whole. Element by
      // element (below, rows in runs of one) this was most of Block's own samples in the ResNet.
      if (ColumnRuns(g.colC + j0 + ja, jb - ja) * 2 <= jb - ja) {
        for (int64_t i = ia; i < ib; ++i) {
          T* out = C + g.rowC[i0 + i];
          const T* src = ctile + i * ldc;
          for (int64_t a = ja, e; a < jb; a = e) {
            for (e = a + 1; e < jb && g.colC[j0 + e] == g.colC[j0 + e - 1] + 1;) ++e;
            copy_run(out + g.colC[j0 + a], src + a, e - a);
          }
        }
        column_runs = true;
        continue;
      }
      // Scattered columns (conv2d's output channels, a plane apart): runs of rows adjacent in
      // the output are written column by column, each a contiguous run.
      for (int64_t ra = ia, rb; ra < ib; ra = rb) {
        for (rb = ra + 1; rb < ib && g.rowC[i0 + rb] == g.rowC[i0 + rb - 1] + 1;) ++rb;
        for (int64_t j = ja; j < jb; ++j) {
          T* out = C + g.rowC[i0 + ra] + g.colC[j0 + j];
          for (int64_t i = ra; i < rb; ++i) out[i - ra] = ctile[i * ldc + j];
        }
      }
    }
  }
  for (int e = 0; e < 3; ++e)
    if (edge[e]) edge_task_count(static_cast<GemmEdge>(e)).fetch_add(1, std::memory_order_relaxed);
  if (column_runs) column_run_task_count().fetch_add(1, std::memory_order_relaxed);
}

// The tile for a product with N columns: wide (6 x 4) when it has at least one full wide panel
// and its zero columns past N waste at most an eighth of the work more than narrow panels would
// (a 96-column float32 product on AVX-512 computed 128 columns in wide panels, 96 in narrow:
// 72 GFLOP/s against OpenBLAS's 105 one-thread). The tile never changes a bit.
template <class T>
bool Wide(int64_t N) {
  const hn::ScalableTag<T> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const int64_t pad_wide = (N + 4 * L - 1) / (4 * L) * (4 * L) - N, pad_narrow = (N + 2 * L - 1) / (2 * L) * (2 * L) - N;
  return kWideTiles && N >= 4 * L && (pad_wide == pad_narrow || 8 * pad_wide <= N);
}

enum class Tile { k6x4, k8x3, k12x2, k4x2 };

// The tile for an M x N product. Where the wide tile would be used, 8 x 3 instead when it
// computes fewer padded outputs (rows and columns past the product's): a product of one row
// block whose rows are a multiple of 8 and not of 6 (conv2d's 16 or 32 output channels). Every
// caller asks with the same M and N as the packing and the kernel: the tile never changes a bit.
template <class T>
Tile TileFor(int64_t M, int64_t N) {
  if (!kWideTiles) return Tile::k4x2;
  if (!Wide<T>(N)) return Tile::k12x2;
  const hn::ScalableTag<T> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  auto work = [&](int64_t mr, int64_t nr) { return (M + mr - 1) / mr * mr * ((N + nr - 1) / nr * nr); };
  return M <= kGemmMC && work(8, 3 * L) < work(6, 4 * L) ? Tile::k8x3 : Tile::k6x4;
}

template <class T>
void PanelSizes(int64_t M, int64_t N, int64_t* mr, int64_t* nr) {
  const hn::ScalableTag<T> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  switch (TileFor<T>(M, N)) {
    case Tile::k6x4: *mr = 6, *nr = 4 * L; return;
    case Tile::k8x3: *mr = 8, *nr = 3 * L; return;
    case Tile::k12x2: *mr = 12, *nr = 2 * L; return;
    case Tile::k4x2: *mr = 4, *nr = 2 * L; return;
  }
}

template <class T>
void PackAny(const GemmArgs& g, int64_t b, void* bp, int64_t p0, int64_t p1) {
  switch (TileFor<T>(g.M, g.N)) {
    case Tile::k6x4: return PackB<T, 4>(g, b, static_cast<T*>(bp), p0, p1);
    case Tile::k8x3: return PackB<T, 3>(g, b, static_cast<T*>(bp), p0, p1);
    default: return PackB<T, 2>(g, b, static_cast<T*>(bp), p0, p1);
  }
}

// Edge kernels of an MR x NV tile: the last columns (vecs < NV) as MR rows by vecs vectors; the
// last rows as R0 or R1 rows (the fewest that hold them) by NV vectors, or the whole tile for more;
// a corner as whichever of the two computes fewer vectors. A panel read in place exists whole in B
// (gemm_direct_panel), so its last columns are computed as whole vectors: column edges have no
// direct variant.
template <class T, bool F, int MR, int NV, int V>
TileKernel<T> Narrow(int64_t vecs) {  // MR rows by vecs (<= V < NV) vectors
  if constexpr (V > 1)
    if (vecs < V) return Narrow<T, F, MR, NV, V - 1>(vecs);
  return {MicroEdge<T, false, F, MR, V, MR, NV>, MR, V};
}
template <class T, bool F, int MR, int NV, int R0, int R1>
TileKernel<T> EdgeOf(int64_t rows, int64_t vecs, bool direct) {
  const int r = rows <= R0 ? R0 : rows <= R1 ? R1 : MR;
  if (vecs < NV && !direct && MR * vecs <= r * NV) return Narrow<T, F, MR, NV, NV - 1>(vecs);
  if (r == R0) return {direct ? MicroEdge<T, true, F, R0, NV, MR, NV> : MicroEdge<T, false, F, R0, NV, MR, NV>, R0, NV};
  if (r == R1) return {direct ? MicroEdge<T, true, F, R1, NV, MR, NV> : MicroEdge<T, false, F, R1, NV, MR, NV>, R1, NV};
  return {nullptr, 0, 0};  // the whole tile: Block's own kernel
}

template <class T, bool F>
TileKernel<T> Edge6x4(int64_t rows, int64_t vecs, bool direct) {
  const TileKernel<T> e = EdgeOf<T, F, 6, 4, 2, 4>(rows, vecs, direct);
  return e.fn ? e : TileKernel<T>{direct ? Micro6x4<T, true, F> : Micro6x4<T, false, F>, 6, 4};
}
template <class T, bool F>
TileKernel<T> Edge12x2(int64_t rows, int64_t vecs, bool direct) {
  const TileKernel<T> e = EdgeOf<T, F, 12, 2, 4, 8>(rows, vecs, direct);
  return e.fn ? e : TileKernel<T>{direct ? Micro12x2<T, true, F> : Micro12x2<T, false, F>, 12, 2};
}
template <class T, bool F>
TileKernel<T> Edge4x2(int64_t rows, int64_t vecs, bool direct) {
  const TileKernel<T> e = EdgeOf<T, F, 4, 2, 2, 2>(rows, vecs, direct);
  return e.fn ? e : TileKernel<T>{direct ? Micro4x2<T, true, F> : Micro4x2<T, false, F>, 4, 2};
}

// F: the tiles' step is an FMA (REDUCE_MULACC) rather than a multiply then an add: the only
// difference between the two products' kernels (packing, blocking, edges, epilogues are shared).
// A read in place (Block's a_in_place): float32 on AVX-512, whose 32 registers hold the tile,
// its B vectors and the row offsets' broadcasts (elsewhere A is packed, with the same bits).
#if (HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL) && defined(__GNUC__)
template <class T, bool F>
constexpr MicroAFn<T> kMicroA12x2 = std::is_same_v<T, float> ? MicroA12x2<T, F> : nullptr;
template <class T, bool F>
constexpr MicroAFn<T> kMicroA6x4 = std::is_same_v<T, float> ? MicroA6x4<T, F> : nullptr;
#else
template <class T, bool F>
constexpr MicroAFn<T> kMicroA12x2 = nullptr;
template <class T, bool F>
constexpr MicroAFn<T> kMicroA6x4 = nullptr;
#endif

template <class T, bool F>
void BlockAny(const GemmArgs& g, const void* bp, int64_t t) {
  const T* p = static_cast<const T*>(bp);
  switch (TileFor<T>(g.M, g.N)) {
    case Tile::k6x4:
      return Block<T, 6, 4, Micro6x4<T, false, F>, Micro6x4<T, true, F>, Edge6x4<T, F>, kMicroA6x4<T, F>>(g, p, t);
    case Tile::k8x3: return Block<T, 8, 3, Micro8x3<T, false, F>, Micro8x3<T, true, F>>(g, p, t);
    case Tile::k12x2:
      return Block<T, 12, 2, Micro12x2<T, false, F>, Micro12x2<T, true, F>, Edge12x2<T, F>, kMicroA12x2<T, F>>(g, p, t);
    case Tile::k4x2: return Block<T, 4, 2, Micro4x2<T, false, F>, Micro4x2<T, true, F>, Edge4x2<T, F>>(g, p, t);
  }
}

// Row panels [p0, p1) of MR rows for the whole of K (GemmArgs::apacked): each the copy a task's
// PackAPanel makes a k block at a time, so the tiles read the same values.
template <class T>
void PackAWhole(const GemmArgs& g, int64_t mr, int64_t p0, int64_t p1, void* dst) {
  T* out = static_cast<T*>(dst);
  const int K = static_cast<int>(g.K);
  for (int64_t p = p0; p < p1; ++p) {
    T* panel = out + p * g.K * mr;
    switch (mr) {
      case 4: PackAPanel<T, 4>(g, 0, p * 4, 0, K, panel); break;
      case 6: PackAPanel<T, 6>(g, 0, p * 6, 0, K, panel); break;
      case 8: PackAPanel<T, 8>(g, 0, p * 8, 0, K, panel); break;
      case 12: PackAPanel<T, 12>(g, 0, p * 12, 0, K, panel); break;
      default: throw std::logic_error("gemm_pack_a: no tile of " + std::to_string(mr) + " rows");
    }
  }
}

void PackAF32(const GemmArgs& g, int64_t mr, int64_t p0, int64_t p1, void* dst) { PackAWhole<float>(g, mr, p0, p1, dst); }
void PackAF64(const GemmArgs& g, int64_t mr, int64_t p0, int64_t p1, void* dst) { PackAWhole<double>(g, mr, p0, p1, dst); }
void PackF32(const GemmArgs& g, int64_t b, void* bp, int64_t p0, int64_t p1) { PackAny<float>(g, b, bp, p0, p1); }
void PackF64(const GemmArgs& g, int64_t b, void* bp, int64_t p0, int64_t p1) { PackAny<double>(g, b, bp, p0, p1); }
void BlockF32(const GemmArgs& g, const void* bp, int64_t t) { BlockAny<float, false>(g, bp, t); }
void BlockF64(const GemmArgs& g, const void* bp, int64_t t) { BlockAny<double, false>(g, bp, t); }
// The fused tiles exist only where the target has an FMA instruction; the planner asks
// fused_native_fma() (gemm_fused.h) first, so the others are never called.
#if HWY_NATIVE_FMA
void BlockF32Fma(const GemmArgs& g, const void* bp, int64_t t) { BlockAny<float, true>(g, bp, t); }
void BlockF64Fma(const GemmArgs& g, const void* bp, int64_t t) { BlockAny<double, true>(g, bp, t); }
#else
void BlockF32Fma(const GemmArgs&, const void*, int64_t) { throw std::logic_error("fused tile on a target without FMA"); }
void BlockF64Fma(const GemmArgs&, const void*, int64_t) { throw std::logic_error("fused tile on a target without FMA"); }
#endif
void SizesF32(int64_t M, int64_t N, int64_t* mr, int64_t* nr) { PanelSizes<float>(M, N, mr, nr); }
void SizesF64(int64_t M, int64_t N, int64_t* mr, int64_t* nr) { PanelSizes<double>(M, N, mr, nr); }

}  // namespace maroon::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace maroon::cpu {
HWY_EXPORT(PackAF32);
HWY_EXPORT(PackAF64);
HWY_EXPORT(PackF32);
HWY_EXPORT(PackF64);
HWY_EXPORT(BlockF32);
HWY_EXPORT(BlockF64);
HWY_EXPORT(BlockF32Fma);
HWY_EXPORT(BlockF64Fma);
HWY_EXPORT(SizesF32);
HWY_EXPORT(SizesF64);

void gemm_panel_sizes(DType d, int64_t M, int64_t N, int64_t* mr, int64_t* nr) {
  if (d == DType::Float32) HWY_DYNAMIC_DISPATCH(SizesF32)(M, N, mr, nr);
  else HWY_DYNAMIC_DISPATCH(SizesF64)(M, N, mr, nr);
}
void gemm_pack_a(DType d, const GemmArgs& g, int64_t mr, int64_t p0, int64_t p1, void* dst) {
  if (d == DType::Float32) HWY_DYNAMIC_DISPATCH(PackAF32)(g, mr, p0, p1, dst);
  else HWY_DYNAMIC_DISPATCH(PackAF64)(g, mr, p0, p1, dst);
}
void gemm_pack_b(DType d, const GemmArgs& g, int64_t b, void* bp, int64_t p0, int64_t p1) {
  if (d == DType::Float32) HWY_DYNAMIC_DISPATCH(PackF32)(g, b, bp, p0, p1);
  else HWY_DYNAMIC_DISPATCH(PackF64)(g, b, bp, p0, p1);
}
std::atomic<int64_t>& direct_task_count() {
  static std::atomic<int64_t> n{0};
  return n;
}
int64_t gemm_direct_tasks() { return direct_task_count().load(std::memory_order_relaxed); }
std::atomic<int64_t>& span_a_panel_count() {
  static std::atomic<int64_t> n{0};
  return n;
}
int64_t gemm_span_a_panels() { return span_a_panel_count().load(std::memory_order_relaxed); }
std::atomic<int64_t>& span_b_panel_count() {
  static std::atomic<int64_t> n{0};
  return n;
}
int64_t gemm_span_b_panels() { return span_b_panel_count().load(std::memory_order_relaxed); }
std::atomic<int64_t>& column_run_task_count() {
  static std::atomic<int64_t> n{0};
  return n;
}
int64_t gemm_column_run_tasks() { return column_run_task_count().load(std::memory_order_relaxed); }
std::atomic<int64_t>& edge_task_count(GemmEdge kind) {
  static std::atomic<int64_t> n[3]{};
  return n[static_cast<int>(kind)];
}
int64_t gemm_edge_tasks(GemmEdge kind) { return edge_task_count(kind).load(std::memory_order_relaxed); }
void gemm_task(DType d, const GemmArgs& g, const void* bp, int64_t task) {
  if (g.fused) {
    fused_tile_task_count().fetch_add(1, std::memory_order_relaxed);
    if (d == DType::Float32) HWY_DYNAMIC_DISPATCH(BlockF32Fma)(g, bp, task);
    else HWY_DYNAMIC_DISPATCH(BlockF64Fma)(g, bp, task);
  } else if (d == DType::Float32) {
    HWY_DYNAMIC_DISPATCH(BlockF32)(g, bp, task);
  } else {
    HWY_DYNAMIC_DISPATCH(BlockF64)(g, bp, task);
  }
}
std::atomic<int64_t>& fused_tile_task_count() {
  static std::atomic<int64_t> n{0};
  return n;
}
std::atomic<int64_t>& task_span_panel_count() {
  static std::atomic<int64_t> n{0};
  return n;
}
int64_t gemm_task_span_panels() { return task_span_panel_count().load(std::memory_order_relaxed); }
std::atomic<int64_t>& a_in_place_task_count() {
  static std::atomic<int64_t> n{0};
  return n;
}
int64_t gemm_a_in_place_tasks() { return a_in_place_task_count().load(std::memory_order_relaxed); }
int64_t gemm_fused_tile_tasks() { return fused_tile_task_count().load(std::memory_order_relaxed); }
}  // namespace maroon::cpu
#endif
