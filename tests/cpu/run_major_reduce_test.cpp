// Sums over trailing axes whose leaves step by one stride along them (batchnorm's per-channel
// statistics: (batch, channel, y, x) summed over batch, y and x), evaluated a run of positions
// per output and folded as interleaved chains (src/cpu/run_major_reduce.cpp), against the
// reference executor on every SIMD target and 1, 2 and 3 threads (harness.h), each run required
// to take that path. Runs longer than a tile (576: chunks of 256, 256, 64), several runs per tile
// (36, 64), tasks of several groups of outputs (runs of 100 and 64), a last group of fewer
// outputs, per-channel values filled along the run, flipped leaves (stride -1, copied), plain sums
// folded from their leaf in place, float32 in four rounding modes and float64; values whose sums round (so
// that another order gives other bits), some with NaNs, infinities and signed zeros, and random
// bits.
#include <gtest/gtest.h>

#include <cmath>

#include "cpu/kernel.h"
#include "harness.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

// Values whose sums round (full mantissas, exponents from 2^-6 to 2^6, both signs), so that any
// other order of the terms gives other bits; with `specials`, one in 64 a NaN, an infinity or a
// signed zero.
Tensor rounding_tensor(DType d, const Shape& s, uint64_t seed, bool specials) {
  Gen g(seed);
  const sf::Format f = d == DType::Float32 ? sf::kF32 : sf::kF64;
  std::vector<uint64_t> v(static_cast<size_t>(numel(s)));
  for (auto& x : v) {
    const int mb = d == DType::Float32 ? 23 : 52;  // exactly representable
    const double m = 1.0 + std::ldexp(static_cast<double>(g.next() % (uint64_t{1} << mb)), -mb);
    const int e = static_cast<int>(g.next() % 13) - 6;
    x = encode(f, (g.next() & 1 ? -1.0 : 1.0) * std::ldexp(m, e));
    if (specials && g.next() % 64 == 0) {
      const uint64_t k = g.next() % 3;
      x = k == 0 ? sf::canonical_nan(f) : k == 1 ? f.exp_mask() << f.mbits : f.sign_bit();
    }
  }
  return tensor_of_bits(v, s, d);
}

struct RunCase {
  Shape in;
  std::vector<int64_t> axes;
  bool plain = true;  // whether a plain sum comes here (a last axis alone is a window reduction)
};

TEST(CpuRunMajorReduce, ChannelSumsBitExact) {
  const int runs_before = g_runs;
  const RunCase cases[] = {{{6, 3, 20, 20}, {0, 2, 3}}, {{4, 5, 24, 24}, {0, 2, 3}}, {{9, 16, 8, 8}, {0, 2, 3}},
                           {{7, 20, 6, 6}, {0, 2, 3}},  {{33, 100}, {1}},            {{5, 7, 40}, {1, 2}},
                           {{3, 70, 64}, {2}, false}};  // layernorm's rows: several groups a task
  int n = 0;
  for (DType d : {DType::Float32, DType::Float64})
    for (const RunCase& c : cases) {
      std::vector<Round> modes{Round::NearestEven};
      if (d == DType::Float32) modes = {Round::NearestEven, Round::Down, Round::Up, Round::TowardZero};
      for (Round r : modes)
        for (int form = c.plain ? 0 : 1; form < 3; ++form) {
          const uint64_t seed = 4100 + static_cast<uint64_t>(n++);
          const Shape per = [&] {  // one value per output, broadcast along the reduced axes
            Shape s = c.in;
            for (int64_t a : c.axes) s[a] = 1;
            return s;
          }();
          const char* forms[] = {"sum", "squared deviations", "times flipped"};
          check_path(std::string("run-major ") + shape_str(c.in) + " " + forms[form] + " " +
                         std::string(dtype_name(d)) + " " + std::string(round_name(r)),
                     [&] {
                       Tensor x = form == 0 && r == Round::Up ? random_bits_tensor(c.in, d, seed)
                                                              : rounding_tensor(d, c.in, seed, form == 2);
                       RoundingScope scope(r);
                       if (form == 0) return x.sum(Axis(c.axes));
                       if (form == 1) {
                         Tensor m = rounding_tensor(d, per, seed + 1, false).expand(c.in);
                         return ((x - m) * (x - m)).sum(Axis(c.axes));
                       }
                       Tensor y = rounding_tensor(d, c.in, seed + 2, false);
                       std::vector<int64_t> flip(c.axes.begin(), c.axes.end());
                       return (x * y.flip(flip)).sum(Axis(c.axes));
                     },
                     // A plain sum folds its leaf's values where they are (no copy).
                     [form] { return form == 0 ? cpu::run_major_reduce_in_place_runs() : cpu::run_major_reduce_runs(); },
                     form == 0 ? "fold the leaf in place" : "take the run-major fold");
        }
    }
  std::printf("run-major reductions: %d cases, %d backend runs equal to the reference\n", n, g_runs - runs_before);
}

// A leaf that does not step by one stride along the run (a transposed image) stays with the
// generic fold, and gives the same bits.
TEST(CpuRunMajorReduce, NonLinearLeafFallsBack) {
  const int64_t before = cpu::run_major_reduce_runs();
  check("transposed image", [] {
    Tensor x = random_bits_tensor({6, 3, 20, 12}, DType::Float32, 4500);
    return x.permute({0, 1, 3, 2}).sum(Axis{0, 2, 3});
  });
  EXPECT_EQ(cpu::run_major_reduce_runs(), before);
}

// A sum whose run is shorter than 32 positions (the small op from Python: 16 floats) is refused
// before its program is built (the generic fold builds it again); 32 positions still take the
// run-major fold. Both give the reference's bits.
TEST(CpuRunMajorReduce, ShortRunsAreRefusedBeforeTheirProgram) {
  const int64_t plans = cpu::run_major_reduce_plans();
  check("16 floats, (a + b) * a summed", [] {
    Tensor a = rounding_tensor(DType::Float32, {16}, 4600, false);
    Tensor b = rounding_tensor(DType::Float32, {16}, 4601, false);
    return ((a + b) * a).sum();
  });
  check("runs of 30", [] {
    Tensor x = rounding_tensor(DType::Float32, {4, 3, 10}, 4602, false);
    return (x * rounding_tensor(DType::Float32, {4, 3, 10}, 4605, false)).sum(Axis{1, 2});
  });
  EXPECT_EQ(cpu::run_major_reduce_plans(), plans);  // no program built and thrown away
  check_path("runs of 32", [] {
               Tensor x = rounding_tensor(DType::Float32, {4, 2, 16}, 4603, true);
               return (x * rounding_tensor(DType::Float32, {4, 2, 16}, 4604, false)).sum(Axis{1, 2});
             },
             [] { return cpu::run_major_reduce_runs(); }, "take the run-major fold");
  EXPECT_GT(cpu::run_major_reduce_plans(), plans);
}

}  // namespace
}  // namespace maroon::test
