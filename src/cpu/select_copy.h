// The kernel of a stack (api/concat.cpp's stack_all, and cat of equal sizes through it): a chain
// of WHEREs that puts each source in its slot along the first axis, written as one copy of each
// source instead of evaluating every WHERE at every element.
#pragma once
#include <cstdint>

#include "cpu/kernel.h"

namespace maroon::cpu {

// Computes `out` (whose program is `prog`) and returns true when prog is such a chain:
// WHERE(m[n-1], s[n-1], ... WHERE(m[1], s[1], s[0])), out of n slots along axis 0, where s[i] is
// a leaf of out's dtype and shape read through one view that has data exactly at slot i of
// axis 0, and m[i] a bool leaf true exactly there (a true constant padded so). Then slot i of
// out is s[i]'s elements there, bits copied (a WHERE returns its operand's bits; docs/spec.md),
// every other slot's condition being false. False (nothing done) otherwise.
bool try_select_copy(Node& out, const Program& prog);
// How many kernels try_select_copy has computed (for tests: that a case took the path).
int64_t select_copies();

}  // namespace maroon::cpu
