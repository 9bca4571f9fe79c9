// The engine side of maroon/counters.h: the executors report each kernel here; buffers report
// their bytes.
#pragma once
#include <chrono>
#include <cstdint>

#include "core/graph.h"
#include "maroon/counters.h"

namespace maroon {

// Adds one executed kernel rooted at `n` (its fused sources are the unrealized nodes below it),
// which ran `seconds` on `path` ("elementwise", "matmul", ...); prints its line at MAROON_DEBUG >= 2.
void count_kernel(const Node& n, const char* path, double seconds);
// Bytes of live buffers (buffer.cpp): + on allocation, - on release.
void count_buffer_bytes(int64_t delta);

// Whether kernels are timed: once the counters have been read or reset in this process
// (counters(), reset_counters(): someone looks at time_sum_s), and while MAROON_DEBUG >= 2 (its
// lines print each kernel's time). Otherwise a kernel costs no clock read: on a KVM guest
// (kvm-clock) steady_clock::now() takes 45-75 ns, and a small op tries several paths, each timed,
// ~2-3% of `((a+b)*a).sum()` on 16 floats from Python, for a number nobody reads.
bool kernel_timing();

// Runs f() as the kernel of n and counts it; f returns whether it ran (a path that declined
// counts nothing). Its time is measured only when kernel_timing() (else it counts as 0 s).
template <class F>
bool counted_kernel(const Node& n, const char* path, F&& f) {
  if (!kernel_timing()) {
    bool ran = f();
    if (ran) count_kernel(n, path, 0);
    return ran;
  }
  auto t0 = std::chrono::steady_clock::now();
  bool ran = f();
  if (ran) count_kernel(n, path, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return ran;
}

}  // namespace maroon
