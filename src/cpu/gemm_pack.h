// Packing shared by the default matmul (gemm.cpp) and the fused one (fused_matmul.cpp): copies
// only, so neither how panels are split between threads nor the target can change a bit.
#pragma once
#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstdint>
#include <cstring>

#include "cpu/gemm.h"

namespace maroon::cpu {

// Whether idx[0..n) steps by one (a row or column that is contiguous in memory).
// In blocks of 16 without a branch per element, which the compiler turns into vector compares:
// element by element, Block's checks of each panel's columns (48 to 64 offsets, twice) were a
// fifth of its own samples in the ONNX ResNet. Unsigned, so that no offset can overflow.
inline bool adjacent(const int64_t* idx, int64_t n) {
  if (n <= 1) return true;
  const uint64_t first = static_cast<uint64_t>(idx[0]);
  for (int64_t i0 = 0; i0 < n; i0 += 16) {
    const int64_t e = std::min<int64_t>(n, i0 + 16);
    uint64_t differ = 0;
    for (int64_t i = i0; i < e; ++i) differ |= static_cast<uint64_t>(idx[i]) ^ (first + static_cast<uint64_t>(i));
    if (differ) return false;
  }
  return true;
}

// Whether B panel p (columns [p * nr, (p + 1) * nr), vectors of L lanes) is read by the kernel
// in place instead of packed: where the caller allows it (g.direct_b), every column of the panel
// exists, and each vector's L columns are adjacent in B, so vector j of row k is one unaligned
// load at B + colB[p * nr + j * L] + kB[k]. conv2d computed transposed: B is the im2col matrix of
// a padded image, and a vector is L positions along one output row (a width of 16 or 32); packing
// it copied each image element nine times. The kernel reads the same values either way.
inline bool gemm_direct_panel(const GemmArgs& g, int64_t p, int64_t nr, int64_t L) {
  if (!g.direct_b || (p + 1) * nr > g.N) return false;
  for (int64_t j = p * nr; j < (p + 1) * nr; j += L)
    if (!adjacent(g.colB + j, L)) return false;
  return true;
}

// A run of n elements, in 32-byte pieces the compiler inlines: the runs are short (conv2d's
// output rows of 8 to 32 positions), and a libc memcpy call for each was 7% of a ResNet's run.
template <class T>
inline void copy_run(T* dst, const T* src, int64_t n) {
  constexpr int64_t kPiece = 32 / sizeof(T);
  int64_t i = 0;
  for (; i + kPiece <= n; i += kPiece) std::memcpy(dst + i, src + i, 32);
  for (; i < n; ++i) dst[i] = src[i];
}

// Panels pack_b_transposed has packed in this process (gemm.cpp; the harness checks that its
// cases take that path: gemm_transposed_b_panels()).
extern std::atomic<int64_t> g_transposed_b_panels;
// Transposed panels packed through registers (gemm.cpp's PackBTransposed; for the harness:
// gemm_register_transposed_panels()).
extern std::atomic<int64_t> g_register_transposed_panels;
// A panels of four, six or twelve float32 rows, each contiguous along k, packed through registers
// (gemm.cpp's PackAPanel; gemm_register_a_panels()).
extern std::atomic<int64_t> g_register_a_panels;
// A panels read through a scattered kA (conv2d's weight gradient) with runs of adjacent k packed
// through registers (gemm.cpp's PackAPanel; gemm_register_window_a_panels()).
extern std::atomic<int64_t> g_register_window_a_panels;
// A panels packed as MR rows read one at a time, unrolled (pack_a_panel; gemm_row_a_panels()
// for the harness).
extern std::atomic<int64_t> g_row_a_panels;

// Whether idx[0..n) steps by one fixed stride (at least two elements).
inline bool strided(const int64_t* idx, int64_t n) {
  if (n < 2) return false;
  for (int64_t i = 2; i < n; ++i)
    if (idx[i] - idx[i - 1] != idx[1] - idx[0]) return false;
  return true;
}

// One B panel whose `live` columns lie `stride` apart, each contiguous along k (B is the
// transpose of a row-major matrix: x @ w.T, every linear layer's forward product), as [k][nr]
// at dst: a block of 16 k at a time, each column's run along k read in order and written down
// the block's rows, which stay in cache. Element by element through the index tables (below)
// this pack was 9% of an MNIST MLP training step; x @ w.T for x 128x784, w 512x784 went from
// 1.02 to 0.87 ms on one thread (x @ w with w stored transposed: 0.82 ms). Blocks of 16
// columns by 16 k (16 rows read at a time instead of 64) measured 0.90-0.92 ms.
template <class T>
void pack_b_transposed(const T* src, int64_t stride, int64_t live, int64_t nr, int64_t K, T* dst) {
  constexpr int64_t kKB = 16;
  for (int64_t k0 = 0; k0 < K; k0 += kKB) {
    const int64_t kb = std::min(kKB, K - k0);
    T* d = dst + k0 * nr;
    for (int64_t j = 0; j < live; ++j) {
      const T* s = src + j * stride + k0;
      for (int64_t k = 0; k < kb; ++k) d[k * nr + j] = s[k];
    }
    for (int64_t k = 0; k < kb; ++k)
      for (int64_t j = live; j < nr; ++j) d[k * nr + j] = T(0);
  }
}

// Stretches of k at least this long are worth transposing whole (pack_b_panels).
constexpr int64_t kLongRun = 16;

// B panels [p0, p1) of batch b, each [k][nr] for every k (columns past N zero), at
// bpack + p * K * nr. Columns adjacent in memory are copied in runs: all of them for a row-major
// B, conv2d's positions along a width when its product is computed transposed.
// transpose: how a transposed panel is packed (pack_b_transposed's arguments); gemm.cpp passes
// its target's register transpose.
template <class T, void (*transpose)(const T*, int64_t, int64_t, int64_t, int64_t, T*) = pack_b_transposed<T>>
void pack_b_panels(const GemmArgs& g, int64_t b, int64_t nr, T* bpack, int64_t p0, int64_t p1) {
  constexpr int64_t kMaxCols = 256;  // 4 vectors of 2048-bit SVE float32: the widest panel
  assert(nr <= kMaxCols);
  const T* B = static_cast<const T*>(g.B) + g.batchB[b];
  const bool unit_k = adjacent(g.kB, g.K);
  if (p0 < p1 && adjacent(g.colB + p0 * nr, std::min(g.N, p1 * nr) - p0 * nr)) {
    // Every column of these panels adjacent (a row-major B): row k read once, left to right,
    // into each panel's row k. Panel by panel, each row was read a panel's width at a time,
    // a row of B apart: 18% of a 128x512 @ 512x512 product.
    const int64_t c0 = g.colB[p0 * nr];
    for (int64_t k = 0; k < g.K; ++k) {
      const T* src = B + g.kB[k] + c0;
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t live = std::min(nr, g.N - p * nr);
        T* dst = bpack + (p * g.K + k) * nr;
        std::memcpy(dst, src + (p - p0) * nr, static_cast<size_t>(live) * sizeof(T));
        for (int64_t jj = live; jj < nr; ++jj) dst[jj] = T(0);
      }
    }
    return;
  }
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t live = std::min(nr, g.N - p * nr);  // columns that exist; the rest are zero
    const int64_t* col = g.colB + p * nr;
    if (unit_k && g.K > 0 && strided(col, live) && col[1] - col[0] != 1) {
      transpose(B + g.kB[0] + col[0], col[1] - col[0], live, nr, g.K, bpack + p * g.K * nr);
      g_transposed_b_panels.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    // The same where k runs along B in long stretches (conv2d's weight gradient computed
    // transposed: B is the output gradient, k = (image, oy, ox), a plane of each channel per
    // image): each stretch transposed as above. Element by element below, that was 6% of
    // beautiful_mnist's second-layer weight gradient.
    if (g.K >= 2 * kLongRun && strided(col, live) && col[1] - col[0] != 1 && adjacent(g.kB, kLongRun)) {
      for (int64_t ka = 0, kb; ka < g.K; ka = kb) {
        for (kb = ka + 1; kb < g.K && g.kB[kb] == g.kB[kb - 1] + 1;) ++kb;
        transpose(B + g.kB[ka] + col[0], col[1] - col[0], live, nr, kb - ka, bpack + (p * g.K + ka) * nr);
      }
      g_transposed_b_panels.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    int64_t runs[2 * kMaxCols], nruns = 0;  // (first column, length)
    for (int64_t ja = 0, jb; ja < live; ja = jb) {
      for (jb = ja + 1; jb < live && col[jb] == col[jb - 1] + 1;) ++jb;
      runs[2 * nruns] = ja;
      runs[2 * nruns + 1] = jb - ja;
      ++nruns;
    }
    for (int64_t k = 0; k < g.K; ++k) {
      T* dst = bpack + (p * g.K + k) * nr;
      const T* src = B + g.kB[k];
      for (int64_t r = 0; r < nruns; ++r) {
        const int64_t ja = runs[2 * r], len = runs[2 * r + 1];
        if (len == 1) dst[ja] = src[col[ja]];
        else copy_run(dst + ja, src + col[ja], len);
      }
      for (int64_t jj = live; jj < nr; ++jj) dst[jj] = T(0);
    }
  }
}

// One A panel of batch b: rows [i0, i0 + MR) (rows past M zero), k in [k0, k0 + kc), as
// [k][MR] at dst. Written in order, read by the register kernel as MR streams along k.
template <class T, int MR>
void pack_a_panel(const GemmArgs& g, int64_t b, int64_t i0, int64_t k0, int kc, T* dst) {
  const T* A = static_cast<const T*>(g.A) + g.batchA[b];
  const int64_t* kA = g.kA + k0;
  const bool unit = adjacent(kA, kc);
  const T* rows[MR];
  int live = 0;  // rows [0, live) exist; the rest of the panel is zero
  for (int r = 0; r < MR; ++r)
    if (i0 + r < g.M) rows[live++] = A + g.rowA[i0 + r] + (unit ? kA[0] : 0);
  bool adj = live == MR;  // rows one element apart (conv2d's im2col rows along a width)
  for (int r = 1; r < live && adj; ++r) adj = rows[r] == rows[0] + r;
  if (adj) {  // each k is MR adjacent elements: a copy
    for (int k = 0; k < kc; ++k, dst += MR) std::memcpy(dst, rows[0] + (unit ? k : kA[k]), MR * sizeof(T));
    return;
  }
  if (unit && live == MR) {  // the usual matmul: MR whole rows, each contiguous along k
    for (int k = 0; k < kc; ++k, dst += MR)
      for (int r = 0; r < MR; ++r) dst[r] = rows[r][k];
    return;
  }
  // MR rows apart, read through kA (conv2d's weight gradient computed transposed: rows are
  // (cin, ky, kx), at most kw of them adjacent): MR loads per k with the row count known to the
  // compiler. beautiful_mnist's second layer, batch 64, one thread: 24.1 -> 20.1 ms (best of 6
  // runs of 9).
  if (live == MR) {
    g_row_a_panels.fetch_add(1, std::memory_order_relaxed);
    for (int k = 0; k < kc; ++k, dst += MR) {
      const int64_t off = kA[k];
      for (int r = 0; r < MR; ++r) dst[r] = rows[r][off];
    }
    return;
  }
  for (int k = 0; k < kc; ++k, dst += MR) {
    const int64_t off = unit ? k : kA[k];
    int r = 0;
    for (; r < live; ++r) dst[r] = rows[r][off];
    for (; r < MR; ++r) dst[r] = T(0);
  }
}

}  // namespace maroon::cpu
