// Pool gradients on the CPU backend against the reference executor, bit for bit, on every SIMD
// target and 1, 2 and 3 threads: the sum that folds the window gradients back onto the image
// through pool's view stack, its terms laid out once per kernel and only the real ones added
// (src/cpu/view_fold.cpp). max_pool2d and avg_pool2d with windows that tile the image (as
// beautiful_mnist's), overlap, leave gaps, reach into padding, dilate, rectangular ones; float32
// in every rounding mode and float64; output gradients of random bits (NaN, infinities, signed
// zeros, subnormals) and near one.
#include <gtest/gtest.h>

#include <cstring>

#include "cpu/kernel.h"
#include "harness.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

struct PoolCase {
  const char* name;
  int64_t n, c, h, w;
  std::vector<int64_t> kernel, stride, dilation, padding;
};

std::string pool_case_name(const PoolCase& p, bool max, DType d, Round r, bool special) {
  return std::string(max ? "max_pool2d " : "avg_pool2d ") + p.name + " " + std::string(dtype_name(d)) + " " +
         std::string(round_name(r)) + (special ? " random bits" : "");
}

// The image's gradient of sum(pool(x) * g), g the output gradient as drawn.
Tensor pool_gradient(const PoolCase& p, bool max, DType d, Round r, bool special) {
  Gen gen(static_cast<uint64_t>(p.h * 97 + p.w * 13 + p.kernel[0] + (max ? 1 : 0) + (special ? 7 : 0)));
  const sf::Format f = fmt(d);
  Tensor x = tensor_of_bits(near_one(gen, static_cast<size_t>(p.n * p.c * p.h * p.w), f), {p.n, p.c, p.h, p.w}, d);
  RoundingScope scope(r);
  Tensor y = max ? x.max_pool2d(p.kernel, p.stride, p.dilation, p.padding)
                 : x.avg_pool2d(p.kernel, p.stride, p.dilation, p.padding);
  std::vector<uint64_t> gv = near_one(gen, static_cast<size_t>(numel(y.shape())), f);
  if (special)
    for (auto& v : gv) v = gen.bits(d);
  (y * tensor_of_bits(gv, y.shape(), d)).sum().backward();
  return *x.grad();
}

TEST(CpuPoolGradients, EqualTheReferenceOnEveryTargetAndThreadCount) {
  const int runs_before = g_runs;
  const int64_t folds_before = cpu::view_fold_runs();
  const std::vector<PoolCase> pools{
      {"2x2 stride 2 (beautiful_mnist)", 4, 3, 20, 20, {2, 2}, {2, 2}, {1}, {0}},
      {"2x2 stride 2, odd image", 2, 5, 7, 9, {2, 2}, {2, 2}, {1}, {0}},
      {"3x3 stride 2, overlapping", 3, 2, 11, 10, {3, 3}, {2, 2}, {1}, {0}},
      {"2x2 stride 3, gaps", 2, 4, 12, 13, {2, 2}, {3, 3}, {1}, {0}},
      {"3x3 stride 1 padded", 2, 3, 8, 6, {3, 3}, {1, 1}, {1}, {1}},
      {"3x2 stride (2, 1) dilation 2", 2, 2, 12, 9, {3, 2}, {2, 1}, {2}, {0}},
  };
  int cases = 0;
  for (size_t i = 0; i < pools.size(); ++i)
    for (bool max : {true, false}) {
      std::vector<std::pair<DType, Round>> modes{{DType::Float32, Round::NearestEven}, {DType::Float32, Round::Down}};
      if (i < 3)
        modes.insert(modes.end(), {{DType::Float32, Round::Up}, {DType::Float32, Round::TowardZero},
                                   {DType::Float64, Round::NearestEven}});
      for (const auto& mode : modes)
        for (bool special : {false, true}) {
          const DType d = mode.first;  // not a structured binding: clang-14 cannot capture one
          const Round r = mode.second;
          const int64_t folds = cpu::view_fold_runs(), gathers = cpu::view_fold_gather_runs();
          const int compared = g_runs;
          check(pool_case_name(pools[i], max, d, r, special), [&] { return pool_gradient(pools[i], max, d, r, special); });
          EXPECT_GT(cpu::view_fold_runs(), folds) << pool_case_name(pools[i], max, d, r, special) << " was not folded";
          // Windows that tile or leave gaps give each pixel at most one term: every run gathers.
          // Overlapping ones never may.
          const int64_t gathered = cpu::view_fold_gather_runs() - gathers;
          if (i == 0 || i == 1 || i == 3)
            EXPECT_GE(gathered, g_runs - compared) << pool_case_name(pools[i], max, d, r, special) << " was not gathered";
          else
            EXPECT_EQ(gathered, 0) << pool_case_name(pools[i], max, d, r, special) << " was gathered";
          ++cases;
        }
    }
  std::printf("pool gradients: %d cases, %d backend runs equal to the reference, %lld view folds\n", cases,
              g_runs - runs_before, static_cast<long long>(cpu::view_fold_runs() - folds_before));
}

// The gather's own edge cases, explicitly: pool's windows' gradient given as raw bits (so that the
// fold's source holds them as drawn, not a kernel's canonical results): -0 terms, +0 + -0 = +0
// except when rounding down (then -0); NaNs of either sign and any payload (quiet, signalling)
// come out canonical. Both facts are asserted on the reference's result so that the cases cannot
// silently vanish; then the backend must gather every run and match it bit for bit.
TEST(CpuPoolGradients, GatherKeepsSignedZerosAndCanonicalNaNs) {
  const std::vector<uint64_t> specials{0x80000000u, 0x00000000u, 0x7fc00001u, 0xffc12345u, 0x7f800001u,
                                       0x7f800000u, 0xff800000u, 0x80000001u, 0xbf800000u, 0x3f800000u, 0x80000000u};
  for (Round r : {Round::NearestEven, Round::Down, Round::Up, Round::TowardZero}) {
    const auto build = [&] {
      Tensor x = tensor_of_bits(std::vector<uint64_t>(2 * 3 * 6 * 8, 0x3f800000u), {2, 3, 6, 8}, DType::Float32);
      std::vector<uint64_t> gv(2 * 3 * 3 * 4 * 2 * 2);
      for (size_t i = 0; i < gv.size(); ++i) gv[i] = specials[i % specials.size()];
      RoundingScope scope(r);
      Tensor w = x.pool({2, 2}, {2, 2}, {1, 1});
      w.backward(tensor_of_bits(gv, w.shape(), DType::Float32));
      return *x.grad();
    };
    {
      BackendSettings keep;
      set_backend(Backend::Ref);
      const std::vector<uint8_t> b = build().bytes();
      int neg_zero = 0, nan = 0, other_nan = 0;
      for (size_t i = 0; i + 4 <= b.size(); i += 4) {
        uint32_t u;
        std::memcpy(&u, b.data() + i, 4);
        neg_zero += u == 0x80000000u;
        if ((u & 0x7fffffffu) > 0x7f800000u) ++(u == 0x7fc00000u ? nan : other_nan);
      }
      EXPECT_EQ(neg_zero > 0, r == Round::Down) << round_name(r);
      EXPECT_GT(nan, 0) << round_name(r);
      EXPECT_EQ(other_nan, 0) << round_name(r);
    }
    check_path(std::string("pool gradient of special values ") + std::string(round_name(r)), build,
               [] { return cpu::view_fold_gather_runs(); }, "gather");
  }
}

}  // namespace
}  // namespace maroon::test

namespace maroon::test {
namespace {

// cumsum's window sums (each output the terms 0..j of its block, through tinygrad's pad-and-pool
// stack) folded as running prefixes, out[j] = out[j - 1] + x[j] (view_fold.cpp, prefix_terms):
// the reference's bits on every target and thread count, float32 in every rounding mode (signed
// zeros, NaNs and infinities among the terms) and float64, rows shorter and longer than a block
// (tinygrad splits rows past 256 into blocks), along the last axis and another, int32 and int64
// (sums that wrap), arange (one row); each run required to take the path. Windows sliding along a row (a causal moving sum: as one term
// joins, the first drops out) are no prefixes and must not take it.
TEST(CpuViewFold, CumsumFoldsRunningPrefixes) {
  const std::function<int64_t()> prefix = [] { return cpu::view_fold_prefix_runs(); };
  const char* const path = "fold running prefixes";
  struct C { Shape s; int64_t axis; };
  for (const C& c : {C{{64, 100}, 1}, C{{8, 1000}, 1}, C{{300, 6}, 0}})
    for (DType d : {DType::Float32, DType::Float64})
      for (Round r : {Round::NearestEven, Round::TowardZero, Round::Down, Round::Up}) {
        if (d == DType::Float64 && r != Round::NearestEven) continue;
        for (bool special : {false, true})
          check_path("cumsum " + shape_str(c.s) + " axis " + std::to_string(c.axis) + " " + std::string(dtype_name(d)) +
                         " " + std::string(round_name(r)) + (special ? " random bits" : ""),
                     [&] {
                       Gen gen(static_cast<uint64_t>(numel(c.s) + c.axis));
                       std::vector<uint64_t> v = near_one(gen, static_cast<size_t>(numel(c.s)), fmt(d));
                       if (special)
                         for (size_t i = 0; i < v.size(); i += 7) v[i] = gen.bits(d);
                       RoundingScope scope(r);
                       return tensor_of_bits(v, c.s, d).cumsum(c.axis);
                     },
                     prefix, path);
      }
  // Integer cumsums (wrapping sums: random bits) and arange, tinygrad's cumsum of a filled row:
  // one row, no batch units.
  for (DType d : {DType::Int32, DType::Int64})
    check_path("cumsum " + std::string(dtype_name(d)) + " random bits", [&] {
      Gen gen(17);
      std::vector<uint64_t> v(40 * 600);
      for (auto& x : v) x = gen.bits(d);
      return tensor_of_bits(v, {40, 600}, d).cumsum(1);
    }, prefix, path);
  check_path("arange(1000)", [] { return Tensor::arange(1000); }, prefix, path);
  check_path("arange(3, 1000, 7) int64", [] { return Tensor::arange(Scalar(int64_t{3}), Scalar(int64_t{1000}), Scalar(int64_t{7}), DType::Int64); },
             prefix, path);
  const int64_t before = prefix(), folds = cpu::view_fold_runs();
  // A causal moving sum (a 1-D average pool of 5 padded by 4 on the left): each window has as
  // many real terms as the last or one more, as a prefix would, but its first term drops out.
  check("a causal 1-D average pool (windows sliding along the row)", [] {
    Gen gen(5);
    Tensor x = tensor_of_bits(near_one(gen, 8 * 4 * 64), {8, 4, 1, 64}, DType::Float32);
    return x.avg_pool2d({1, 5}, {1, 1}, {1, 1}, {4, 0, 0, 0});
  });
  EXPECT_GT(cpu::view_fold_runs(), folds) << "the sliding window was not a view fold: the case tests nothing";
  EXPECT_EQ(prefix(), before) << "a window whose first term drops out was folded as a prefix";
}

}  // namespace
}  // namespace maroon::test
