// The fused matmul's register kernel, compiled once per SIMD target. Every output lane runs
// acc = fma(a[k], b[k], acc) for k = 0, 1, ... from +0: one vector FMA per step on targets with a
// native FMA instruction (IEEE fusedMultiplyAdd, rounded once in the hardware mode the caller
// set), and src/ref's soft-float MULACC on targets without one, where a separate multiply and add
// would round twice. Blocking over k stores and reloads the running sums exactly.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/gemm_fused.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "cpu/gemm_fused.h"
#include "cpu/gemm_pack.h"
#include "float/softfloat.h"

HWY_BEFORE_NAMESPACE();
namespace maroon::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Rows of the register tile: 12 where there are 32 vector registers (24 accumulators, two B
// vectors and a broadcast), 6 where there are 16 (12 + 2 + 1).
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_SVE || \
    HWY_TARGET == HWY_SVE2 || HWY_TARGET == HWY_NEON
#define MAROON_FROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
constexpr int kMR = 12;
#else
#define MAROON_FROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
constexpr int kMR = 6;
#endif

template <class T>
HWY_INLINE size_t PanelCols() {
  return 2 * hn::Lanes(hn::ScalableTag<T>());
}

#if HWY_NATIVE_FMA
// c (kMR rows of 2 vectors, row stride ldc) = fma chains over k of ap[k][r] * bp[k][0..2L).
// first: the chains start here from +0 (nothing to load).
template <class T>
HWY_NOINLINE void Micro(const T* HWY_RESTRICT ap, const T* HWY_RESTRICT bp, int kc,
                        T* HWY_RESTRICT c, size_t ldc, bool first, Round) {
  const hn::ScalableTag<T> d;
  const size_t L = hn::Lanes(d);
#define MAROON_LOAD(r)                           \
  auto c##r##0 = hn::Zero(d), c##r##1 = hn::Zero(d); \
  if (!first) {                                    \
    c##r##0 = hn::LoadU(d, c + (r) * ldc);         \
    c##r##1 = hn::LoadU(d, c + (r) * ldc + L);     \
  }
  MAROON_FROWS(MAROON_LOAD)
#undef MAROON_LOAD
  for (int k = 0; k < kc; ++k) {
    const auto b0 = hn::LoadU(d, bp + k * 2 * L);
    const auto b1 = hn::LoadU(d, bp + k * 2 * L + L);
    const T* a = ap + k * kMR;
#define MAROON_STEP(r)                           \
  {                                              \
    const auto av = hn::Set(d, a[r]);            \
    c##r##0 = hn::MulAdd(av, b0, c##r##0);       \
    c##r##1 = hn::MulAdd(av, b1, c##r##1);       \
  }
    MAROON_FROWS(MAROON_STEP)
#undef MAROON_STEP
  }
#define MAROON_STORE(r)                  \
  hn::StoreU(c##r##0, d, c + (r) * ldc); \
  hn::StoreU(c##r##1, d, c + (r) * ldc + L);
  MAROON_FROWS(MAROON_STORE)
#undef MAROON_STORE
}
constexpr bool kNativeFma = true;
#else
// No FMA instruction: each step is src/ref's exact MULACC, one output at a time.
template <class T>
HWY_NOINLINE void Micro(const T* HWY_RESTRICT ap, const T* HWY_RESTRICT bp, int kc,
                        T* HWY_RESTRICT c, size_t ldc, bool first, Round rnd) {
  const size_t nr = PanelCols<T>();
  const sf::Format f = sizeof(T) == 4 ? sf::kF32 : sf::kF64;
  for (int r = 0; r < kMR; ++r)
    for (size_t j = 0; j < nr; ++j) {
      uint64_t acc = 0, x = 0, y = 0;  // +0
      if (!first) std::memcpy(&acc, c + r * ldc + j, sizeof(T));
      for (int k = 0; k < kc; ++k) {
        std::memcpy(&x, ap + k * kMR + r, sizeof(T));
        std::memcpy(&y, bp + k * nr + j, sizeof(T));
        acc = sf::fma(f, x, y, acc, rnd);
      }
      std::memcpy(c + r * ldc + j, &acc, sizeof(T));
    }
}
constexpr bool kNativeFma = false;
#endif
#undef MAROON_FROWS

// One task: rows [i0, i0+MC) x columns [j0, j0+NC) of one batch, k blocked by KC.
template <class T>
void Block(const GemmArgs& g, const T* apack, const T* bpack, int64_t task, Round rnd) {
  const int64_t NR = static_cast<int64_t>(PanelCols<T>());
  const int64_t per_batch = g.tasks_m * g.tasks_n;
  const int64_t b = task / per_batch, im = (task % per_batch) / g.tasks_n, jn = task % g.tasks_n;
  const int64_t NC = fused_nc(sizeof(T) == 4 ? DType::Float32 : DType::Float64);
  const int64_t i0 = im * kGemmMC, j0 = jn * NC;
  const int64_t mc = std::min<int64_t>(kGemmMC, g.M - i0), nc = std::min<int64_t>(NC, g.N - j0);
  const int64_t mp = (mc + kMR - 1) / kMR, np = (nc + NR - 1) / NR;
  const int64_t ldc = np * NR;
  thread_local std::vector<T> ctile;
  ctile.resize(static_cast<size_t>(mp * kMR * ldc));
  if (g.K == 0) std::fill(ctile.begin(), ctile.end(), T(0));  // empty sums: +0
  // Blocking over k stores and reloads the exact running sums, so its size cannot change a bit.
  const int64_t KC = kGemmKC;
  for (int64_t k0 = 0; k0 < g.K; k0 += KC) {
    const int kc = static_cast<int>(std::min<int64_t>(KC, g.K - k0));
    for (int64_t pi = 0; pi < mp; ++pi) {
      const T* ap = apack + ((i0 / kMR + pi) * g.K + k0) * kMR;
      for (int64_t pj = 0; pj < np; ++pj) {
        const T* bp = bpack + ((j0 / NR + pj) * g.K + k0) * NR;
        Micro<T>(ap, bp, kc, ctile.data() + pi * kMR * ldc + pj * NR, static_cast<size_t>(ldc), k0 == 0, rnd);
      }
    }
  }
  T* C = static_cast<T*>(g.C);
  const int64_t bc = g.batchC[b];
  const bool unit = adjacent(g.colC + j0, nc);  // columns adjacent in the output (row-major)
  for (int64_t i = 0; i < mc; ++i) {
    const T* row = ctile.data() + i * ldc;
    T* out = C + bc + g.rowC[i0 + i];
    if (unit) {
      out += g.colC[j0];
      for (int64_t j = 0; j < nc; ++j) out[j] = row[j] != row[j] ? CanonicalNaN<T>() : row[j];
    } else {
      for (int64_t j = 0; j < nc; ++j) out[g.colC[j0 + j]] = row[j] != row[j] ? CanonicalNaN<T>() : row[j];
    }
  }
}

void FusedSizesF32(int64_t* mr, int64_t* nr) { *mr = kMR; *nr = static_cast<int64_t>(PanelCols<float>()); }
void FusedSizesF64(int64_t* mr, int64_t* nr) { *mr = kMR; *nr = static_cast<int64_t>(PanelCols<double>()); }
bool FusedNativeFma() { return kNativeFma; }
void FusedBlockF32(const GemmArgs& g, const void* ap, const void* bp, int64_t t, Round r) {
  Block<float>(g, static_cast<const float*>(ap), static_cast<const float*>(bp), t, r);
}
void FusedBlockF64(const GemmArgs& g, const void* ap, const void* bp, int64_t t, Round r) {
  Block<double>(g, static_cast<const double*>(ap), static_cast<const double*>(bp), t, r);
}

}  // namespace maroon::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace maroon::cpu {
HWY_EXPORT(FusedSizesF32);
HWY_EXPORT(FusedSizesF64);
HWY_EXPORT(FusedNativeFma);
HWY_EXPORT(FusedBlockF32);
HWY_EXPORT(FusedBlockF64);

void fused_panel_sizes(DType d, int64_t* mr, int64_t* nr) {
  if (d == DType::Float32) HWY_DYNAMIC_DISPATCH(FusedSizesF32)(mr, nr);
  else HWY_DYNAMIC_DISPATCH(FusedSizesF64)(mr, nr);
}
bool fused_native_fma() { return HWY_DYNAMIC_DISPATCH(FusedNativeFma)(); }
void fused_task(DType d, const GemmArgs& g, const void* ap, const void* bp, int64_t task, Round r) {
  if (d == DType::Float32) HWY_DYNAMIC_DISPATCH(FusedBlockF32)(g, ap, bp, task, r);
  else HWY_DYNAMIC_DISPATCH(FusedBlockF64)(g, ap, bp, task, r);
}
}  // namespace maroon::cpu
#endif
