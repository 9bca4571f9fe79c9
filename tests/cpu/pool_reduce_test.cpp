// The pools' reduction path (src/cpu/pool_reduce.cpp): folds over the trailing axes of one
// strided view, as the ONNX pools cut their windows (a reshape and permute of the input) and as
// global pooling sums a plane, against the reference executor on every SIMD target and 1, 2 and 3
// threads (harness.h, memcmp), for every reduce op and dtype, random bits (NaN, infinities,
// signed zeros, subnormals), each rounding mode for float sums and products; and the cases that must leave
// the path (a window longer than it takes, reduced axes that are not trailing) still agree.
#include <gtest/gtest.h>

#include "harness.h"
#include "cpu/pool_reduce.h"
#include "cpu/window_gather.h"
#include "maroon/primitives.h"
#include "util.h"

namespace maroon::test {
namespace {

// Windows of kh x kw at stride (kh, kw) over (N, C, H, W), as ops_pool.cpp cuts them.
Tensor tiled(const Tensor& x, int64_t kh, int64_t kw) {
  const Shape& s = x.shape();
  const int64_t oh = s[2] / kh, ow = s[3] / kw;
  return x.shrink({{0, s[0]}, {0, s[1]}, {0, oh * kh}, {0, ow * kw}})
      .reshape({s[0], s[1], oh, kh, ow, kw})
      .permute({0, 1, 2, 4, 3, 5});
}

TEST(CpuBackend, PoolWindowReductions) {
  const int runs_before = g_runs;
  const int64_t taken_before = cpu::window_reduce_runs();
  int combos = 0;
  struct Case { const char* name; std::function<Tensor(const Tensor&)> view; Shape in; std::vector<int64_t> axes; };
  const Case cases[] = {
      {"2x2 windows", [](const Tensor& x) { return tiled(x, 2, 2); }, {2, 3, 8, 6}, {4, 5}},
      {"3x2 windows, rows dropped", [](const Tensor& x) { return tiled(x, 3, 2); }, {2, 5, 10, 7}, {4, 5}},
      {"flipped 2x2 windows", [](const Tensor& x) { return tiled(x.flip({2, 3}), 2, 2); }, {1, 3, 6, 8}, {4, 5}},
      {"plane (global pool)", [](const Tensor& x) { return x; }, {3, 4, 8, 8}, {2, 3}},
      {"permuted plane", [](const Tensor& x) { return x.permute({0, 3, 1, 2}); }, {2, 5, 4, 3}, {2, 3}},
      {"many outputs", [](const Tensor& x) { return tiled(x, 2, 2); }, {3, 7, 30, 32}, {4, 5}},
      {"no outputs", [](const Tensor& x) { return x; }, {0, 3, 2, 2}, {2, 3}},
  };
  for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::Int32, DType::UInt8})
    for (ReduceOp op : kAllReduceOps)
      for (const Case& c : cases) {
        std::vector<Round> modes{Round::NearestEven};
        if (is_float(d) && op != ReduceOp::MAX) modes = {Round::NearestEven, Round::TowardZero, Round::Up, Round::Down};
        for (Round r : modes) {
          check(std::string(c.name) + " " + std::string(reduce_op_name(op)) + " " + std::string(dtype_name(d)) + " " +
                    std::string(round_name(r)),
                [&] {
                  Tensor x = c.view(random_bits_tensor(c.in, d, 500 + combos));
                  RoundingScope scope(r);
                  return x.reduce(op, c.axes);
                });
          ++combos;
        }
      }
  // The path ran (float32 MAX and ADD at least have a SIMD fold on every target).
  EXPECT_GT(cpu::window_reduce_runs(), taken_before);
  // Left to run_reduce: a window of 65 positions, and reduced axes that are not the last.
  for (ReduceOp op : {ReduceOp::ADD, ReduceOp::MAX}) {
    check("window of 65", [&] { return random_bits_tensor({4, 5, 65}, DType::Float32, 9).reduce(op, {2}); });
    check("leading axis", [&] { return random_bits_tensor({4, 5, 6}, DType::Float32, 10).reduce(op, {1}); });
  }
  EXPECT_EQ(combos, 5 * 3 * 7 + 3 * 2 * 7 * 3);  // dtypes x ops x cases, + float ADD/MUL's other modes
  std::printf("pool windows: %d backend runs equal to the reference\n", g_runs - runs_before);
}

// Softmax's row reductions (outputs far apart: rows of the last axis) take window_gather.cpp's
// kernels: float32 and float64, every op and mode, random bits; windows of adjacent elements
// (transposed in registers) at least a vector long, with and without a remainder, and shorter or
// strided ones (gathered); runs of outputs shorter than a vector and not a multiple of one, rows
// flipped (a negative step), windows over two axes.
TEST(CpuBackend, WindowGatherReductions) {
  const int runs_before = g_runs;
  struct Case { const char* name; std::function<Tensor(const Tensor&)> view; Shape in; std::vector<int64_t> axes; };
  const Case cases[] = {
      {"softmax rows", [](const Tensor& x) { return x; }, {4, 64, 64}, {2}},
      {"short runs", [](const Tensor& x) { return x; }, {7, 5, 9}, {2}},
      {"odd run length", [](const Tensor& x) { return x; }, {3, 37, 3}, {2}},
      {"flipped rows", [](const Tensor& x) { return x.flip({1}); }, {2, 21, 8}, {2}},
      {"rows not a multiple of a vector", [](const Tensor& x) { return x; }, {3, 21, 37}, {2}},
      {"strided windows", [](const Tensor& x) { return x.permute({2, 0, 1}); }, {2, 6, 40}, {2}},
      {"two reduced axes", [](const Tensor& x) { return x; }, {3, 19, 4, 5}, {2, 3}},
      {"2x2 pools", [](const Tensor& x) { return tiled(x, 2, 2); }, {2, 3, 8, 64}, {4, 5}},
      {"2x2 pools, runs of 8 and 5", [](const Tensor& x) { return tiled(x, 2, 2); }, {2, 3, 6, 26}, {4, 5}},
      {"3x2 pools", [](const Tensor& x) { return tiled(x, 3, 2); }, {1, 2, 9, 40}, {4, 5}},
      {"2x2 pools, one column", [](const Tensor& x) { return tiled(x, 2, 2).shrink({{0, 2}, {0, 3}, {0, 3}, {0, 19}, {0, 2}, {0, 1}}); },
       {2, 3, 6, 38}, {4, 5}},
      {"one output", [](const Tensor& x) { return x; }, {33}, {0}},
  };
  uint64_t seed = 900;
  for (DType d : {DType::Float32, DType::Float64})
    for (ReduceOp op : kAllReduceOps)
      for (const Case& c : cases) {
        std::vector<Round> modes{Round::NearestEven};
        if (op != ReduceOp::MAX) modes = {Round::NearestEven, Round::TowardZero, Round::Up, Round::Down};
        for (Round r : modes)
          for (bool grid : {false, true}) {  // random bits; values near one with specials (ties, +-0)
          const std::string what = std::string(c.name) + " " + std::string(reduce_op_name(op)) + " " +
                                   std::string(dtype_name(d)) + " " + std::string(round_name(r)) +
                                   (grid ? " grid" : "");
          ++seed;
          auto build = [&] {
            Tensor x = c.view(grid ? near_one_tensor(d, c.in, seed, true) : random_bits_tensor(c.in, d, seed));
            RoundingScope scope(r);
            return x.reduce(op, c.axes);
          };
          if (std::string(c.name) == "one output") {  // no step between outputs: the general path
            const int64_t before = cpu::window_gather_runs();
            check(what, build);
            EXPECT_EQ(cpu::window_gather_runs(), before) << what;
          } else {
            check_path(what, build, cpu::window_gather_runs, "take the gather kernels");
          }
        }
      }
  // Rows of +0, -0, -1 and -inf: the maximum of a tie of signed zeros is +0 whichever comes first.
  for (DType d : {DType::Float32, DType::Float64})
    check_path(std::string("signed zeros ") + std::string(dtype_name(d)), [d] {
      const sf::Format f = d == DType::Float32 ? sf::kF32 : sf::kF64;
      const uint64_t pick[] = {0, f.sign_bit(), encode(f, -1.0), f.sign_bit() | (f.exp_mask() << f.mbits)};
      Gen g(77);
      std::vector<uint64_t> v(6 * 40 * 24);
      for (auto& x : v) x = pick[g.next() % 4];
      return tensor_of_bits(v, {6, 40, 24}, d).reduce(ReduceOp::MAX, {2});
    }, cpu::window_gather_runs, "take the gather kernels");
  // Look-alikes that keep the general path: flipped 2x2 pools (outputs 2 apart backwards), 2x1
  // pools (outputs adjacent), float16, int32.
  const int64_t before = cpu::window_gather_runs();
  check("flipped 2x2 pool", [] {
    return tiled(random_bits_tensor({2, 3, 8, 34}, DType::Float32, 7).flip({3}), 2, 2).reduce(ReduceOp::MAX, {4, 5});
  });
  check("2x1 pool", [] { return tiled(random_bits_tensor({2, 3, 8, 34}, DType::Float32, 6), 2, 1).reduce(ReduceOp::MAX, {4, 5}); });
  check("float16 rows", [] { return random_bits_tensor({4, 16, 64}, DType::Float16, 8).reduce(ReduceOp::ADD, {2}); });
  check("int32 rows", [] { return random_bits_tensor({4, 16, 64}, DType::Int32, 9).reduce(ReduceOp::MAX, {2}); });
  EXPECT_EQ(cpu::window_gather_runs(), before);
  std::printf("window gathers: %d backend runs equal to the reference\n", g_runs - runs_before);
}

// 2 x 2 windows at stride 2 (the CNN's max-pools) take window_gather.cpp's Pool2x2RunsFn, a
// task's runs in one call, MAX with its NaN rule applied once per vector: float32 and float64,
// every op and mode, random bits and values near one with specials; rows of whole vectors (64,
// 32 outputs), half vectors (8, 4), two half rows in one vector (8 on AVX-512, 2 on SSE4; an odd
// number of them, one alone), half plus a gathered tail (13, 5), fewer than a vector (3); each of
// a window's four positions holding a lane's NaN or infinity, and ties of signed zeros. 3x2 and
// 2x1 windows and float16 must not take it.
TEST(CpuBackend, Pool2x2RunsKernel) {
  const int runs_before = g_runs;
  struct Case { const char* name; Shape in; };
  const Case cases[] = {
      {"runs of 64", {1, 2, 4, 128}}, {"runs of 32", {2, 3, 6, 64}}, {"runs of 16", {2, 16, 4, 32}},
      {"runs of 8", {2, 5, 6, 16}},  {"runs of 13", {1, 3, 8, 26}},  {"runs of 5", {2, 3, 4, 11}},
      {"runs of 3", {3, 2, 6, 6}},   {"runs of 4", {2, 3, 4, 8}},    {"three runs of 8", {1, 3, 2, 16}},
      {"one run of 8", {1, 1, 2, 16}}, {"runs of 2", {1, 5, 2, 4}},
  };
  auto pool = [](const Tensor& x, ReduceOp op, Round r) {
    RoundingScope scope(r);
    return tiled(x, 2, 2).reduce(op, {4, 5});
  };
  auto taken = [] { return cpu::pool2x2_reductions(); };
  uint64_t seed = 1300;
  for (DType d : {DType::Float32, DType::Float64})
    for (ReduceOp op : kAllReduceOps)
      for (const Case& c : cases) {
        std::vector<Round> modes{Round::NearestEven};
        if (op != ReduceOp::MAX) modes = {Round::NearestEven, Round::TowardZero, Round::Up, Round::Down};
        for (Round r : modes)
          for (bool grid : {false, true}) {
            ++seed;
            check_path(std::string(c.name) + " " + std::string(reduce_op_name(op)) + " " + std::string(dtype_name(d)) +
                           " " + std::string(round_name(r)) + (grid ? " grid" : ""),
                       [&] {
                         return pool(grid ? near_one_tensor(d, c.in, seed, true) : random_bits_tensor(c.in, d, seed), op, r);
                       },
                       taken, "take the 2x2 pool kernel");
          }
      }
  // One special in one window position (each of the four in turn), the rest of the lane ordinary
  // or -inf; and windows of +0, -0, -1 and -inf: MAX's NaN rule and +0 over -0 at every step.
  for (DType d : {DType::Float32, DType::Float64}) {
    const sf::Format f = d == DType::Float32 ? sf::kF32 : sf::kF64;
    const uint64_t ninf = f.sign_bit() | (f.exp_mask() << f.mbits), qnan = (f.exp_mask() << f.mbits) | (uint64_t{1} << (f.mbits - 1));
    const uint64_t specials[] = {qnan | 5, qnan | f.sign_bit(), (f.exp_mask() << f.mbits) | 1, ninf, 0, f.sign_bit()};
    for (int pos = 0; pos < 4; ++pos)
      for (uint64_t sp : specials)
        check_path(std::string("special at position ") + std::to_string(pos) + " " + std::string(dtype_name(d)), [=] {
          Gen g(pos * 31 + sp % 97);
          const Shape in{2, 3, 4, 40};
          std::vector<uint64_t> v = near_one(g, static_cast<size_t>(2 * 3 * 4 * 40), f);
          for (size_t i = 0; i < v.size(); ++i) {
            const size_t col = i % 40, row = (i / 40) % 4;
            if (static_cast<int>((row % 2) * 2 + col % 2) == pos && (i / 2) % 3 == 0) v[i] = sp;
            else if (g.next() % 5 == 0) v[i] = ninf;
          }
          return pool(tensor_of_bits(v, in, d), ReduceOp::MAX, Round::NearestEven);
        }, taken, "take the 2x2 pool kernel");
    check_path(std::string("signed zero windows ") + std::string(dtype_name(d)), [=] {
      const uint64_t pick[] = {0, f.sign_bit(), encode(f, -1.0), ninf};
      Gen g(78);
      std::vector<uint64_t> v(4 * 6 * 8 * 34);
      for (auto& x : v) x = pick[g.next() % 4];
      return pool(tensor_of_bits(v, {4, 6, 8, 34}, d), ReduceOp::MAX, Round::NearestEven);
    }, taken, "take the 2x2 pool kernel");
  }
  // Look-alikes that must not: 3x2 windows, 2x1 windows, float16.
  const int64_t before = taken();
  check("3x2 pool", [] { return tiled(random_bits_tensor({2, 3, 9, 40}, DType::Float32, 5), 3, 2).reduce(ReduceOp::MAX, {4, 5}); });
  check("2x1 pool", [] { return tiled(random_bits_tensor({2, 3, 8, 34}, DType::Float32, 6), 2, 1).reduce(ReduceOp::MAX, {4, 5}); });
  check("float16 2x2 pool", [] { return tiled(random_bits_tensor({2, 3, 8, 34}, DType::Float16, 7), 2, 2).reduce(ReduceOp::MAX, {4, 5}); });
  EXPECT_EQ(taken(), before);
  std::printf("2x2 pool runs: %d backend runs equal to the reference\n", g_runs - runs_before);
}

}  // namespace
}  // namespace maroon::test
