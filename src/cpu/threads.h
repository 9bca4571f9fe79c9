// A small pool. Work is always cut into the same tasks whatever the thread count, and each task
// writes its own outputs, so the thread count can never change a result.
#pragma once
#include <cstdint>
#include <functional>

#include "maroon/round.h"

namespace maroon::cpu {

// Runs fn(task) for task in [0, n) on up to num_threads() threads (the caller included). Every
// worker runs with IEEE defaults (no flush-to-zero) and rounding mode `r`.
void parallel_for(int64_t n, const std::function<void(int64_t)>& fn, Round r);

// Sets the hardware rounding mode of the calling thread.
void set_hw_round(Round r);

}  // namespace maroon::cpu
