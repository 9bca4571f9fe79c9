// The binary32 exp2 kernels alone, one thread, per SIMD target: nanoseconds per element of the
// tile kernel (src/cpu/fast_math.cpp: Exp2Span through memory), of the accumulator machine's
// EXP2 step (src/cpu/acc_kernel.cpp: a load and the step) and of a row softmax (rows of 64, the
// ONNX transformer's attention: src/cpu/row_softmax.cpp through the public API). Inputs like the
// transformer's: "gelu" is GELU's erf argument -z^2/2 * log2(e) (z roughly normal), "softmax"
// uniform in [-24, 0]. The best of `reps` passes over n elements (L1/L2-resident).
// Usage: maroon-bench-exp2 [n] [reps]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "best_ms.h"
#include "cpu/fast_math.h"
#include "cpu/fastops.h"
#include "cpu/kernel.h"
#include "maroon/backend.h"
#include "maroon/maroon.h"

using namespace maroon;

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 16384;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 200;
  if (n <= 0 || n % cpu::kTile || reps <= 0) {
    std::fprintf(stderr, "usage: maroon-bench-exp2 [n, a multiple of 256] [reps > 0]\n");
    return 2;
  }
  set_num_threads(1);
  uint64_t s = 12345;
  auto unit = [&] {  // [0, 1)
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(s >> 11) * 0x1p-53;
  };
  std::vector<float> gelu(n + cpu::kTilePad), soft(n + cpu::kTilePad);
  for (int i = 0; i < n; ++i) {
    const double z = (unit() + unit() + unit() - 1.5) * 2.0;  // roughly normal, |z| < 3
    gelu[i] = static_cast<float>(-z * z / 2 * 1.4426950408889634);
    soft[i] = static_cast<float>(-24.0 * unit());
  }
  std::vector<uint32_t> out(n + cpu::kTilePad);
  const cpu::MathFn tile = cpu::fast_math(Op::EXP2, DType::Float32, DType::Float32);
  const cpu::AccFn acc = cpu::fast_acc(DType::Float32);
  const cpu::AccStep steps[] = {{cpu::AccOp::LoadV, 0, 0}, {cpu::AccOp::Exp2, 0, -1}};
  Tensor::manual_seed(0);
  Tensor scores = (Tensor::rand({n / 64 * 4, 64}) * 16.0).realize();
  for (const std::string& t : available_simd_targets()) {
    set_simd_target(t);
    for (int which = 0; which < 2; ++which) {
      const float* in = which ? soft.data() : gelu.data();
      const double tile_ms = best_ms(reps, [&] {
        for (int i = 0; i < n; i += cpu::kTile) tile(in + i, out.data() + i, cpu::kTile, Round::NearestEven);
      });
      const double acc_ms = best_ms(reps, [&] {
        for (int i = 0; i < n; i += cpu::kTile) {
          const void* leaf = in + i;
          acc(steps, 2, &leaf, nullptr, out.data() + i, cpu::kTile);
        }
      });
      std::printf("%-7s %-7s tile %.3f ns/elt, acc step %.3f ns/elt\n", t.c_str(), which ? "softmax" : "gelu",
                  tile_ms * 1e6 / n, acc_ms * 1e6 / n);
    }
    const double sm_ms = best_ms(reps / 4 + 1, [&] { scores.softmax(-1).realize(); });
    std::printf("%-7s softmax rows of 64: %.3f ns/elt (%lld elements)\n", t.c_str(), sm_ms * 1e6 / (n * 4.0),
                static_cast<long long>(n) * 4);
  }
  return 0;
}
