// A sum's terms laid out once per shape and folded many times: each of P outputs (rows of
// `width`) adds R terms in order, a term an offset into some memory or padding. Consecutive
// outputs of a row whose terms lie consecutively are one segment, added as a run. Used where a
// sum reads the same pattern at many bases: conv2d's input gradient folding its product tile by
// tile (matmul_fold.cpp), pool's gradient folding a buffer through its view stack per (batch,
// channel) (view_fold.cpp). Padding is skipped: a padded term is +0, which leaves a running sum
// from +0 as it is (x + +0 = x for every x it can hold: only rounding down makes it -0, and
// there -0 + +0 = -0); NaNs are made canonical at the end, as the generic fold's are.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "cpu/gemm.h"
#include "maroon/dtype.h"

namespace maroon::cpu {

// A run of `len` consecutive outputs of a row, from x0, that add src[base + l] (l < len).
struct FoldSeg {
  int64_t x0, len, base;
};

struct FoldSegs {
  int64_t P = 1, R = 1, width = 1;  // outputs, terms per output, outputs per row
  std::vector<int64_t> begin;       // (row q, term r) -> its first segment, (P / width) * R + 1
  std::vector<FoldSeg> segs;

  // fold_segs_vec's plan for vectors of vec_lanes outputs (plan_fold_vec; 0: none): per row and
  // pair of output vectors, the segments covering some of their lanes, each one load offset (of
  // the pair's first vector; the second's is vec_lanes on) and the two vectors' lane masks.
  struct VecPart {
    int64_t off;
    uint64_t m0, m1;  // lane l of each vector takes the load's element l (LoadMaskBits reads 8 bytes)
  };
  int64_t vec_lanes = 0;
  std::vector<int64_t> vec_begin;  // (row, pair) -> its first part, rows * pairs + 1
  std::vector<VecPart> vec_parts;

  // off(n): the offset of term r of output p, n = p * R + r, or -1 for padding.
  template <class Off>
  void build(Off off) {
    const int64_t rows = P / width;
    begin.assign(static_cast<size_t>(rows * R + 1), 0);
    segs.clear();
    for (int64_t q = 0; q < rows; ++q)
      for (int64_t r = 0; r < R; ++r) {
        begin[q * R + r] = static_cast<int64_t>(segs.size());
        int64_t prev = -2;
        for (int64_t x = 0; x < width; ++x) {
          const int64_t o = off((q * width + x) * R + r);
          if (o < 0) { prev = -2; continue; }
          if (o == prev + 1) ++segs.back().len;
          else segs.push_back({x, 1, o});
          prev = o;
        }
      }
    begin.back() = static_cast<int64_t>(segs.size());
  }
};

// GCC turns the zeroing loop below into a memset call unless told not to; clang has no such
// attribute (it warns of an unknown one), so it gets none.
#if defined(__GNUC__) && !defined(__clang__)
#define MAROON_FOLD_NO_MEMSET __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define MAROON_FOLD_NO_MEMSET
#endif

// Folds P outputs into out from src (offsets are src's), in the hardware's rounding mode.
// (Zeroing each row with a loop, not memset: rows are a few dozen elements.)
template <class T>
MAROON_FOLD_NO_MEMSET void fold_segs(const FoldSegs& f, const T* src, T* out) {
  const int64_t rows = f.P / f.width;
  const FoldSeg* segs = f.segs.data();
  for (int64_t q = 0; q < rows; ++q) {
    T* acc = out + q * f.width;
    for (int64_t x = 0; x < f.width; ++x) acc[x] = T(0);
    for (int64_t r = 0; r < f.R; ++r)
      for (int64_t s = f.begin[q * f.R + r]; s < f.begin[q * f.R + r + 1]; ++s) {
        T* __restrict a = acc + segs[s].x0;
        const T* __restrict t = src + segs[s].base;
        for (int64_t l = 0, len = segs[s].len; l < len; ++l) a[l] += t[l];
      }
    for (int64_t x = 0; x < f.width; ++x)
      if (std::isnan(acc[x])) acc[x] = CanonicalNaN<T>();
  }
}

// fold_segs() of a float32 or float64 sum, src and out as that dtype's elements.
inline void fold_segs(DType d, const FoldSegs& f, const void* src, void* out) {
  if (d == DType::Float32) fold_segs(f, static_cast<const float*>(src), static_cast<float*>(out));
  else fold_segs(f, static_cast<const double*>(src), static_cast<double*>(out));
}

// fold_segs() with the running sums of a vector of outputs in a register (fold_segs_simd.cpp):
// the same bits. It reads up to kFoldSlackBytes before and after each segment, which src must
// hold (whatever bits: they are never added).
constexpr size_t kFoldSlackBytes = 256;
// Which way fold_segs_vec folded: through the plan made by plan_fold_vec, with each segment's
// lanes worked out as it goes, or (vectors wider than the slack allows) by fold_segs().
enum class FoldVecPath { Planned, Computed, Scalar };
FoldVecPath fold_segs_vec(DType d, const FoldSegs& f, const void* src, void* out);
// Lays out f's segments for fold_segs_vec on the current SIMD target: the lane masks and load
// offsets it would otherwise work out for every row of every unit (f.vec_lanes stays 0 where
// the target's vectors do not fit the plan). Call before folding from several threads.
void plan_fold_vec(DType d, FoldSegs* f);

}  // namespace maroon::cpu
