// fold_segs() (fold_segs.h) with each output vector's running sums in a register: conv2d's input
// gradient folds 25 terms per pixel from its product tile, each term a segment of consecutive
// outputs. The scalar fold added each segment into the output row in memory, so every term
// reloaded the row just stored at another alignment (a store-forwarding stall per term). Here a
// vector of outputs takes term r from every segment of (row, r) that covers some of its lanes:
// the segment's tile elements loaded at the lanes' places, the other lanes +0. Adding +0 leaves a
// running sum from +0 as it is (as skipping padding does: fold_segs.h), so each lane still adds
// its real terms in order, from +0, in the caller's rounding mode; NaNs canonical at the end. The
// loads reach up to a vector before and after a segment: the tile has kFoldSlackBytes of slack
// on both sides.
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

template <class T>
bool FoldVec(const FoldSegs& f, const T* src, T* out) {
  const hn::ScalableTag<T> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  if (L * static_cast<int64_t>(sizeof(T)) > static_cast<int64_t>(kFoldSlackBytes)) return false;
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
  return true;
}

bool FoldVecF32(const FoldSegs& f, const void* src, void* out) {
  return FoldVec(f, static_cast<const float*>(src), static_cast<float*>(out));
}
bool FoldVecF64(const FoldSegs& f, const void* src, void* out) {
  return FoldVec(f, static_cast<const double*>(src), static_cast<double*>(out));
}

}  // namespace maroon::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace maroon::cpu {

HWY_EXPORT(FoldVecF32);
HWY_EXPORT(FoldVecF64);

void fold_segs_vec(DType d, const FoldSegs& f, const void* src, void* out) {
  const bool done = d == DType::Float32 ? HWY_DYNAMIC_DISPATCH(FoldVecF32)(f, src, out)
                                        : HWY_DYNAMIC_DISPATCH(FoldVecF64)(f, src, out);
  if (!done) fold_segs(d, f, src, out);
}

}  // namespace maroon::cpu
#endif  // HWY_ONCE
