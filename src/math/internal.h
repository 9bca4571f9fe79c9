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

}  // namespace maroon::math::detail
