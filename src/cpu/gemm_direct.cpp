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
#include <stdexcept>

#include "cpu/gemm_direct.h"
#include "cpu/gemm_micro-inl.h"
#include "cpu/gemm_pack.h"
#include "cpu/threads.h"

HWY_BEFORE_NAMESPACE();
namespace maroon::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The tile: 6 rows by up to 4 vectors where there are 32 vector registers (24 sums, as the
// packed kernel's 6 x 4), 4 by up to 2 where there are 16. A narrower tile (fewer vectors) takes
// the last columns when they are fewer than a full tile's.
#undef MAROON_DROWS
#if MAROON_GEMM_WIDE_TILES
#define MAROON_DROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
constexpr int kDirectMR = 6, kDirectNV = 4;
#else
#define MAROON_DROWS(X) X(0) X(1) X(2) X(3)
constexpr int kDirectMR = 4, kDirectNV = 2;
#endif

// One register tile over all K: rows a[0..MR) of A (a row's k-th element at a[r] + kA[k]), NV
// vectors of adjacent columns of B from b (row k at b + kB[k]), into c[r] (NV vectors each).
// Named registers through macros, as in gemm.cpp (SVE's sizeless vectors cannot be arrays);
// columns past NV are never computed (if constexpr) and the compiler drops their registers.
#define MAROON_DCOLS(Y, r) Y(r, 0) Y(r, 1) Y(r, 2) Y(r, 3)
#define MAROON_DPTR(r) const T* a##r = a[r];
#define MAROON_DZEROC(r, j) auto c##r##j = hn::Zero(d);
#define MAROON_DZERO(r) MAROON_DCOLS(MAROON_DZEROC, r)
#define MAROON_DSTEPC(r, j) \
  if constexpr ((j) < NV) c##r##j = ProductStep<kFma>(d, a##r + ka, b##j, c##r##j);
#define MAROON_DSTEP(r) MAROON_DCOLS(MAROON_DSTEPC, r)
#define MAROON_DSTOREC(r, j) \
  if constexpr ((j) < NV) hn::StoreU(hn::IfThenElse(hn::IsNaN(c##r##j), nan, c##r##j), d, c[r] + (j) * L);
#define MAROON_DSTORE(r) MAROON_DCOLS(MAROON_DSTOREC, r)
template <class T, int NV, bool kFma>
HWY_NOINLINE void DirectTile(const T* const* a, const int64_t* HWY_RESTRICT kA, const T* HWY_RESTRICT b,
                             const int64_t* HWY_RESTRICT kB, int64_t K, T* const* c) {
  const hn::ScalableTag<T> d;
  const size_t L = hn::Lanes(d);
  MAROON_DROWS(MAROON_DPTR)
  MAROON_DROWS(MAROON_DZERO)
  for (int64_t k = 0; k < K; ++k) {
    const T* bk = b + kB[k];
    const int64_t ka = kA[k];
    const auto b0 = hn::LoadU(d, bk);
    const auto b1 = NV > 1 ? hn::LoadU(d, bk + L) : hn::Zero(d);
    const auto b2 = NV > 2 ? hn::LoadU(d, bk + 2 * L) : hn::Zero(d);
    const auto b3 = NV > 3 ? hn::LoadU(d, bk + 3 * L) : hn::Zero(d);
    MAROON_DROWS(MAROON_DSTEP)
  }
  const auto nan = hn::Set(d, CanonicalNaN<T>());
  MAROON_DROWS(MAROON_DSTORE)
}
#undef MAROON_DCOLS
#undef MAROON_DPTR
#undef MAROON_DZEROC
#undef MAROON_DZERO
#undef MAROON_DSTEPC
#undef MAROON_DSTEP
#undef MAROON_DSTOREC
#undef MAROON_DSTORE

template <class T, bool F>
void RunTile(int64_t nv, const T* const* a, const GemmArgs& g, const T* b, T* const* c) {
  switch (nv) {
    case 1: return DirectTile<T, 1, F>(a, g.kA, b, g.kB, g.K, c);
    case 2: return DirectTile<T, 2, F>(a, g.kA, b, g.kB, g.K, c);
    case 3: return DirectTile<T, 3, F>(a, g.kA, b, g.kB, g.K, c);
    default: return DirectTile<T, 4, F>(a, g.kA, b, g.kB, g.K, c);
  }
}

// One task's box. Column panels outside, rows inside: a panel of B (K rows of at most 256
// bytes) stays in L1 while every row of the task passes over it. A tile whose rows all exist
// and whose output columns are adjacent writes the output in place; the rest (the last rows,
// scattered columns) go through a scratch tile. Rows past the box repeat its last row, and
// their sums are dropped.
template <class T, bool F>
void DirectTask(const GemmArgs& g, int64_t task) {
  const hn::ScalableTag<T> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d)), NR = kDirectNV * L;
  const GemmTaskBox box = gemm_task_box(g, task);
  const T* const A = static_cast<const T*>(g.A) + g.batchA[box.b];
  const T* const B = static_cast<const T*>(g.B) + g.batchB[box.b];
  T* const C = static_cast<T*>(g.C) + g.batchC[box.b];
  HWY_ALIGN T tile[kDirectMR * kDirectNV * (HWY_MAX_BYTES / sizeof(T))];
  for (int64_t j = 0; j < box.nc; j += NR) {
    const int64_t w = std::min(NR, box.nc - j);
    const int64_t* colC = g.colC + box.j0 + j;
    const bool cols_adjacent = adjacent(colC, w);
    for (int64_t i = 0; i < box.mc; i += kDirectMR) {
      const int64_t live = std::min<int64_t>(kDirectMR, box.mc - i);
      const bool in_place = cols_adjacent && live == kDirectMR;
      const T* rows[kDirectMR];
      T* out[kDirectMR];
      for (int64_t r = 0; r < kDirectMR; ++r) {
        const int64_t row = box.i0 + i + std::min(r, live - 1);
        rows[r] = A + g.rowA[row];
        out[r] = in_place ? C + g.rowC[row] + colC[0] : tile + r * NR;
      }
      RunTile<T, F>(w / L, rows, g, B + g.colB[box.j0 + j], out);
      if (in_place) continue;
      for (int64_t r = 0; r < live; ++r)
        for (int64_t jj = 0; jj < w; ++jj) C[g.rowC[box.i0 + i + r] + colC[jj]] = tile[r * NR + jj];
    }
  }
}

template <class T>
bool Fits(const GemmArgs& g) {
  const hn::ScalableTag<T> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  return g.M <= kGemmDirectMax && g.N <= kGemmDirectMax && g.K <= kGemmDirectMax && g.span % L == 0 &&
         g.N % L == 0 && adjacent(g.colB, g.N);
}

void TaskF32(const GemmArgs& g, int64_t t) { DirectTask<float, false>(g, t); }
void TaskF64(const GemmArgs& g, int64_t t) { DirectTask<double, false>(g, t); }
// The fused tiles (GemmArgs::fused) only where the target has an FMA instruction (fused_native_fma, gemm_fused.h).
#if HWY_NATIVE_FMA
void TaskF32Fma(const GemmArgs& g, int64_t t) { DirectTask<float, true>(g, t); }
void TaskF64Fma(const GemmArgs& g, int64_t t) { DirectTask<double, true>(g, t); }
#else
void TaskF32Fma(const GemmArgs&, int64_t) { throw std::logic_error("fused tile on a target without FMA"); }
void TaskF64Fma(const GemmArgs&, int64_t) { throw std::logic_error("fused tile on a target without FMA"); }
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

bool gemm_direct_fits(DType d, const GemmArgs& g) {
  if (d == DType::Float32) return HWY_DYNAMIC_DISPATCH(FitsF32)(g);
  if (d == DType::Float64) return HWY_DYNAMIC_DISPATCH(FitsF64)(g);
  return false;
}

void run_direct_tasks(DType d, const GemmArgs& g, int64_t NB, Round rnd, const Epilogue* epi) {
  const int64_t per_batch = g.tasks_m * g.tasks_n;
  parallel_for(NB * per_batch, [&](int64_t t) {
    if (rnd != Round::NearestEven) set_hw_round(rnd);
    if (g.fused) {
      fused_tile_task_count().fetch_add(1, std::memory_order_relaxed);
      if (d == DType::Float32) HWY_DYNAMIC_DISPATCH(TaskF32Fma)(g, t);
      else HWY_DYNAMIC_DISPATCH(TaskF64Fma)(g, t);
    } else if (d == DType::Float32) {
      HWY_DYNAMIC_DISPATCH(TaskF32)(g, t);
    } else {
      HWY_DYNAMIC_DISPATCH(TaskF64)(g, t);
    }
    if (rnd != Round::NearestEven) set_hw_round(Round::NearestEven);
    if (epi) epi->apply(g, t);  // the block is final and still in cache
  }, Round::NearestEven);
  g_direct_runs.fetch_add(1);
}

}  // namespace maroon::cpu
#endif
