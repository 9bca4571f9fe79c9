// Small products read in place. Below about 160 a side, packing A and B into panels (gemm.cpp)
// cost about as much as the product: a 64^2 float32 product copied 32 KB to compute on it once.
// Here the register tile reads them where they are: row r's a[i,k] broadcast from
// A + rowA[i] + kA[k], and B's row k as whole vectors of adjacent columns from B + kB[k] +
// colB[j]. The sums are the packed kernel's: each output starts at +0 (the fold's identity),
// then acc = acc + round(a[i,k] * b[k,j]) for k = 0, 1, ... in order, the multiply and the add
// rounded separately (Lagoon's mmul); a NaN result is made the canonical one. Only the
// addresses differ, so not a bit does.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/gemm_direct.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <stdexcept>
#include <vector>

#include "cpu/gemm_direct.h"
#include "cpu/gemm_micro-inl.h"
#include "cpu/gemm_pack.h"
#include "cpu/gemm_transpose-inl.h"
#include "cpu/threads.h"

namespace maroon::cpu {
#ifndef MAROON_CPU_GEMM_DIRECT_KSTEPS_  // this file is compiled once per target
#define MAROON_CPU_GEMM_DIRECT_KSTEPS_
// How k steps through A and B, found once per product (run_direct_tasks), not per task.
struct KSteps {
  bool a_affine, b_affine;  // kA (kB) steps by one stride, sa (sb)
  int64_t sa, sb;
};
#endif
std::atomic<int64_t>& direct_packed_task_count();  // shared by every target's kernel (defined below)
std::atomic<int64_t>& direct_tall_task_count();
}  // namespace maroon::cpu

HWY_BEFORE_NAMESPACE();
namespace maroon::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The tile: 6 rows by up to 4 vectors where there are 32 vector registers (24 sums, as the
// packed kernel's 6 x 4), 4 by up to 2 where there are 16. A narrower tile (fewer vectors) takes
// the last columns when they are fewer than a full tile's. A panel of one vector on the wide
// targets (attention's p @ v per head: 16 columns on AVX-512) ran 6 rows: six sums, fewer than an
// FMA's latency times its two ports keeps busy; it runs 8 (measured 6, 8, 12 and 16: 12 and 16
// rows kept their row pointers in vector registers and ran slower than 6). A panel of two vectors
// runs 8 rows too (16 sums): a 32^3 fused product replayed through TinyJit 1.25 -> 1.18 us, 96^3
// 10.9 -> 10.6 (3 and 2 alternating runs): 32 rows are four whole tiles instead of five and a
// third, and each k loads 8 broadcasts per 16 multiply-adds instead of 6 per 12. Three and four
// vectors keep 6 rows (24 sums at most: 8 x 3 would leave too few registers for B's row).
#if MAROON_GEMM_WIDE_TILES
constexpr int kDirectNV = 4;
constexpr int DirectRows(int nv) { return nv <= 2 ? 8 : 6; }
#else
constexpr int kDirectNV = 2;
constexpr int DirectRows(int) { return 4; }
#endif
constexpr int kDirectMaxRows = 8;  // the most rows of any tile

// One register tile of R rows by NV vectors over all K: rows a[0..R) of A (a row's k-th element
// at a[r] + kA[k]), NV vectors of adjacent columns of B from b (row k at b + kB[k]), into c[r]
// (NV vectors each). kAffine: k steps by sa in A and sb in B (kA, kB unread), so no offset is
// loaded per step. Named registers through macros, as in gemm.cpp (SVE's sizeless vectors cannot
// be arrays); rows past R and columns past NV are never computed (if constexpr) and the compiler
// drops their registers.
#define MAROON_DROWS(X) \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define MAROON_DCOLS(Y, r) Y(r, 0) Y(r, 1) Y(r, 2) Y(r, 3)
#define MAROON_DON(r, j) if constexpr ((r) < R && (j) < NV)
#define MAROON_DPTR(r) [[maybe_unused]] const T* const a##r = (r) < R ? a[(r) < R ? (r) : 0] : nullptr;
#define MAROON_DZEROC(r, j) [[maybe_unused]] auto c##r##j = hn::Zero(d);
#define MAROON_DZERO(r) MAROON_DCOLS(MAROON_DZEROC, r)
#define MAROON_DSTEPC(r, j) MAROON_DON(r, j) c##r##j = ProductStep<kFma>(d, a##r + ka, b##j, c##r##j);
#define MAROON_DSTEP(r) MAROON_DCOLS(MAROON_DSTEPC, r)
#define MAROON_DSTOREC(r, j) \
  MAROON_DON(r, j) hn::StoreU(hn::IfThenElse(hn::IsNaN(c##r##j), nan, c##r##j), d, c[r] + (j) * L);
#define MAROON_DSTORE(r) MAROON_DCOLS(MAROON_DSTOREC, r)
template <class T, int R, int NV, bool kFma, bool kAffine>
HWY_NOINLINE void DirectTile(const T* const* a, const int64_t* HWY_RESTRICT kA, const T* HWY_RESTRICT b,
                             const int64_t* HWY_RESTRICT kB, int64_t K, int64_t sa, int64_t sb, T* const* c) {
  static_assert(R <= kDirectMaxRows && NV <= kDirectNV);
  const hn::ScalableTag<T> d;
  const size_t L = hn::Lanes(d);
  MAROON_DROWS(MAROON_DPTR)
  MAROON_DROWS(MAROON_DZERO)
  for (int64_t k = 0; k < K; ++k) {
    const T* bk = kAffine ? b + k * sb : b + kB[k];
    const int64_t ka = kAffine ? k * sa : kA[k];
    const auto b0 = hn::LoadU(d, bk);
    const auto b1 = NV > 1 ? hn::LoadU(d, bk + L) : hn::Zero(d);
    const auto b2 = NV > 2 ? hn::LoadU(d, bk + 2 * L) : hn::Zero(d);
    const auto b3 = NV > 3 ? hn::LoadU(d, bk + 3 * L) : hn::Zero(d);
    MAROON_DROWS(MAROON_DSTEP)
  }
  const auto nan = hn::Set(d, CanonicalNaN<T>());
  MAROON_DROWS(MAROON_DSTORE)
}
#undef MAROON_DROWS
#undef MAROON_DCOLS
#undef MAROON_DON
#undef MAROON_DPTR
#undef MAROON_DZEROC
#undef MAROON_DZERO
#undef MAROON_DSTEPC
#undef MAROON_DSTEP
#undef MAROON_DSTOREC
#undef MAROON_DSTORE

template <class T, int NV, bool F>
void RunTileOf(const T* const* a, const GemmArgs& g, const T* b, const int64_t* kB, KSteps ks, T* const* c) {
  constexpr int R = DirectRows(NV);
  if (ks.a_affine && ks.b_affine) DirectTile<T, R, NV, F, true>(a, g.kA, b, kB, g.K, ks.sa, ks.sb, c);
  else DirectTile<T, R, NV, F, false>(a, g.kA, b, kB, g.K, ks.sa, ks.sb, c);
}

template <class T, bool F>
void RunTile(int64_t nv, const T* const* a, const GemmArgs& g, const T* b, const int64_t* kB, KSteps ks, T* const* c) {
  switch (nv) {
    case 1: return RunTileOf<T, 1, F>(a, g, b, kB, ks, c);
#if MAROON_GEMM_WIDE_TILES
    case 2: return RunTileOf<T, 2, F>(a, g, b, kB, ks, c);
    case 3: return RunTileOf<T, 3, F>(a, g, b, kB, ks, c);
    default: return RunTileOf<T, 4, F>(a, g, b, kB, ks, c);
#else
    default: return RunTileOf<T, 2, F>(a, g, b, kB, ks, c);
#endif
  }
}

// Panel columns colB[0, w) of B (each contiguous along k, a stride apart: x @ w.T, attention's
// q @ k^T per head) as [k][w] at dst, through the register transpose where the target has one.
template <class T>
void PackPanel(const T* B, const GemmArgs& g, const int64_t* colB, int64_t w, T* dst) {
  PackBTransposed<T>(B + g.kB[0] + colB[0], colB[1] - colB[0], w, w, g.K, dst);
}

// One task's box. Column panels outside, rows inside: a panel of B (K rows of at most 256
// bytes) stays in L1 while every row of the task passes over it. A panel whose columns are a
// stride apart in B (each contiguous along k: Fits) is first packed by the task as [k][w]: the
// packed matmul packed both operands and ran 6-row tiles over K = 16, at a third of this
// machine's FMA peak (q @ k^T per head, 128 heads of 64 x 16 @ 16 x 64). A tile whose output
// columns are adjacent writes its rows in place; scattered columns go through a scratch tile.
// Rows past the box repeat its last row, and their sums go to the scratch and are dropped.
template <class T, bool F>
void DirectTask(const GemmArgs& g, const KSteps& steps, int64_t task) {
  const hn::ScalableTag<T> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d)), NR = kDirectNV * L;
  const GemmTaskBox box = gemm_task_box(g, task);
  const T* const A = static_cast<const T*>(g.A) + g.batchA[box.b];
  const T* const B = static_cast<const T*>(g.B) + g.batchB[box.b];
  T* const C = static_cast<T*>(g.C) + g.batchC[box.b];
  HWY_ALIGN T tile[24 * (HWY_MAX_BYTES / sizeof(T))];  // the largest tile: 24 vectors (6 x 4)
  thread_local std::unique_ptr<uint64_t[]> pmem;
  thread_local size_t pcap = 0;
  bool packed_any = false, tall = false;
  for (int64_t j = 0; j < box.nc; j += NR) {
    const int64_t w = std::min(NR, box.nc - j);
    const int64_t nv = w / L;
    const int64_t R = DirectRows(static_cast<int>(nv));
    tall |= R > DirectRows(kDirectNV);
    const int64_t* colC = g.colC + box.j0 + j;
    const int64_t* colB = g.colB + box.j0 + j;
    const bool cols_adjacent = adjacent(colC, w);
    const T* b = B + colB[0];
    const int64_t* kB = g.kB;
    KSteps ks = steps;
    if (!adjacent(colB, w)) {  // a stride apart (Fits): packed here as [k][w]
      T* p = static_cast<T*>(scratch(&pmem, &pcap, static_cast<size_t>(w * g.K) * sizeof(T)));
      PackPanel<T>(B, g, colB, w, p);
      thread_local std::vector<int64_t> kp;  // the packed panel's k offsets, for a scattered kA
      if (!steps.a_affine) {
        kp.resize(static_cast<size_t>(g.K));
        for (int64_t k = 0; k < g.K; ++k) kp[static_cast<size_t>(k)] = k * w;
        kB = kp.data();
      }
      b = p;
      ks.b_affine = true;
      ks.sb = w;
      packed_any = true;
    }
    for (int64_t i = 0; i < box.mc; i += R) {
      const int64_t live = std::min<int64_t>(R, box.mc - i);
      const T* rows[kDirectMaxRows];
      T* out[kDirectMaxRows];
      for (int64_t r = 0; r < R; ++r) {
        const int64_t row = box.i0 + i + std::min(r, live - 1);
        rows[r] = A + g.rowA[row];
        // Adjacent output columns: the live rows written in place, the repeated ones into the
        // scratch (a last tile of 4 rows copied element by element through the tables was ~5% of
        // a 64^3 product's replay).
        out[r] = cols_adjacent && r < live ? C + g.rowC[row] + colC[0] : tile + r * w;
      }
      RunTile<T, F>(nv, rows, g, b, kB, ks, out);
      if (cols_adjacent) continue;
      for (int64_t r = 0; r < live; ++r)
        for (int64_t jj = 0; jj < w; ++jj) C[g.rowC[box.i0 + i + r] + colC[jj]] = tile[r * w + jj];
    }
  }
  if (packed_any) direct_packed_task_count().fetch_add(1, std::memory_order_relaxed);
  if (tall) direct_tall_task_count().fetch_add(1, std::memory_order_relaxed);
}

template <class T>
bool Fits(const GemmArgs& g) {
  const hn::ScalableTag<T> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  // B's columns adjacent (read in place), or a stride apart, each contiguous along k, as A's rows
  // are (x @ w.T: a panel packed by the task, DirectTask). Not conv2d's products (A's k through
  // windows), which keep the packed kernel's paths.
  const bool cols = adjacent(g.colB, g.N) ||
                    (g.K > 0 && adjacent(g.kB, g.K) && adjacent(g.kA, g.K) && strided(g.colB, g.N));
  return g.M <= kGemmDirectMax && g.N <= kGemmDirectMax && g.K <= kGemmDirectMax && g.span % L == 0 &&
         g.N % L == 0 && cols;
}

void TaskF32(const GemmArgs& g, const KSteps& s, int64_t t) { DirectTask<float, false>(g, s, t); }
void TaskF64(const GemmArgs& g, const KSteps& s, int64_t t) { DirectTask<double, false>(g, s, t); }
// The fused tiles (GemmArgs::fused) only where the target has an FMA instruction (fused_native_fma, gemm_fused.h).
#if HWY_NATIVE_FMA
void TaskF32Fma(const GemmArgs& g, const KSteps& s, int64_t t) { DirectTask<float, true>(g, s, t); }
void TaskF64Fma(const GemmArgs& g, const KSteps& s, int64_t t) { DirectTask<double, true>(g, s, t); }
#else
void TaskF32Fma(const GemmArgs&, const KSteps&, int64_t) { throw std::logic_error("fused tile on a target without FMA"); }
void TaskF64Fma(const GemmArgs&, const KSteps&, int64_t) { throw std::logic_error("fused tile on a target without FMA"); }
#endif
bool FitsF32(const GemmArgs& g) { return Fits<float>(g); }
bool FitsF64(const GemmArgs& g) { return Fits<double>(g); }

}  // namespace maroon::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace maroon::cpu {
std::atomic<int64_t>& fused_tile_task_count();  // gemm.cpp
HWY_EXPORT(TaskF32);
HWY_EXPORT(TaskF64);
HWY_EXPORT(TaskF32Fma);
HWY_EXPORT(TaskF64Fma);
HWY_EXPORT(FitsF32);
HWY_EXPORT(FitsF64);

namespace {
std::atomic<int64_t> g_direct_runs{0};
}  // namespace

int64_t gemm_direct_runs() { return g_direct_runs.load(); }
std::atomic<int64_t>& direct_packed_task_count() {
  static std::atomic<int64_t> n{0};
  return n;
}
int64_t gemm_direct_packed_tasks() { return direct_packed_task_count().load(std::memory_order_relaxed); }
std::atomic<int64_t>& direct_tall_task_count() {
  static std::atomic<int64_t> n{0};
  return n;
}
int64_t gemm_direct_tall_tasks() { return direct_tall_task_count().load(std::memory_order_relaxed); }

bool gemm_direct_fits(DType d, const GemmArgs& g) {
  if (d == DType::Float32) return HWY_DYNAMIC_DISPATCH(FitsF32)(g);
  if (d == DType::Float64) return HWY_DYNAMIC_DISPATCH(FitsF64)(g);
  return false;
}

void run_direct_tasks(DType d, const GemmArgs& g, int64_t NB, Round rnd, const Epilogue* epi) {
  const int64_t per_batch = g.tasks_m * g.tasks_n;
  KSteps ks{g.K < 2 || strided(g.kA, g.K), g.K < 2 || strided(g.kB, g.K), 0, 0};
  if (g.K >= 2) ks.sa = g.kA[1] - g.kA[0], ks.sb = g.kB[1] - g.kB[0];
  parallel_for(NB * per_batch, [&](int64_t t) {
    if (rnd != Round::NearestEven) set_hw_round(rnd);
    if (g.fused) {
      fused_tile_task_count().fetch_add(1, std::memory_order_relaxed);
      if (d == DType::Float32) HWY_DYNAMIC_DISPATCH(TaskF32Fma)(g, ks, t);
      else HWY_DYNAMIC_DISPATCH(TaskF64Fma)(g, ks, t);
    } else if (d == DType::Float32) {
      HWY_DYNAMIC_DISPATCH(TaskF32)(g, ks, t);
    } else {
      HWY_DYNAMIC_DISPATCH(TaskF64)(g, ks, t);
    }
    if (rnd != Round::NearestEven) set_hw_round(Round::NearestEven);
    if (epi) epi->apply(g, t);  // the block is final and still in cache
  }, Round::NearestEven);
  g_direct_runs.fetch_add(1);
}

}  // namespace maroon::cpu
#endif
