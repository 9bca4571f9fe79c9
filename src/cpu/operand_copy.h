// The dense copy of a matmul operand that one strided view cannot express (conv2d's padded
// windows, attention's heads read through a reshape of a slice): copied out row by row along the
// last axis. Byte copies only, so the bits are the view's elements whichever way they are found.
#pragma once
#include <cstdint>

#include "core/graph.h"

namespace maroon::cpu {

// Writes the elements of `view` over `dense_shape` (view.shape() with the axes the operand does
// not move along set to 1), row-major, into dst; padding reads as zero bits. A view stack whose
// rows are each an arithmetic run of elements with one step and no padding (the usual reshape of
// a slice or a transpose) is remembered by its views and dense shape: a later copy of the same
// view stack (a model's next run) copies its runs directly instead of walking the views again.
void copy_dense(const Buffer& buffer, const ShapeTracker& view, const Shape& dense_shape, uint8_t* dst);

// For tests: how many copies found their runs remembered since the process started.
int64_t dense_copy_hits();
// For tests: how many copies of kept runs were cut into several tasks (kCopyTaskElements each).
int64_t dense_copy_splits();

}  // namespace maroon::cpu
