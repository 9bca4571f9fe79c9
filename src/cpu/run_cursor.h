// A leaf constant over runs of positions (a per-channel mean or bias broadcast over a batch's
// planes: its strides are 0 on the axes from `from` on, whose product is r), and a cursor over
// those runs that a kernel's task steps through in order (interp.cpp's tile loop, acc_runs.cpp).
#pragma once
#include <cstdint>
#include <vector>

#include "cpu/kernel.h"

namespace maroon::cpu {

struct LeafRuns {
  int64_t r = 0;  // 0: not such a leaf (or runs too short to be worth it)
  size_t from = 0;
};

// The run a task's position is in, and that run's element, stepped from one run to the next: a
// task's positions are consecutive, so after the first (found by division) a run is reached by
// carrying through the outer coordinates. Found by division for every tile and leaf
// (flat_indices, 4 divisions), batchnorm's output kernel with five per-channel leaves over
// (512,32,20,20) spent ~1.5 cycles an element there.
struct RunCursor {
  int64_t end = -1;        // one past the current run's last position (-1: not placed yet)
  int64_t at = 0;          // the current run's element
  std::vector<int64_t> c;  // its outer coordinates (the axes before `from`)
};

inline void place_cursor(RunCursor& rc, const LeafMap& m, const Shape& shape, const LeafRuns& lr, int64_t p) {
  int64_t j = p / lr.r;
  rc.end = (j + 1) * lr.r;
  rc.at = m.offset;
  rc.c.assign(lr.from, 0);
  for (size_t d = lr.from; d-- > 0;) {
    rc.c[d] = j % shape[d];
    j /= shape[d];
    rc.at += rc.c[d] * m.strides[d];
  }
}

inline void next_run(RunCursor& rc, const LeafMap& m, const Shape& shape, const LeafRuns& lr) {
  rc.end += lr.r;
  for (size_t d = lr.from; d-- > 0;) {  // carry through the outer axes
    rc.at += m.strides[d];
    if (++rc.c[d] < shape[d]) return;
    rc.at -= m.strides[d] * shape[d];
    rc.c[d] = 0;
  }
}

// Moves the cursor to the run holding p (forward from where it is; placed afresh when p lies
// before it, far past it, or it is not placed).
inline void seek_run(RunCursor& rc, const LeafMap& m, const Shape& shape, const LeafRuns& lr, int64_t p) {
  if (rc.end < 0 || p < rc.end - lr.r || p >= rc.end + 4 * lr.r) return place_cursor(rc, m, shape, lr, p);
  while (p >= rc.end) next_run(rc, m, shape, lr);
}

}  // namespace maroon::cpu
