// The image planes of a padded copy (pad_copy.cpp), compiled per SIMD target (pad_copy_simd.cpp).
#pragma once
#include <cstdint>

namespace maroon::cpu {

// An output plane of n1 rows of n2 elements: rows [lo1, hi1) hold source row i (at
// s + i * row_stride) in columns [lo2, hi2), the rest +0; s points at the plane's element (0, 0)
// as if it existed (the caller's base).
struct PadPlane {
  int64_t n1, lo1, hi1, n2, lo2, hi2, row_stride;
};

// Writes plane p at d from s: each element copied, NaNs made canonical, the borders +0.
void pad_plane(const PadPlane& p, const uint32_t* s, uint32_t* d);
void pad_plane(const PadPlane& p, const uint64_t* s, uint64_t* d);

}  // namespace maroon::cpu
