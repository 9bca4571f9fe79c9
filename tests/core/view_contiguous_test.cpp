// ShapeTracker::is_contiguous compares a view's strides with contiguous_strides(shape) without
// building that vector (it runs for every leaf of every kernel). Checked here against the plain
// comparison over views from random chains of movement ops: contiguous ones, size-1 axes with
// zero and non-zero strides, permutations, expansions, offsets, masks and view stacks.
#include <gtest/gtest.h>

#include <random>

#include "core/view.h"
#include "maroon/tensor.h"  // shape_str

namespace maroon::test {
namespace {

bool contiguous_by_definition(const ShapeTracker& t) {
  if (t.views().size() != 1) return false;
  const View& v = t.views()[0];
  return !v.has_mask() && v.offset == 0 && v.strides == contiguous_strides(v.shape);
}

// One random movement op applied to t (arguments always valid for t's shape).
ShapeTracker move_once(const ShapeTracker& t, std::mt19937& rng) {
  const Shape& s = t.shape();
  auto pick = [&](int64_t n) { return static_cast<int64_t>(rng() % static_cast<uint32_t>(n)); };
  switch (pick(6)) {
    case 0: {  // reshape: insert or drop a size-1 axis, or flatten
      Shape to = s;
      if (pick(3) == 0) to = {numel(s)};
      else if (pick(2) == 0) to.insert(to.begin() + pick(static_cast<int64_t>(to.size()) + 1), 1);
      else if (auto it = std::find(to.begin(), to.end(), 1); it != to.end()) to.erase(it);
      return t.reshape(to);
    }
    case 1: {
      std::vector<int64_t> order(s.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
      std::shuffle(order.begin(), order.end(), rng);
      return t.permute(order);
    }
    case 2: {  // expand a size-1 axis
      Shape to = s;
      for (int64_t& d : to)
        if (d == 1 && pick(2)) d = 1 + pick(3);
      return t.expand(to);
    }
    case 3: {  // shrink: sometimes the whole range, sometimes an offset
      Pairs p;
      for (int64_t d : s) {
        int64_t b = d > 1 ? pick(2) : 0;
        p.push_back({b, d});
      }
      return t.shrink(p);
    }
    case 4: {
      Pairs p;
      for (size_t i = 0; i < s.size(); ++i) p.push_back({pick(2), pick(2)});
      return t.pad(p);
    }
    default: {
      std::vector<int64_t> axes;
      for (size_t i = 0; i < s.size(); ++i)
        if (pick(4) == 0) axes.push_back(static_cast<int64_t>(i));
      return t.flip(axes);
    }
  }
}

TEST(ViewContiguous, MatchesTheStrideComparison) {
  std::mt19937 rng(7);
  const Shape shapes[] = {{}, {1}, {5}, {1, 1}, {3, 1}, {1, 4}, {2, 3, 4}, {2, 1, 3, 1}, {0, 3}, {4, 0, 1}};
  int contiguous = 0, other = 0;
  for (const Shape& s : shapes) {
    ShapeTracker t = ShapeTracker::contiguous(s);
    ASSERT_TRUE(t.is_contiguous());
    for (int step = 0; step < 400; ++step) {
      t = step % 40 == 0 ? ShapeTracker::contiguous(s) : move_once(t, rng);
      const bool want = contiguous_by_definition(t);
      ASSERT_EQ(t.is_contiguous(), want) << "step " << step << " of shape " << shape_str(s);
      (want ? contiguous : other)++;
    }
  }
  // Both answers were exercised, beyond the fresh trackers.
  EXPECT_GT(contiguous, 100);
  EXPECT_GT(other, 100);
}

TEST(ViewContiguous, SizeOneAxesNeedZeroStrides) {
  // A size-1 axis with a non-zero stride is not canonical, so not contiguous (as before).
  ShapeTracker t = ShapeTracker::contiguous({3, 1, 2});
  EXPECT_TRUE(t.is_contiguous());
  ShapeTracker b = ShapeTracker::broadcast_scalar({3, 1, 2});
  EXPECT_FALSE(b.is_contiguous());
  EXPECT_TRUE(ShapeTracker::broadcast_scalar({1, 1}).is_contiguous());
}

}  // namespace
}  // namespace maroon::test
