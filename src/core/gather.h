// GATHER's index rule (docs/spec.md §15), one definition for src/ref and src/cpu.
#pragma once
#include <cstdint>

#include "maroon/dtype.h"

namespace maroon {

// The position that an index element (its bits, zero-extended, in integer dtype `d`) selects
// along an axis of `size`, or -1 where it selects nothing and the result is zero bits: any value
// outside [0, size), negative ones included (the Tensor API normalises those first).
inline int64_t gather_position(uint64_t bits, DType d, int64_t size) {
  const unsigned shift = 64 - 8 * static_cast<unsigned>(itemsize(d));
  if (is_unsigned(d)) return bits < static_cast<uint64_t>(size) ? static_cast<int64_t>(bits) : -1;
  const int64_t v = static_cast<int64_t>(bits << shift) >> shift;  // sign-extended
  return v >= 0 && v < size ? v : -1;
}

}  // namespace maroon
