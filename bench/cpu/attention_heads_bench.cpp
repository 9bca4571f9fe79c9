// The ONNX transformer's per-head products alone (bench/onnx's transformer: batch 32 x 4 heads
// of 16, 64 tokens): scores = q @ k^T (128 x 64x16 @ 16x64) and out = p @ v (128 x 64x64 @
// 64x16), each on contiguous per-head operands as the ONNX import leaves them, fused
// (REDUCE_MULACC) or not. Prints the median ms of each over R reps of `inner` calls, and the
// process CPU ms.
// Usage: maroon-bench-attention-heads [threads] [reps] [fused 0/1] [heads, 128]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <vector>

#include "maroon/backend.h"
#include "maroon/maroon.h"

using namespace maroon;

namespace {
Tensor random(const Shape& s, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  size_t n = 1;
  for (int64_t e : s) n *= static_cast<size_t>(e);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return Tensor::from_vector(v, s).realize();
}
double cpu_ms() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return 1e3 * static_cast<double>(ts.tv_sec) + 1e-6 * static_cast<double>(ts.tv_nsec);
}
}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1, reps = argc > 2 ? std::atoi(argv[2]) : 20;
  const bool fused = argc > 3 ? std::atoi(argv[3]) != 0 : true;
  const int64_t heads = argc > 4 ? std::atoll(argv[4]) : 128;
  set_num_threads(threads);
  const Tensor q = random({heads, 64, 16}, 1), k = random({heads, 64, 16}, 2), v = random({heads, 64, 16}, 3);
  const Tensor p = random({heads, 64, 64}, 4);
  constexpr int inner = 10;
  auto time = [&](auto f) {
    std::vector<double> ms;
    f();
    for (int r = 0; r < reps; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < inner; ++i) f();
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / inner);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
  };
  const double c0 = cpu_ms();
  const double qk = time([&] { q.matmul(k.permute({0, 2, 1}), std::nullopt, fused).realize(); });
  const double pv = time([&] { p.matmul(v, std::nullopt, fused).realize(); });
  std::printf("{\"qk_ms\": %.4f, \"pv_ms\": %.4f, \"cpu_ms\": %.1f}\n", qk, pv, cpu_ms() - c0);
}
