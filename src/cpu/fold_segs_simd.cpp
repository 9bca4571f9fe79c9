// fold_segs() (fold_segs.h) with each output vector's running sums in a register: conv2d's input
// gradient folds 25 terms per pixel from its product tile, each term a segment of consecutive
// outputs. The scalar fold added each segment into the output row in memory, so every term
// reloaded the row just stored at another alignment (a store-forwarding stall per term). Here a
// vector of outputs takes term r from every segment of (row, r) that covers some of its lanes:
// the segment's tile elements loaded at the lanes' places, the other lanes +0. Adding +0 leaves a
// running sum from +0 as it is (as skipping padding does: fold_segs.h), so each lane still adds
// its real terms in order, from +0, in the caller's rounding mode; NaNs canonical at the end. The
// loads reach up to a vector before and after a segment: the tile has kFoldSlackBytes of slack
// on both sides. plan_fold_vec lays the masks and load offsets out once per kernel, so that the
// fold of each of a kernel's thousands of units is a masked load and an add per segment and
// vector (the masks worked out per unit cost more than the adds: the scalar code was most of
// the fold's samples).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/fold_segs_simd.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cpu/fold_segs.h"
#include "cpu/lane_ops-inl.h"  // Canonical

#include <algorithm>

HWY_BEFORE_NAMESPACE();
namespace maroon::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// FoldVec through f's plan: each part adds its lanes' terms to a pair of vectors, the other
// lanes +0 (the mask clears them), in the order the segments are in.
template <class T, class D, class Store>
void FoldPlanned(D d, const FoldSegs& f, const T* src, T* out, const Store& store) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d)), W = f.width, rows = f.P / W;
  const int64_t pairs = (W + 2 * L - 1) / (2 * L);
  const FoldSegs::VecPart* parts = f.vec_parts.data();
  const int64_t* pb = f.vec_begin.data();
  for (int64_t q = 0; q < rows; ++q)
    for (int64_t p = 0, v0 = 0; p < pairs; ++p, v0 += 2 * L) {
      auto a0 = hn::Zero(d), a1 = hn::Zero(d);
      for (int64_t i = pb[q * pairs + p], e = pb[q * pairs + p + 1]; i < e; ++i) {
        const FoldSegs::VecPart& g = parts[i];
        const auto m0 = hn::LoadMaskBits(d, reinterpret_cast<const uint8_t*>(&g.m0));
        const auto m1 = hn::LoadMaskBits(d, reinterpret_cast<const uint8_t*>(&g.m1));
        // (Highway's MaskedLoad wants an aligned pointer: a plain unaligned load, then the mask.)
        a0 = hn::Add(a0, hn::IfThenElseZero(m0, hn::LoadU(d, src + g.off)));
        a1 = hn::Add(a1, hn::IfThenElseZero(m1, hn::LoadU(d, src + g.off + L)));
      }
      store(a0, out + q * W + v0, W - v0);
      if (v0 + L < W) store(a1, out + q * W + v0 + L, W - v0 - L);
    }
}

template <class T>
FoldVecPath FoldVec(const FoldSegs& f, const T* src, T* out) {
  const hn::ScalableTag<T> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  if (L * static_cast<int64_t>(sizeof(T)) > static_cast<int64_t>(kFoldSlackBytes)) return FoldVecPath::Scalar;
  const int64_t rows = f.P / f.width, W = f.width;
  const FoldSeg* segs = f.segs.data();
  // Segment g's terms at the lanes of the vector of outputs v0 .. v0 + L - 1, +0 elsewhere.
  const auto part = [&](const FoldSeg& g, int64_t v0) {
    const int64_t lo = std::max(g.x0, v0), hi = std::min(g.x0 + g.len, v0 + L);
    if (lo >= hi) return hn::Zero(d);
    const auto m = hn::AndNot(hn::FirstN(d, static_cast<size_t>(lo - v0)), hn::FirstN(d, static_cast<size_t>(hi - v0)));
    return hn::IfThenElseZero(m, hn::LoadU(d, src + g.base + (v0 - g.x0)));
  };
  const auto store = [&](decltype(hn::Zero(d)) acc, T* o, int64_t n) {
    if (n >= L) hn::StoreU(Canonical(d, acc), d, o);
    else hn::BlendedStore(Canonical(d, acc), hn::FirstN(d, static_cast<size_t>(n)), d, o);
  };
  if (f.vec_lanes == L) {
    FoldPlanned(d, f, src, out, store);
    return FoldVecPath::Planned;
  }
  for (int64_t q = 0; q < rows; ++q) {
    const int64_t* bq = f.begin.data() + q * f.R;
    // Two vectors of outputs at a time: two independent chains of adds, one pass over the terms.
    for (int64_t v0 = 0; v0 < W; v0 += 2 * L) {
      auto a0 = hn::Zero(d), a1 = hn::Zero(d);
      for (int64_t r = 0; r < f.R; ++r)
        for (int64_t s = bq[r]; s < bq[r + 1]; ++s) {
          a0 = hn::Add(a0, part(segs[s], v0));
          a1 = hn::Add(a1, part(segs[s], v0 + L));
        }
      store(a0, out + q * W + v0, W - v0);
      if (v0 + L < W) store(a1, out + q * W + v0 + L, W - v0 - L);
    }
  }
  return FoldVecPath::Computed;
}

FoldVecPath FoldVecF32(const FoldSegs& f, const void* src, void* out) {
  return FoldVec(f, static_cast<const float*>(src), static_cast<float*>(out));
}
FoldVecPath FoldVecF64(const FoldSegs& f, const void* src, void* out) {
  return FoldVec(f, static_cast<const double*>(src), static_cast<double*>(out));
}
int64_t FoldLanesF32() { return static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>())); }
int64_t FoldLanesF64() { return static_cast<int64_t>(hn::Lanes(hn::ScalableTag<double>())); }

}  // namespace maroon::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace maroon::cpu {

HWY_EXPORT(FoldVecF32);
HWY_EXPORT(FoldVecF64);
HWY_EXPORT(FoldLanesF32);
HWY_EXPORT(FoldLanesF64);

FoldVecPath fold_segs_vec(DType d, const FoldSegs& f, const void* src, void* out) {
  const FoldVecPath path = d == DType::Float32 ? HWY_DYNAMIC_DISPATCH(FoldVecF32)(f, src, out)
                                               : HWY_DYNAMIC_DISPATCH(FoldVecF64)(f, src, out);
  if (path == FoldVecPath::Scalar) fold_segs(d, f, src, out);
  return path;
}

namespace {

// The lanes of the vector of outputs v .. v + L - 1 that segment g covers, as bits from lane 0.
uint64_t lane_bits(const FoldSeg& g, int64_t v, int64_t L) {
  const int64_t lo = std::max(g.x0, v) - v, hi = std::min(g.x0 + g.len, v + L) - v;
  if (lo >= hi) return 0;
  return ((uint64_t{1} << hi) - 1) & ~((uint64_t{1} << lo) - 1);  // hi <= L <= 32
}

}  // namespace

void plan_fold_vec(DType d, FoldSegs* f) {
  const int64_t L = d == DType::Float32 ? HWY_DYNAMIC_DISPATCH(FoldLanesF32)() : HWY_DYNAMIC_DISPATCH(FoldLanesF64)();
  f->vec_lanes = 0;
  f->vec_begin.clear();
  f->vec_parts.clear();
  // A part's loads reach up to two vectors before or after its segment (a segment that covers
  // only the pair's second vector, or only its first), which the slack must hold.
  if (L < 1 || L > 32 || 2 * L * static_cast<int64_t>(itemsize(d)) > static_cast<int64_t>(kFoldSlackBytes)) return;
  const int64_t W = f->width, rows = f->P / W, pairs = (W + 2 * L - 1) / (2 * L);
  f->vec_begin.reserve(static_cast<size_t>(rows * pairs + 1));
  for (int64_t q = 0; q < rows; ++q)
    for (int64_t p = 0, v0 = 0; p < pairs; ++p, v0 += 2 * L) {
      f->vec_begin.push_back(static_cast<int64_t>(f->vec_parts.size()));
      for (int64_t s = f->begin[q * f->R], e = f->begin[(q + 1) * f->R]; s < e; ++s) {
        const FoldSeg& g = f->segs[static_cast<size_t>(s)];
        const uint64_t m0 = lane_bits(g, v0, L), m1 = lane_bits(g, v0 + L, L);
        if (m0 | m1) f->vec_parts.push_back({g.base + v0 - g.x0, m0, m1});
      }
    }
  f->vec_begin.push_back(static_cast<int64_t>(f->vec_parts.size()));
  f->vec_lanes = L;
}

}  // namespace maroon::cpu
#endif  // HWY_ONCE
