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

// Runs f() as the kernel of n and counts it; f returns whether it ran (a path that declined
// counts nothing).
template <class F>
bool counted_kernel(const Node& n, const char* path, F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  bool ran = f();
  if (ran) count_kernel(n, path, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return ran;
}

}  // namespace maroon
