// exp2-kernel-bench: the CPU backend's binary32 SIMD exp2 (src/cpu/exp2_lanes-inl.h) alone, in
// ns per element: the tile kernel (fast_math, round to nearest) and the chain kernel's EXP2 step
// (fastops' Exp2Held, what softmax and GELU run), over n floats drawn uniformly from [lo, hi)
// (default [-30, 4]: softmax's (v - max) * log2(e) and GELU's exp arguments), kTile at a time
// as the backend calls them. Prints the median and the best of `reps` passes per target and a
// digest of the results (must not change with the kernel). Times are the thread's CPU time (the
// host is shared: wall time counts the other processes' turns too).
//
//   exp2-kernel-bench [n] [reps] [lo] [hi] [target]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <ctime>
#include <vector>

#include "cpu/fast_math.h"
#include "cpu/fastops.h"
#include "cpu/kernel.h"
#include "maroon/backend.h"

using namespace maroon;

static double cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
}

int main(int argc, char** argv) {
  const size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : (size_t{1} << 20);
  const int reps = argc > 2 ? std::max(1, std::atoi(argv[2])) : 21;
  const double lo = argc > 3 ? std::atof(argv[3]) : -30.0, hi = argc > 4 ? std::atof(argv[4]) : 4.0;
  const std::string only = argc > 5 ? argv[5] : "";
  std::vector<float> in(n + cpu::kTilePad);
  uint64_t s = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    in[i] = static_cast<float>(lo + (hi - lo) * double(s >> 11) * 0x1p-53);
  }
  std::vector<uint32_t> out(n + cpu::kTilePad);
  const cpu::MathFn fn = cpu::fast_math(Op::EXP2, DType::Float32, DType::Float32);
  const cpu::ChainFn chain = cpu::fast_chain(DType::Float32);
  const cpu::ChainStep step{cpu::ChainOp::Exp2, nullptr};
  for (const std::string& t : available_simd_targets()) {
    if (!only.empty() && t != only) continue;
    set_simd_target(t);
    for (int path = 0; path < 2; ++path) {
      std::vector<double> ns;
      for (int r = 0; r < reps; ++r) {
        const double t0 = cpu_ns();
        for (size_t i = 0; i < n; i += cpu::kTile) {
          const int len = static_cast<int>(std::min<size_t>(cpu::kTile, n - i));
          if (path == 0) fn(in.data() + i, out.data() + i, len, Round::NearestEven);
          else chain(in.data() + i, &step, 1, out.data() + i, len);
        }
        ns.push_back((cpu_ns() - t0) / double(n));
      }
      uint64_t h = 1469598103934665603ull;
      for (size_t i = 0; i < n; ++i) h = (h ^ out[i]) * 1099511628211ull;
      std::sort(ns.begin(), ns.end());
      std::printf("%-8s %-5s median %.3f best %.3f ns/element digest %016llx\n", t.c_str(), path ? "chain" : "tile",
                  ns[ns.size() / 2], ns[0], static_cast<unsigned long long>(h));
    }
  }
  return 0;
}
