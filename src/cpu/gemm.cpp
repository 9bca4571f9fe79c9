// The matmul kernel: REDUCE ADD over MUL of two strided leaves. Each output is summed exactly as
// src/ref sums it: acc = +0, then acc = acc + round(a[i,k] * b[k,j]) for k = 0, 1, ... in
// order, multiply and add rounded separately (Lagoon's mmul, SoftBLAS gemm). Speed comes only
// from doing many outputs at once: packed panels, a register tile of 8x2 (or 4x2) vectors across
// j, and blocking over k that stores and reloads the running sums exactly.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/gemm.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cpu/gemm.h"

HWY_BEFORE_NAMESPACE();
namespace maroon::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Rows of the register tile: 12 where there are 32 vector registers (24 accumulators, two B
// vectors and a broadcast), else 4.
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_SVE || \
    HWY_TARGET == HWY_SVE2 || HWY_TARGET == HWY_NEON
constexpr int kMR = 12;
#else
constexpr int kMR = 4;
#endif
#undef MAROON_ROWS4
#undef MAROON_ROWS12

#undef MAROON_ROWS
#define MAROON_ROWS4(X) X(0) X(1) X(2) X(3)
#define MAROON_ROWS12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_SVE || \
    HWY_TARGET == HWY_SVE2 || HWY_TARGET == HWY_NEON
#define MAROON_ROWS MAROON_ROWS12
#else
#define MAROON_ROWS MAROON_ROWS4
#endif

// c (kMR rows of 2 vectors, row stride ldc) += sum over k of ap[k][r] * bp[k][0..2L), one
// rounding for each product and each sum, k in increasing order.
template <class T>
HWY_NOINLINE void Micro(const T* HWY_RESTRICT ap, const T* HWY_RESTRICT bp, int kc,
                        T* HWY_RESTRICT c, size_t ldc) {
  const hn::ScalableTag<T> d;
  const size_t L = hn::Lanes(d);
#define MAROON_LOAD(r)                             \
  auto c##r##0 = hn::LoadU(d, c + (r) * ldc);     \
  auto c##r##1 = hn::LoadU(d, c + (r) * ldc + L);
  MAROON_ROWS(MAROON_LOAD)
#undef MAROON_LOAD
  for (int k = 0; k < kc; ++k) {
    const auto b0 = hn::LoadU(d, bp + k * 2 * L);
    const auto b1 = hn::LoadU(d, bp + k * 2 * L + L);
    const T* a = ap + k * kMR;
#define MAROON_STEP(r)                             \
  {                                                \
    const auto av = hn::Set(d, a[r]);              \
    c##r##0 = hn::Add(c##r##0, hn::Mul(av, b0));   \
    c##r##1 = hn::Add(c##r##1, hn::Mul(av, b1));   \
  }
    MAROON_ROWS(MAROON_STEP)
#undef MAROON_STEP
  }
#define MAROON_STORE(r)                            \
  hn::StoreU(c##r##0, d, c + (r) * ldc);           \
  hn::StoreU(c##r##1, d, c + (r) * ldc + L);
  MAROON_ROWS(MAROON_STORE)
#undef MAROON_STORE
}

// Packs every B panel ([k][NR], columns past N zero) of batch b once; all tasks of the batch
// share them. A is packed by each task for its own rows (PackA), so no buffer ever holds all of
// A: for conv2d, A is the im2col matrix, many times larger than the image.
template <class T>
void PackB(const GemmArgs& g, int64_t b, T* bpack, int64_t p0, int64_t p1) {
  const hn::ScalableTag<T> d;
  const int64_t NR = 2 * static_cast<int64_t>(hn::Lanes(d));
  const T* B = static_cast<const T*>(g.B);
  const int64_t bb = g.batchB[b];
  for (int64_t p = p0; p < p1; ++p)
    for (int64_t k = 0; k < g.K; ++k) {
      T* dst = bpack + (p * g.K + k) * NR;
      const T* src = B + bb + g.kB[k];
      for (int64_t jj = 0; jj < NR; ++jj) {
        const int64_t j = p * NR + jj;
        dst[jj] = j < g.N ? src[g.colB[j]] : T(0);
      }
    }
}

// Rows [i0, i0 + mp*kMR) of batch b's A, k in [k0, k0 + kc), as panels [p][k][kMR] (rows
// past M zero). Written in order, read as kMR streams along k.
template <class T>
void PackA(const GemmArgs& g, int64_t b, int64_t i0, int64_t mp, int64_t k0, int kc, T* apack) {
  const T* A = static_cast<const T*>(g.A) + g.batchA[b];
  const int64_t* kA = g.kA + k0;
  for (int64_t p = 0; p < mp; ++p) {
    const T* rows[kMR];
    int live = 0;  // rows [0, live) exist; the rest of the panel is zero
    for (int r = 0; r < kMR; ++r) {
      const int64_t i = i0 + p * kMR + r;
      if (i < g.M) rows[live++] = A + g.rowA[i];
    }
    T* dst = apack + p * kc * kMR;
    for (int k = 0; k < kc; ++k, dst += kMR) {
      const int64_t off = kA[k];
      int r = 0;
      for (; r < live; ++r) dst[r] = rows[r][off];
      for (; r < kMR; ++r) dst[r] = T(0);
    }
  }
}

// One task: rows [i0, i0+MC) x columns [j0, j0+NC) of batch b, k blocked by KC (the running
// sums are stored and reloaded exactly, so blocking changes no bit).
template <class T>
void Block(const GemmArgs& g, const T* bpack, int64_t task) {
  const hn::ScalableTag<T> d;
  const int64_t NR = 2 * static_cast<int64_t>(hn::Lanes(d));
  const int64_t per_batch = g.tasks_m * g.tasks_n;
  const int64_t b = task / per_batch, im = (task % per_batch) / g.tasks_n, jn = task % g.tasks_n;
  const int64_t i0 = im * kGemmMC, j0 = jn * kGemmNC;
  const int64_t mc = std::min<int64_t>(kGemmMC, g.M - i0), nc = std::min<int64_t>(kGemmNC, g.N - j0);
  const int64_t mp = (mc + kMR - 1) / kMR, np = (nc + NR - 1) / NR;
  const int64_t ldc = np * NR;
  thread_local std::vector<T> ctile, apack;
  ctile.assign(static_cast<size_t>(mp * kMR * ldc), T(0));  // +0: the fold's identity
  apack.resize(static_cast<size_t>(mp * kMR * kGemmKC));
  for (int64_t k0 = 0; k0 < g.K; k0 += kGemmKC) {
    const int kc = static_cast<int>(std::min<int64_t>(kGemmKC, g.K - k0));
    PackA<T>(g, b, i0, mp, k0, kc, apack.data());
    for (int64_t pi = 0; pi < mp; ++pi) {
      const T* ap = apack.data() + pi * kc * kMR;
      for (int64_t pj = 0; pj < np; ++pj) {
        const T* bp = bpack + ((j0 / NR + pj) * g.K + k0) * NR;
        Micro<T>(ap, bp, kc, ctile.data() + pi * kMR * ldc + pj * NR, static_cast<size_t>(ldc));
      }
    }
  }
  T* C = static_cast<T*>(g.C);
  const int64_t bc = g.batchC[b];
  for (int64_t i = 0; i < mc; ++i)
    for (int64_t j = 0; j < nc; ++j) {
      T v = ctile[i * ldc + j];
      if (v != v) v = CanonicalNaN<T>();
      C[bc + g.rowC[i0 + i] + g.colC[j0 + j]] = v;
    }
}

template <class T>
void PanelSizes(int64_t* mr, int64_t* nr) {
  const hn::ScalableTag<T> d;
  *mr = kMR;
  *nr = 2 * static_cast<int64_t>(hn::Lanes(d));
}

void PackF32(const GemmArgs& g, int64_t b, void* bp, int64_t p0, int64_t p1) {
  PackB<float>(g, b, static_cast<float*>(bp), p0, p1);
}
void PackF64(const GemmArgs& g, int64_t b, void* bp, int64_t p0, int64_t p1) {
  PackB<double>(g, b, static_cast<double*>(bp), p0, p1);
}
void BlockF32(const GemmArgs& g, const void* bp, int64_t t) { Block<float>(g, static_cast<const float*>(bp), t); }
void BlockF64(const GemmArgs& g, const void* bp, int64_t t) { Block<double>(g, static_cast<const double*>(bp), t); }
void SizesF32(int64_t* mr, int64_t* nr) { PanelSizes<float>(mr, nr); }
void SizesF64(int64_t* mr, int64_t* nr) { PanelSizes<double>(mr, nr); }

}  // namespace maroon::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace maroon::cpu {
HWY_EXPORT(PackF32);
HWY_EXPORT(PackF64);
HWY_EXPORT(BlockF32);
HWY_EXPORT(BlockF64);
HWY_EXPORT(SizesF32);
HWY_EXPORT(SizesF64);

void gemm_panel_sizes(DType d, int64_t* mr, int64_t* nr) {
  if (d == DType::Float32) HWY_DYNAMIC_DISPATCH(SizesF32)(mr, nr);
  else HWY_DYNAMIC_DISPATCH(SizesF64)(mr, nr);
}
void gemm_pack_b(DType d, const GemmArgs& g, int64_t b, void* bp, int64_t p0, int64_t p1) {
  if (d == DType::Float32) HWY_DYNAMIC_DISPATCH(PackF32)(g, b, bp, p0, p1);
  else HWY_DYNAMIC_DISPATCH(PackF64)(g, b, bp, p0, p1);
}
void gemm_task(DType d, const GemmArgs& g, const void* bp, int64_t task) {
  if (d == DType::Float32) HWY_DYNAMIC_DISPATCH(BlockF32)(g, bp, task);
  else HWY_DYNAMIC_DISPATCH(BlockF64)(g, bp, task);
}
}  // namespace maroon::cpu
#endif
