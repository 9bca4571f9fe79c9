// A long sum onto few outputs (gemm_longk.h). One operand's rows, a stride apart and contiguous
// along k in runs, are the lanes: a task packs one vector of them a k block at a time (a register
// transpose, gemm_transpose-inl.h) into a panel that stays in L1 while tiles of up to 13 of the
// other operand's rows, read in place and broadcast, run over it. So the lanes' operand (conv2d's
// output gradient, 37.7 MB for beautiful_mnist's first layer at batch 512) is read from memory
// once in all, and the other (the 1.6 MB image) from cache. A tile of 13 rows by one vector holds
// 13 sums (more than an FMA's latency times its two ports) and needs 15 registers, so every
// target with 16 runs it.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/gemm_longk.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <stdexcept>

#include "cpu/gemm_longk.h"
#include "cpu/gemm_micro-inl.h"
#include "cpu/gemm_pack.h"
#include "cpu/gemm_transpose-inl.h"
#include "cpu/threads.h"

namespace maroon::cpu {
#ifndef MAROON_CPU_GEMM_LONGK_ROLES_  // this file is compiled once per target
#define MAROON_CPU_GEMM_LONGK_ROLES_
// The product with its operands named by role: output (i, j) = sum over k of
// X[x0 + i * sx + kX[k]] * Y[offY[j] + kY[k]], stored at C + cX[i] + cY[j]. X's rows are the lanes.
struct LongK {
  const void* X;
  int64_t x0, sx;
  const int64_t* kX;
  int64_t nx;
  const void* Y;
  const int64_t *offY, *kY;
  int64_t ny;
  void* C;
  const int64_t *cX, *cY;
  int64_t K;
};
constexpr int kLongKRows = 13;    // the most rows of Y a tile
constexpr int64_t kLongKKC = 256;  // k a block: the panel of 16 float32 lanes is 16 KB
#endif
}  // namespace maroon::cpu

HWY_BEFORE_NAMESPACE();
namespace maroon::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// R rows of Y by one vector of X's lanes over kc k: acc (R vectors) += the block's steps, from
// +0 where `first`. Row r's element k is broadcast from Y + kY[k] + off[r].
#define MAROON_LK_OFF(r) const int64_t o##r = off[r];
#define MAROON_LK_LOAD(r) auto c##r = first ? hn::Zero(d) : hn::LoadU(d, acc + (r) * L);
#define MAROON_LK_STEP(r) c##r = ProductStep<kFma>(d, y + o##r, b, c##r);
#define MAROON_LK_STORE(r) hn::StoreU(c##r, d, acc + (r) * L);
#define MAROON_LK_BODY                          \
  const hn::ScalableTag<T> d;                   \
  const size_t L = hn::Lanes(d);                \
  MAROON_LK_ROWS(MAROON_LK_OFF)                 \
  MAROON_LK_ROWS(MAROON_LK_LOAD)                \
  for (int k = 0; k < kc; ++k) {                \
    const auto b = hn::LoadU(d, xp + k * L);    \
    const T* HWY_RESTRICT y = Y + kY[k];        \
    MAROON_LK_ROWS(MAROON_LK_STEP)              \
  }                                             \
  MAROON_LK_ROWS(MAROON_LK_STORE)

template <class T, bool kFma>
HWY_NOINLINE void Tile13(const T* HWY_RESTRICT Y, const int64_t* off, const int64_t* HWY_RESTRICT kY,
                         const T* HWY_RESTRICT xp, int kc, T* HWY_RESTRICT acc, bool first) {
#define MAROON_LK_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12)
  MAROON_LK_BODY
#undef MAROON_LK_ROWS
}
template <class T, bool kFma>
HWY_NOINLINE void Tile12(const T* HWY_RESTRICT Y, const int64_t* off, const int64_t* HWY_RESTRICT kY,
                         const T* HWY_RESTRICT xp, int kc, T* HWY_RESTRICT acc, bool first) {
#define MAROON_LK_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
  MAROON_LK_BODY
#undef MAROON_LK_ROWS
}
template <class T, bool kFma>
HWY_NOINLINE void Tile8(const T* HWY_RESTRICT Y, const int64_t* off, const int64_t* HWY_RESTRICT kY,
                        const T* HWY_RESTRICT xp, int kc, T* HWY_RESTRICT acc, bool first) {
#define MAROON_LK_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
  MAROON_LK_BODY
#undef MAROON_LK_ROWS
}
template <class T, bool kFma>
HWY_NOINLINE void Tile4(const T* HWY_RESTRICT Y, const int64_t* off, const int64_t* HWY_RESTRICT kY,
                        const T* HWY_RESTRICT xp, int kc, T* HWY_RESTRICT acc, bool first) {
#define MAROON_LK_ROWS(X) X(0) X(1) X(2) X(3)
  MAROON_LK_BODY
#undef MAROON_LK_ROWS
}
#undef MAROON_LK_OFF
#undef MAROON_LK_LOAD
#undef MAROON_LK_STEP
#undef MAROON_LK_STORE
#undef MAROON_LK_BODY

// Y's rows in tiles of near-equal size, at most kLongKRows: 25 as 13 + 12. As 12 + 12 + 1, the
// last tile (the 4-row kernel for one row, its 4 sums bound by the FMA's latency) took 0.4 of a
// 12-row tile's time (perf: 1.6% of the samples against 8.2% for two 12-row tiles). Tile t
// starts at row TileRow(p, t).
inline int64_t TileRow(const LongK& p, int64_t t) {
  const int64_t tiles = (p.ny + kLongKRows - 1) / kLongKRows;
  return p.ny * t / tiles;
}

// Tasks: one per vector of X's rows; where that is one, Y's tiles are split in two tasks (each
// reads X again; the split is the shape's and the target's lanes', never the thread count's,
// and no split changes a bit: each output is one task's fold).
template <class T>
int64_t Splits(const LongK& p) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<T>()));
  const int64_t vectors = (p.nx + L - 1) / L, tiles = (p.ny + kLongKRows - 1) / kLongKRows;
  return vectors == 1 && tiles >= 2 ? 2 : 1;
}

template <class T>
int64_t Tasks(const LongK& p) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<T>()));
  return (p.nx + L - 1) / L * Splits<T>(p);
}

// X's rows [i0, i0 + live) over k [k0, k0 + kc) as [k][L], lanes past `live` zero: each run of
// adjacent k is one transposed panel (copies only).
template <class T>
void PackX(const LongK& p, int64_t i0, int64_t live, int64_t k0, int64_t kc, T* xp) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<T>()));
  const T* const X = static_cast<const T*>(p.X) + p.x0 + i0 * p.sx;
  const int64_t* const kX = p.kX + k0;
  for (int64_t k = 0; k < kc;) {
    int64_t e = k + 1;
    while (e < kc && kX[e] == kX[e - 1] + 1) ++e;
    PackBTransposed<T>(X + kX[k], p.sx, live, L, e - k, xp + k * L);
    k = e;
  }
}

// A hint: X's rows over k [k0, k0 + kc), a cache line at a time, requested while the tiles
// compute the block before from L1 (the pack waited on memory for each of its 16 streams).
template <class T>
void PrefetchX(const LongK& p, int64_t i0, int64_t live, int64_t k0, int64_t kc) {
  constexpr int64_t kLine = 64 / sizeof(T);
  const T* const X = static_cast<const T*>(p.X) + p.x0 + i0 * p.sx;
  for (int64_t l = 0; l < live; ++l)
    for (int64_t k = 0; k < kc; k += kLine) __builtin_prefetch(X + l * p.sx + p.kX[k0 + k]);
}

template <class T, bool kFma>
void Task(const LongK& p, int64_t t) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<T>()));
  const int64_t splits = Splits<T>(p), tiles = (p.ny + kLongKRows - 1) / kLongKRows;
  const int64_t i0 = t / splits * L, live = std::min(L, p.nx - i0);
  const int64_t part = t % splits, ta = tiles * part / splits, tb = tiles * (part + 1) / splits;
  thread_local std::unique_ptr<uint64_t[]> xmem, amem;
  thread_local size_t xcap = 0, acap = 0;
  T* const xp = static_cast<T*>(scratch(&xmem, &xcap, static_cast<size_t>(kLongKKC * L) * sizeof(T)));
  T* const acc = static_cast<T*>(scratch(&amem, &acap, static_cast<size_t>((tb - ta) * kLongKRows * L) * sizeof(T)));
  const T* const Y = static_cast<const T*>(p.Y);
  for (int64_t k0 = 0; k0 < p.K; k0 += kLongKKC) {
    const int kc = static_cast<int>(std::min(kLongKKC, p.K - k0));
    PackX<T>(p, i0, live, k0, kc, xp);
    if (k0 + kc < p.K) PrefetchX<T>(p, i0, live, k0 + kc, std::min(kLongKKC, p.K - k0 - kc));
    for (int64_t tile = ta; tile < tb; ++tile) {
      const int64_t j0 = TileRow(p, tile), rows = TileRow(p, tile + 1) - j0;
      int64_t off[kLongKRows];  // rows past the product's read its last row again (discarded)
      for (int r = 0; r < kLongKRows; ++r) off[r] = p.offY[j0 + std::min<int64_t>(r, rows - 1)];
      T* const a = acc + (tile - ta) * kLongKRows * L;
      if (rows > 12) Tile13<T, kFma>(Y, off, p.kY + k0, xp, kc, a, k0 == 0);
      else if (rows > 8) Tile12<T, kFma>(Y, off, p.kY + k0, xp, kc, a, k0 == 0);
      else if (rows > 4) Tile8<T, kFma>(Y, off, p.kY + k0, xp, kc, a, k0 == 0);
      else Tile4<T, kFma>(Y, off, p.kY + k0, xp, kc, a, k0 == 0);
    }
  }
  T* const C = static_cast<T*>(p.C);
  for (int64_t tile = ta; tile < tb; ++tile) {
    const int64_t j0 = TileRow(p, tile), rows = TileRow(p, tile + 1) - j0;
    const T* const a = acc + (tile - ta) * kLongKRows * L;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t l = 0; l < live; ++l) {
        const T v = a[r * L + l];
        C[p.cX[i0 + l] + p.cY[j0 + r]] = v != v ? CanonicalNaN<T>() : v;
      }
  }
}

int64_t TasksF32(const LongK& p) { return Tasks<float>(p); }
int64_t TasksF64(const LongK& p) { return Tasks<double>(p); }
void TaskF32(const LongK& p, int64_t t) { Task<float, false>(p, t); }
void TaskF64(const LongK& p, int64_t t) { Task<double, false>(p, t); }
// The fused steps only where the target has an FMA instruction: the planner sends fused products
// elsewhere on the others (fused_native_fma, gemm_fused.h).
#if HWY_NATIVE_FMA
void TaskF32Fma(const LongK& p, int64_t t) { Task<float, true>(p, t); }
void TaskF64Fma(const LongK& p, int64_t t) { Task<double, true>(p, t); }
#else
void TaskF32Fma(const LongK&, int64_t) { throw std::logic_error("fused tile on a target without FMA"); }
void TaskF64Fma(const LongK&, int64_t) { throw std::logic_error("fused tile on a target without FMA"); }
#endif

}  // namespace maroon::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace maroon::cpu {
HWY_EXPORT(TasksF32);
HWY_EXPORT(TasksF64);
HWY_EXPORT(TaskF32);
HWY_EXPORT(TaskF64);
HWY_EXPORT(TaskF32Fma);
HWY_EXPORT(TaskF64Fma);

namespace {
std::atomic<int64_t> g_longk_runs{0};

// Whether rows idx[0..n) can be the lanes: at least kLongKMinLanes of them (fewer would leave
// most of each vector idle: 4 output channels fill 4 of AVX-512's 16 float32 lanes), a stride apart,
// each starting a run of adjacent k (at least eight, so that the pack transposes whole blocks).
constexpr int64_t kLongKMinLanes = 8;
bool lane_side(const int64_t* idx, int64_t n, const int64_t* kidx, int64_t K) {
  return n >= kLongKMinLanes && strided(idx, n) && K >= 8 && adjacent(kidx, 8);
}

// g by role (elements of sz bytes): A's rows as the lanes where they qualify, else B's columns
// (C's indices swapped); every pointer at its operand's one batch.
bool roles(const GemmArgs& g, size_t sz, LongK* p) {
  const bool a = lane_side(g.rowA, g.M, g.kA, g.K);
  if (!a && !lane_side(g.colB, g.N, g.kB, g.K)) return false;
  auto at = [sz](const void* base, int64_t elements) {
    return static_cast<const char*>(base) + elements * static_cast<int64_t>(sz);
  };
  const void* const A = at(g.A, g.batchA[0]);
  const void* const B = at(g.B, g.batchB[0]);
  const int64_t* const rows = a ? g.rowA : g.colB;
  const int64_t nx = a ? g.M : g.N;
  p->X = a ? A : B, p->x0 = rows[0], p->sx = rows[1] - rows[0], p->kX = a ? g.kA : g.kB, p->nx = nx;
  p->Y = a ? B : A, p->offY = a ? g.colB : g.rowA, p->kY = a ? g.kB : g.kA, p->ny = a ? g.N : g.M;
  p->C = const_cast<char*>(at(g.C, g.batchC[0]));
  p->cX = a ? g.rowC : g.colC, p->cY = a ? g.colC : g.rowC, p->K = g.K;
  return true;
}
}  // namespace

int64_t gemm_longk_runs() { return g_longk_runs.load(); }

bool gemm_longk_fits(DType d, const GemmArgs& g, int64_t NB) {
  if ((d != DType::Float32 && d != DType::Float64) || NB != 1) return false;
  if (g.M * g.N > kLongKOutputs || g.K < kLongKMinK) return false;
  LongK p;
  return roles(g, itemsize(d), &p);
}

void run_longk_tasks(DType d, const GemmArgs& g, Round rnd) {
  LongK p;
  if (!roles(g, itemsize(d), &p)) throw std::logic_error("run_longk_tasks: the product does not fit (gemm_longk_fits)");
  const bool f32 = d == DType::Float32;
  const int64_t tasks = f32 ? HWY_DYNAMIC_DISPATCH(TasksF32)(p) : HWY_DYNAMIC_DISPATCH(TasksF64)(p);
  parallel_for(tasks, [&](int64_t t) {
    if (rnd != Round::NearestEven) set_hw_round(rnd);
    if (g.fused) {
      if (f32) HWY_DYNAMIC_DISPATCH(TaskF32Fma)(p, t);
      else HWY_DYNAMIC_DISPATCH(TaskF64Fma)(p, t);
    } else if (f32) {
      HWY_DYNAMIC_DISPATCH(TaskF32)(p, t);
    } else {
      HWY_DYNAMIC_DISPATCH(TaskF64)(p, t);
    }
    if (rnd != Round::NearestEven) set_hw_round(Round::NearestEven);
  }, Round::NearestEven);
  g_longk_runs.fetch_add(1);
}

}  // namespace maroon::cpu
#endif
