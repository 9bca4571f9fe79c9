// Views: movement ops never copy. A ShapeTracker maps an index of its shape to an element of the
// underlying buffer (or to padding) through a stack of strided, masked views, as tinygrad's
// ShapeTracker does. Most movement ops fold into the top view; a reshape that strides cannot
// express pushes a new view that reads the one below as a row-major array.
#pragma once
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace maroon {

using Shape = std::vector<int64_t>;
using Pairs = std::vector<std::pair<int64_t, int64_t>>;

// The product of s, 0 when any dimension is 0, or ShapeError when it does not fit in 64 bits.
// Inline: a 64^2 product's call asks ~13 times (each was a call, a search for a zero and a
// second pass).
[[noreturn]] void numel_overflow(const Shape& s);
inline int64_t numel(const Shape& s) {
  int64_t n = 1;
  bool wrapped = false;  // an overflow counts only when no later dimension is 0
  for (int64_t d : s) {
    if (d == 0) return 0;
    wrapped |= __builtin_mul_overflow(n, d, &n);
  }
  if (wrapped) numel_overflow(s);
  return n;
}
Shape contiguous_strides(const Shape& s);

struct View {
  Shape shape;
  std::vector<int64_t> strides;
  int64_t offset = 0;
  Pairs mask;  // empty: every index valid; else valid range [lo, hi) per axis

  static View contiguous(const Shape& s);
  bool has_mask() const { return !mask.empty(); }
  bool operator==(const View&) const = default;
};

class ShapeTracker {
 public:
  static ShapeTracker contiguous(const Shape& s);
  // Every index maps to element 0 (a broadcast scalar).
  static ShapeTracker broadcast_scalar(const Shape& s);
  // Makes this contiguous(s), keeping it as it is when it already is that: a replayed step's
  // nodes keep their views from the last replay, and building a new one was a few heap blocks
  // per kernel (core/jit.cpp).
  void set_contiguous(const Shape& s);
  bool operator==(const ShapeTracker&) const = default;

  const Shape& shape() const { return views_.back().shape; }
  const std::vector<View>& views() const { return views_; }
  // True when index i maps to buffer element i for every i.
  bool is_contiguous() const;

  // Arguments are assumed validated by the caller (the Tensor layer throws on bad input).
  ShapeTracker reshape(const Shape& s) const;
  ShapeTracker expand(const Shape& s) const;   // same rank; size-1 axes grow
  ShapeTracker permute(const std::vector<int64_t>& order) const;
  ShapeTracker pad(const Pairs& before_after) const;
  ShapeTracker shrink(const Pairs& begin_end) const;
  ShapeTracker flip(const std::vector<int64_t>& axes) const;

  // This stack with its bottom `below` views (the first reads the buffer) replaced by `base`,
  // which must have the shape of the last of them, merged again where the views now allow: a
  // padded stack read over a copy of its padded lower views (cpu/matmul_plan.cpp).
  ShapeTracker rebased(View base, size_t below = 1) const;
  // The stack of the bottom n views (1 <= n <= views().size()): what the view above them reads.
  ShapeTracker lower(size_t n) const;

  // The buffer element that index `idx` (one entry per axis of shape()) reads, or -1 for padding.
  int64_t index(const int64_t* idx) const;
  // The leading axes that every view passes through unchanged (batch axes, as in pool's
  // gradient stacks over (batch, channel)): then index(c) = sum over d < k of c[d] *
  // batch_strides[d], plus inner->index(c[k..]), or -1 where that is -1. Returns k (0: none).
  int batch_axes(std::vector<int64_t>* batch_strides, ShapeTracker* inner) const;
  // index() of n consecutive positions along the last axis, starting at `idx` (whose last entry
  // plus n must not pass the axis' end): out[i] for idx + (0, ..., 0, i). Walks the views with
  // additions and rare carries instead of a division per axis and view for every element.
  void row_indices(const int64_t* idx, int64_t n, int64_t* out) const;

 private:
  // Replaces the top two views by one while merge_views can prove the pair is a single view.
  void merge_top();
  std::vector<View> views_;  // views_[0] reads the buffer; views_.back() is the visible shape
};

// numpy's broadcasting, shared by the primitives and indexing: the shape all of `shapes`
// stretch to (right-aligned; size-1 axes grow), or nullopt where two sizes differ and neither
// is 1 (each caller names its own error).
std::optional<Shape> broadcast_shapes(const std::vector<const Shape*>& shapes);

}  // namespace maroon
