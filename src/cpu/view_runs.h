// A view stack's elements over a shape as runs of one length at one step (attention's heads
// read through a reshape of a slice: rows of 16 adjacent elements), found by walking the views
// once and kept by the stack, of which they are a pure function: the dense copy of a matmul
// operand (operand_copy.cpp) and the elementwise kernels' leaves (interp.cpp) copy the runs on a
// model's later runs instead of walking the views again. Copies only: the same elements.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "core/graph.h"

namespace maroon::cpu {

// Positions [r * row, (r + 1) * row) of the shape are elements starts[r] + i * step.
struct ViewRuns {
  int64_t row = 0, step = 0;
  std::vector<int64_t> starts;
};

// Whether the row idx[0, n) is runs of r->row elements, each start + i * step with no padding,
// the step the same as the earlier rows' (the first row sets the run length and step); appends
// the runs' starts.
bool extend_view_runs(const int64_t* idx, int64_t n, bool first, ViewRuns* r);

// Every input the runs depend on: the shape and each view's shape, strides, offset and mask,
// each list preceded by its length so that no two different stacks give the same words.
void view_runs_key(const ShapeTracker& view, const Shape& shape, std::vector<int64_t>* key);

// The runs of `view` (whose shape is `shape`) in row-major order, kept between calls; null when
// its rows are not such runs (padding, irregular steps) or there are too many to keep.
std::shared_ptr<const ViewRuns> elementwise_view_runs(const ShapeTracker& view, const Shape& shape);

// dst[0, n) = the elements at positions [p0, p0 + n) of runs r in `buffer`.
void copy_view_runs(const Buffer& buffer, const ViewRuns& r, int64_t p0, int n, void* dst);

// For tests: how many elementwise kernels found a leaf's runs kept since the process started.
int64_t elementwise_view_runs_hits();

}  // namespace maroon::cpu
