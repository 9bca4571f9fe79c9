// The matmul kernel's interface (gemm.cpp is compiled once per SIMD target).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "maroon/dtype.h"

namespace maroon::cpu {

// Blocks: fixed for every target, so the split of work never depends on the target either.
// KC = 128: a 6 x 4 tile's B panel (KC x 64 float32, 32 KB) stays in L1 while the task's row
// panels pass over it (gemm.cpp's Block); at 256 (64 KB) it streamed from L2 for each row panel,
// which an FMA tile (GemmArgs::fused) felt: a 1024^2 fused product from Python ran at 117
// GFLOP/s one-thread, 132 with both changes (Xeon, session 19). Blocking never changes a bit.
constexpr int64_t kGemmMC = 96, kGemmNC = 256, kGemmKC = 128;

// Columns per task of the default matmul: whole rows of the output once there are enough row
// blocks to share among threads (A is then packed once per row block, not once per column
// block), else column blocks split further. A function of the shape only, like every split.
inline int64_t gemm_task_span(int64_t M, int64_t N) {
  constexpr int64_t kWantTasks = 16;
  const int64_t tasks_m = (M + kGemmMC - 1) / kGemmMC, blocks_n = (N + kGemmNC - 1) / kGemmNC;
  const int64_t tasks_n = std::min(blocks_n, std::max<int64_t>(1, (kWantTasks + tasks_m - 1) / tasks_m));
  return std::max<int64_t>(1, (blocks_n + tasks_n - 1) / tasks_n) * kGemmNC;
}

// C[batchC[b] + rowC[i] + colC[j]] = sum over k, in order, of
//   A[batchA[b] + rowA[i] + kA[k]] * B[batchB[b] + colB[j] + kB[k]]
// (k runs over the reduced axes in row-major order, so several reduced axes, as in conv2d's
// (cin, kh, kw), are one k.)
struct GemmArgs {
  const void* A;
  const void* B;
  void* C;
  int64_t M, N, K;
  const int64_t *kA, *kB;
  const int64_t *rowA, *colB, *rowC, *colC, *batchA, *batchB, *batchC;
  int64_t tasks_m, tasks_n;
  int64_t span;  // columns per task (the last task of a row block may have fewer)
  // Whether the kernel may read a B panel in place (gemm_direct_panel) instead of packing it.
  bool direct_b;
  // REDUCE_MULACC (docs/spec.md §14): each step one FMA, rounded once, in the same k order from
  // the same +0, by the same tiles, packing and epilogues. Only where fused_native_fma() (gemm_fused.h).
  bool fused = false;
  // Whether each task packs the B panels of columns in groups (gemm.cpp's PackBSpan: conv2d's
  // stride-2 or 8-wide columns) itself, a k block at a time, instead of gemm_pack_b packing them
  // whole (gemm_local.cpp: one row block, so each panel is packed once either way).
  bool span_in_block = false;
  // A packed once for every task (gemm_pack_a: conv2d's weights computed transposed, the same
  // for every image of the batch): panel p of apacked_mr rows as [K][MR] at apacked + p * K * MR.
  // Used by the tasks whose tile has that many rows (of one row block); the others pack their own.
  const void* apacked = nullptr;
  int64_t apacked_mr = 0;
  // Rows a task computes (gemm_task_box): kGemmMC, or more where a task streams a B packed whole
  // from memory (try_matmul), a multiple of the tile's rows. tasks_m is ceil(M / mc).
  int64_t mc = kGemmMC;
};

// The k blocks of a task: kGemmKC, or, for the fused tiles (g.fused) with every B panel read in
// place (conv2d's 3x3 windows on 16- and 32-wide images: the 8 x 3 tile), blocks of equal size
// of at most 320: the ResNet's K of 144 and 288 are one block, where blocks of 128 left one of
// 16 or 32 (a store and a reload of every tile for a few steps), and its 576 two. With FMA steps
// the tile's loop is short enough for that to show (measured in docs/performance/onnx-kernels.md); packed
// panels keep 128 (their B panel stays in L1: larger blocks measured up to 16% slower), and so
// do the unfused tiles. Blocking never changes a bit.
inline int64_t gemm_kc(const GemmArgs& g, bool all_in_place) {
  if (!g.fused || !all_in_place) return kGemmKC;
  constexpr int64_t kMax = 320;
  const int64_t blocks = (g.K + kMax - 1) / kMax;
  return std::max<int64_t>(1, (g.K + blocks - 1) / blocks);
}

// The block of the output that task `task` computes (batch-major, then row blocks of g.mc, then
// column blocks of `span`): batch b, rows [i0, i0 + mc), columns [j0, j0 + nc).
struct GemmTaskBox {
  int64_t b, i0, j0, mc, nc;
};
inline GemmTaskBox gemm_task_box(const GemmArgs& g, int64_t task) {
  const int64_t per_batch = g.tasks_m * g.tasks_n;
  const int64_t b = task / per_batch, im = (task % per_batch) / g.tasks_n, jn = task % g.tasks_n;
  const int64_t i0 = im * g.mc, j0 = jn * g.span;
  return {b, i0, j0, std::min<int64_t>(g.mc, g.M - i0), std::min<int64_t>(g.span, g.N - j0)};
}

// Scratch memory kept by a thread between calls (a training loop repeats shapes: fresh pages
// cost more than packing them), grown without zero-filling: every byte used is written first.
// Not advised for huge pages (core/buffer.cpp says why).
inline void* scratch(std::unique_ptr<uint64_t[]>* mem, size_t* cap, size_t bytes) {
  const size_t words = (bytes + 7) / 8;
  if (words > *cap) {
    mem->reset(new uint64_t[words]);
    *cap = words;
  }
  return mem->get();
}

template <class T>
inline T CanonicalNaN() {
  T v;
  if constexpr (sizeof(T) == 4) { uint32_t u = 0x7FC00000u; std::memcpy(&v, &u, 4); }
  else { uint64_t u = 0x7FF8000000000000ull; std::memcpy(&v, &u, 8); }
  return v;
}

// The register tile the dispatched target uses for a product of M rows and N columns (those of
// the GemmArgs given to gemm_pack_b and gemm_task): rows (MR) and columns (NR) of a packed panel.
void gemm_panel_sizes(DType d, int64_t M, int64_t N, int64_t* mr, int64_t* nr);
// Packs panels [p0, p1) of batch b's B into bp (ceil(N/NR) panels of NR*K elements).
void gemm_pack_b(DType d, const GemmArgs& g, int64_t b, void* bp, int64_t p0, int64_t p1);
// Packs A's row panels [p0, p1) of mr rows (batch 0) for the whole of K into dst, as the tasks
// would pack them a k block at a time: panel p as [K][mr] at dst + p * K * mr (GemmArgs::apacked).
void gemm_pack_a(DType d, const GemmArgs& g, int64_t mr, int64_t p0, int64_t p1, void* dst);
// How many products had their A packed once for all tasks (gemm_pack_a), in this process.
int64_t gemm_shared_a_products();
// How many B panels have been packed as a transpose (x @ w.T) in this process (for the harness).
int64_t gemm_transposed_b_panels();
// How many of those went through the register transpose (float32, x86 with AVX2 or better).
int64_t gemm_register_transposed_panels();
// How many A panels of four, six or twelve float32 rows went through the register transpose (x86,
// AVX2 or better).
int64_t gemm_register_a_panels();
// How many A panels read through a scattered kA (conv2d's weight gradient) had runs of eight
// adjacent k transposed in registers (float32, x86 with AVX2 or better).
int64_t gemm_register_window_a_panels();
// How many A panels have been packed as rows read one at a time through unrolled loads, in this
// process (for the harness: conv2d's weight gradient, gemm_pack.h).
int64_t gemm_row_a_panels();
// Computes task `task` (batch-major, then row blocks, then column blocks) from the batch's B
// panels; it packs its own rows of A.
void gemm_task(DType d, const GemmArgs& g, const void* bp, int64_t task);
// How many tasks ran the fused tiles (gemm_task, gemm_direct), in this process (for the harness).
int64_t gemm_fused_tile_tasks();
// How many products narrower than 16 columns try_matmul computed transposed (for the harness).
int64_t matmul_narrow_transposes();
// How many products were computed transposed for whole output rows (conv2d: try_matmul's
// conv_rows), in this process (for the harness).
int64_t matmul_conv_row_products();
// How many products packed their one B panel in blocks of k rows, in parallel (try_matmul: a
// long k, conv2d's weight gradient), in this process (for the harness).
int64_t matmul_row_block_packs();
// How many of those ran their rows in fewer, wider row blocks than kGemmMC (GemmArgs::mc), in
// this process (for the harness).
int64_t matmul_wide_row_blocks();
// How many A panels of float32 rows within 32 elements of their first were packed a k at a time
// by a lane permute (AVX-512 only: conv2d's im2col rows, not computed transposed).
int64_t gemm_span_a_panels();
// How many B panels of float32 columns in groups within 32 elements were packed a k at a time by
// lane permutes (AVX-512 only: conv2d's im2col columns, stride 2 or 8-wide images, computed
// transposed).
int64_t gemm_span_b_panels();
// How many tasks wrote a scratch tile out as its rows' runs of adjacent columns (conv2d computed
// transposed: a panel across two images), in this process (for the harness).
int64_t gemm_column_run_tasks();
// How many B panels a task packed itself a k block at a time (GemmArgs::span_in_block), in this
// process (for the harness; each also counts in gemm_span_b_panels()).
int64_t gemm_task_span_panels();
// How many tasks read at least one B panel in place (the harness checks that its cases did).
int64_t gemm_direct_tasks();
// How many tasks read A in place instead of packing it (float32 on AVX-512: conv2d's weight
// gradient computed transposed; gemm.cpp's AInPlace), in this process (for the harness).
int64_t gemm_a_in_place_tasks();
// Edge kernels (gemm.cpp's MicroEdge): a product's last rows (short) or last columns (narrow)
// computed by a kernel of fewer rows or vectors than the tile's; short ones also with B read in
// place (conv2d's im2col panels).
enum class GemmEdge { kShortRows, kShortRowsBInPlace, kNarrowColumns };
// How many tasks ran an edge kernel of that kind in this process (for the harness).
int64_t gemm_edge_tasks(GemmEdge kind);

}  // namespace maroon::cpu
