// Accumulator programs whose leaves are in place, broadcast, or constant over runs of positions
// go a run at a time (src/cpu/acc_runs.cpp): batchnorm's output ((relu(x + b) - m) * w) * s + c
// over (N, C, H, W) with planes of 64, 100, 400 and 576 positions (runs a multiple of kTilePad
// and not, runs across tiles and tasks, a size whose last task ends inside a vector), float32
// and float64 with NaN, infinities, signed zeros and subnormals, and a kernel that writes a second
// output. Against the reference executor on every SIMD target and 1, 2 and 3 threads
// (harness.h); every CPU run must go a run at a time. Planes of 36 positions (runs shorter than
// kMinRunSegment) and the other rounding modes (no accumulator programs) keep the tile loop and
// are compared only.
#include <gtest/gtest.h>

#include <optional>

#include "cpu/acc_runs.h"
#include "cpu/kernel.h"
#include "harness.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

Tensor per_channel_of(const Shape& s, DType d, uint64_t seed) {
  return random_bits_tensor({1, s[1], 1, 1}, d, seed).realize();
}

// Batchnorm's output over a realized x, its per-channel values realized.
Tensor bn_output(const Tensor& x, DType d, uint64_t seed) {
  const Shape& s = x.shape();
  Tensor b = per_channel_of(s, d, seed), m = per_channel_of(s, d, seed + 1), w = per_channel_of(s, d, seed + 2);
  Tensor sc = per_channel_of(s, d, seed + 3), c = per_channel_of(s, d, seed + 4);
  Tensor h = prim::add(x, b);
  h = prim::where(prim::cmplt(Tensor::full({}, 0.0, d), h), h, 0.0);
  return prim::add(prim::mul(prim::mul(prim::add(h, prim::mul(m, -1.0)), w), sc), c);
}

auto by_runs = [] { return cpu::acc_run_tasks(); };

TEST(CpuAccRuns, BatchnormOutputGoesARunAtATime) {
  for (DType d : {DType::Float32, DType::Float64})
    for (const Shape& s : {Shape{3, 5, 8, 8}, Shape{2, 3, 10, 10}, Shape{5, 7, 20, 20}, Shape{2, 4, 24, 24}}) {
      const std::string tag = std::string(dtype_name(d)) + " " + shape_str(s);
      check_path_on("batchnorm output " + tag, [&] { return bn_output(random_bits_tensor(s, d, 1300).realize(), d, 1301); },
                    by_runs, "go a run at a time", targets_to_test());
    }
  // The other rounding modes have no accumulator programs: the tile loop (bits only).
  for (Round r : kAllRounds)
    check("batchnorm output " + std::string(round_name(r)), [&] {
      Tensor x = random_bits_tensor({3, 6, 10, 10}, DType::Float32, 1310).realize();
      RoundingScope scope(r);
      return bn_output(x, DType::Float32, 1311);
    });
  // Runs of 36 positions: the tile loop (bits only).
  check("batchnorm output over 6 x 6 planes", [&] {
    return bn_output(random_bits_tensor({4, 8, 6, 6}, DType::Float32, 1320).realize(), DType::Float32, 1321);
  });
}

// The kernel writes relu(x + z), which a handle keeps (two streams: written, not computed again
// later, plan.cpp), beside the output (a kernel of two outputs, find_outputs): both against the
// reference, a run at a time.
TEST(CpuAccRuns, SecondOutputWrittenARunAtATime) {
  const Shape s{3, 5, 10, 10};
  std::optional<Tensor> kept;
  auto build = [&] {
    Tensor x = random_bits_tensor(s, DType::Float32, 1330).realize();
    Tensor z = random_bits_tensor(s, DType::Float32, 1331).realize(), w = per_channel_of(s, DType::Float32, 1332);
    Tensor h = prim::add(x, z);
    kept = prim::where(prim::cmplt(Tensor::full({}, 0.0, DType::Float32), h), h, 0.0);
    return prim::mul(*kept, w);
  };
  const int64_t merged = cpu::multi_output_runs();
  check_path_on("two outputs", build, by_runs, "go a run at a time", targets_to_test());
  EXPECT_GT(cpu::multi_output_runs(), merged) << "no kernel wrote two outputs";
  check("two outputs, the second", [&] {
    build().realize();
    return *kept;
  });
}

}  // namespace
}  // namespace maroon::test
