// Pieces of the register kernels shared by the packed matmul (gemm.cpp) and the small products
// read in place (gemm_direct.cpp), compiled once per SIMD target like both (Highway's -inl
// pattern: included again for each target, hence the toggled guard).
#if defined(MAROON_CPU_GEMM_MICRO_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef MAROON_CPU_GEMM_MICRO_INL_H_
#undef MAROON_CPU_GEMM_MICRO_INL_H_
#else
#define MAROON_CPU_GEMM_MICRO_INL_H_
#endif

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace maroon::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// round(*a * b) in every lane. On AVX-512 the multiply reads *a with an embedded broadcast
// ({1to16}): a separate broadcast instruction takes a slot on the vector pipes, and at six of
// them per 24 multiply-add pairs the 6x4 tile measured 80% of this machine's mul+add peak
// against 100% with embedded broadcasts. The same vmulps either way, so the same bits (it
// rounds by MXCSR like any multiply); inline assembly because compilers fold a broadcast into
// the multiply only when it has a single use.
template <class D, class V>
HWY_INLINE V MulBroadcast(D d, const hn::TFromD<D>* a, V b) {
#if (HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL) && defined(__GNUC__)
  (void)d;
  decltype(b.raw) t;
  if constexpr (sizeof(hn::TFromD<D>) == 4)
    asm("vmulps %1%{1to16%}, %2, %0" : "=v"(t) : "m"(*a), "v"(b.raw));
  else
    asm("vmulpd %1%{1to8%}, %2, %0" : "=v"(t) : "m"(*a), "v"(b.raw));
  return V{t};
#else
  return hn::Mul(hn::Set(d, *a), b);
#endif
}

// round(*a * b + c) in every lane, one rounding (REDUCE_MULACC's step, docs/spec.md §14): the
// fused kernels' step. Only targets with an FMA instruction instantiate it (HWY_NATIVE_FMA):
// elsewhere Highway's MulAdd is a multiply and an add, two roundings, so the planner sends fused
// products to gemm_fused.h's exact software path.
template <class D, class V>
HWY_INLINE V MulAddBroadcast(D d, const hn::TFromD<D>* a, V b, V c) {
#if !HWY_NATIVE_FMA
  static_assert(sizeof(D) == 0, "no FMA instruction on this target: fused products are not run here");
#endif
  return hn::MulAdd(hn::Set(d, *a), b, c);
}

// One step of a tile's sum: c + round(*a * b) rounded (REDUCE ADD over MUL), or *a * b + c
// rounded once (kFma: REDUCE_MULACC). The same k order and the same +0 start either way.
template <bool kFma, class D, class V>
HWY_INLINE V ProductStep(D d, const hn::TFromD<D>* a, V b, V c) {
  if constexpr (kFma) return MulAddBroadcast(d, a, b, c);
  else return hn::Add(c, MulBroadcast(d, a, b));
}

// Tiles: 4 x 2 vectors everywhere (fits 16 registers). Where there are 32 registers, 12 x 2
// for narrow products and 6 x 4 for the rest: each broadcast of A then feeds four products,
// measured 10-15 points closer to the machine's peak on AVX-512; 8 x 3 (the same 24
// accumulators) where 6 rows would leave a partial tile that 8 do not (TileFor in gemm.cpp).
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_SVE || \
    HWY_TARGET == HWY_SVE2 || HWY_TARGET == HWY_NEON
#undef MAROON_GEMM_WIDE_TILES
#define MAROON_GEMM_WIDE_TILES 1
constexpr bool kWideTiles = true;
#else
#undef MAROON_GEMM_WIDE_TILES
#define MAROON_GEMM_WIDE_TILES 0
constexpr bool kWideTiles = false;
#endif

}  // namespace maroon::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // toggled include guard
