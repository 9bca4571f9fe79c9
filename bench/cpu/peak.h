// The machine's own limit for separate vector multiplies and adds (what a deterministic,
// unfused matmul can reach), measured by a tight loop of independent chains.
#pragma once
#include <chrono>

namespace maroon::bench {

// GFLOP/s of mul+add pairs on one thread (2 flops per pair), float or double.
template <class T>
double peak_mul_add_gflops();
// The same chains as fused multiply-adds (2 flops each; on a target without FMA, Highway's
// MulAdd is a multiply and an add, so the two agree).
template <class T>
double peak_fma_gflops();

}  // namespace maroon::bench
