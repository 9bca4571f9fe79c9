// An elementwise kernel that is a padded view times 1 (ONNX Conv's zero-padded input,
// `x.pad(pads) * 1`), written as rows and zero borders instead of through the tile interpreter.
#pragma once
#include <cstdint>

#include "cpu/kernel.h"

namespace maroon::cpu {

// Computes `out` (whose program is `prog`) and returns true when prog is one float32/float64
// MUL of a leaf read through one masked view and a broadcast 1; false (nothing done) otherwise.
bool try_pad_copy(Node& out, const Program& prog);
// Writes the elements of one view with a mask (every axis masked, float32 or float64: itemsize
// sz of 4 or 8) row-major into dst: +0 outside the mask, the element inside with each NaN made
// the canonical one (what a pad times 1 gives). Its planes in parallel tasks of fixed size.
void write_padded(const View& v, const uint8_t* src, size_t sz, uint8_t* dst);
// How many kernels try_pad_copy has computed (for tests: that a case took the path).
int64_t pad_copies();
// How many of those wrote image planes (three or more axes, the last contiguous) a row at a time.
int64_t pad_plane_copies();

}  // namespace maroon::cpu
