// x @ w.T, every linear layer's forward product: B's columns lie a row of w apart and each runs
// along k, so its panels are packed as a transpose (src/cpu/gemm_pack.h, pack_b_transposed).
// Against the reference executor, bit for bit, on every SIMD target and 1, 2 and 3 threads:
// one row block (each task packs its own panels) and several (panels packed up front), panels
// cut short (N not a multiple of any panel width, down to one live column, which takes the
// general path), K below and not a multiple of the 16-k block, float32 and float64, NaN,
// infinities, signed zeros and subnormals, two rounding modes. Each case checks the path ran.
#include <gtest/gtest.h>

#include "cpu/gemm.h"
#include "harness.h"

namespace maroon::test {
namespace {

TEST(CpuBackend, TransposedWeightPacking) {
  // (M, K, N): several row blocks with 784-like K; one row block; K under one 16-k block; N past
  // a whole number of panels by one column (65, 129) or by less than a panel (70, 100).
  const int64_t shapes[][3] = {{130, 50, 70}, {128, 100, 129}, {40, 37, 65}, {7, 9, 100}, {200, 16, 33}};
  for (DType d : {DType::Float32, DType::Float64})
    for (const auto& s : shapes)
      for (Round r : {Round::NearestEven, Round::Up}) {
        const std::string what = "x @ w.T " + std::string(dtype_name(d)) + " " + std::to_string(s[0]) + "x" +
                                 std::to_string(s[1]) + "x" + std::to_string(s[2]) + " " + std::string(round_name(r));
        const int64_t before = cpu::gemm_transposed_b_panels();
        const int runs = g_runs;
        check(what, [&] {
          const uint64_t seed = static_cast<uint64_t>(s[0] * 31 + s[1] * 7 + s[2]);
          Tensor x = near_one_tensor(d, {s[0], s[1]}, seed, true);
          Tensor w = near_one_tensor(d, {s[2], s[1]}, seed + 1, true);
          RoundingScope scope(r);
          return x.matmul(w.permute({1, 0}));
        });
        EXPECT_GE(cpu::gemm_transposed_b_panels() - before, g_runs - runs) << what << ": a run packed no transposed panel";
      }
}

}  // namespace
}  // namespace maroon::test
