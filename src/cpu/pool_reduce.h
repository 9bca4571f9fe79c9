// The pools' reductions: a fold over a few trailing axes of one strided view (pool_reduce.cpp).
#pragma once
#include "core/graph.h"

namespace maroon::cpu {

// Realizes REDUCE node `out` when its source is a realized buffer read through one strided view,
// reduced over its trailing axes (at most 64 positions), with a SIMD fold for the op and dtype;
// false otherwise, and then nothing was computed.
bool try_window_reduce(Node& out);
// How many reductions try_window_reduce has computed in this process (the harness checks that
// its cases take that path).
int64_t window_reduce_runs();
// How many of them took window_gather.h's kernels (counted once per reduction: a count per call
// was an atomic add per run of outputs, shared by the threads).
int64_t window_gather_runs();
// How many of those took the 2 x 2 stride-2 kernel (window_gather.h's Pool2x2RunsFn).
int64_t pool2x2_reductions();

}  // namespace maroon::cpu
