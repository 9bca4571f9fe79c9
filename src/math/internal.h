// Internals of src/math exposed to tests, tools/math-check and bench/math. Not engine API.
#pragma once
#include <cstdint>

namespace maroon::math::detail {

// Per-thread counters of how results were obtained (diagnostics only; never affect results).
struct Stats {
  uint64_t fast = 0;      // fast double path rounded successfully
  uint64_t accurate = 0;  // needed the double-double path
  uint64_t special = 0;   // special value, exact case or tiny-argument shortcut
  uint64_t unresolved = 0;  // double-double path could not decide (result = its rounding; see docs)
};
Stats& stats();

// The binary32 exp2 fast path's data (table 2^(j/128) and Taylor coefficients ln2^i/i!, each
// rounded to double). src/cpu's SIMD exp2 repeats the fast path's double operations one for one
// on these very numbers, so its lanes hold the same doubles as the scalar code (docs/math.md).
struct Exp2FastData {
  double table[128];  // 2^(j/128)
  double c[6];        // c[i] = ln2^i / i!, c[0] unused
};
const Exp2FastData& exp2_fast_data();

}  // namespace maroon::math::detail
