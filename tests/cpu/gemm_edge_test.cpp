// Edge tiles (src/cpu/gemm.cpp, MicroEdge): a product's last rows or columns that do not fill a
// register tile, computed by a kernel of fewer rows or vectors than the tile's (an MLP's batch of
// 128 rows leaves 2 in 6-row tiles; its 784-column weight gradient 16 in 64-column panels),
// against the reference executor, bit for bit, on every SIMD target and 1, 2 and 3 threads:
// every count of last rows of the 4-, 6- and 12-row tiles, last panels of one lane to whole
// vectors (kept in the output or in the scratch tile), corners, float32 and float64, NaN,
// infinities, signed zeros and subnormals, rounding modes, and conv2d's B read in place with a
// short last tile of output channels. The path cases check that every run took the edge kernels.
#include <gtest/gtest.h>

#include "cpu/gemm.h"
#include "harness.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

using cpu::GemmEdge;

int64_t edge_tasks(GemmEdge k) { return cpu::gemm_edge_tasks(k); }

// check(), and that every run, on every target, ran an edge kernel of each of `kinds` (a run has
// several tasks: a total over the runs would pass with one target's edges broken).
void check_each_run(const std::string& what, const std::function<Tensor()>& build, std::vector<GemmEdge> kinds) {
  std::vector<int64_t> before;
  for (GemmEdge k : kinds) before.push_back(edge_tasks(k));
  check(what, build, [&](const std::string& target, int threads) {
    for (size_t i = 0; i < kinds.size(); ++i) {
      const int64_t now = edge_tasks(kinds[i]);
      EXPECT_GT(now, before[i]) << what << " on " << target << " with " << threads
                                << " threads: did not run an edge kernel of kind " << static_cast<int>(kinds[i]);
      before[i] = now;
    }
  });
}

std::string tag(DType d, int64_t m, int64_t k, int64_t n, Round r) {
  return std::string(dtype_name(d)) + " " + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n) +
         " " + std::string(round_name(r));
}

Tensor product(DType d, int64_t m, int64_t k, int64_t n, Round r, uint64_t seed) {
  Tensor x = near_one_tensor(d, {m, k}, seed, true), y = near_one_tensor(d, {k, n}, seed + 1, true);
  RoundingScope scope(r);
  return x.matmul(y);
}

// Every target's tiles (4, 6 or 12 rows; panels of 2 or 4 vectors of 1 to 16 lanes) get both
// edges from these: the last row block has 2 rows (M = 96q + 2, and 2 is below every tile's
// height), the last panel 1 column (N = 64q + 1: products of one or two row blocks choose their
// tile per task of 256 columns, so 256q + 1 there). 300 k are two k blocks (the sums stored and
// reloaded). Each run must take a short and a narrow edge.
TEST(CpuBackend, MatmulEdgeTilesTaken) {
  const int64_t shapes[][3] = {{98, 20, 769}, {50, 24, 257}, {194, 12, 321}, {194, 9, 769}, {14, 300, 193}};
  for (DType d : {DType::Float32, DType::Float64})
    for (const auto& s : shapes)
      for (Round r : {Round::NearestEven, Round::Up}) {
        if (d == DType::Float64 && r != Round::NearestEven) continue;  // the reference is slow
        const std::string what = "edge tiles " + tag(d, s[0], s[1], s[2], r);
        auto build = [&] { return product(d, s[0], s[1], s[2], r, static_cast<uint64_t>(s[0] + s[2])); };
        check_each_run(what, build, {GemmEdge::kShortRows, GemmEdge::kNarrowColumns});
      }
}

// Every count of last rows (1 to 11: the 4-, 6- and 12-row tiles' edges, some kept in the output,
// some in the scratch tile) against last panels of 1 to 3 whole or partial vectors, and the
// MLP's own products' shapes (128 rows; 784 columns of its first weight gradient).
TEST(CpuBackend, MatmulEdgeTilesEveryRemainder) {
  const int64_t ms[] = {97, 99, 100, 101, 103, 104, 105, 107};
  const int64_t ns[] = {816, 790, 800};  // AVX-512 float32: 3 whole vectors, 2 and a part, 2 whole
  int i = 0;
  for (int64_t m : ms)
    for (int64_t n : ns) {
      const DType d = i % 3 == 2 ? DType::Float64 : DType::Float32;
      const Round r = i % 4 == 1 ? Round::Down : Round::NearestEven;
      check("edge tiles " + tag(d, m, 9, n, r), [&] { return product(d, m, 9, n, r, static_cast<uint64_t>(m * 3 + n)); });
      ++i;
    }
  check("the MLP's weight gradient g.T @ x", [] {
    Tensor g = near_one_tensor(DType::Float32, {16, 200}, 5, true), x = near_one_tensor(DType::Float32, {16, 784}, 6);
    return g.permute({1, 0}).matmul(x);  // 200 rows: two row blocks and a short last tile
  });
  check("the MLP's forward x @ w.T", [] {
    Tensor x = near_one_tensor(DType::Float32, {128, 20}, 7, true), w = near_one_tensor(DType::Float32, {300, 20}, 8);
    return x.matmul(w.permute({1, 0}));
  });
}

// conv2d computed transposed (weights times the image's windows, read in place: gemm_direct_panel)
// with 10 and 14 output channels: the last tile of channels is short on every target (10 = 6 + 4
// = 8 + 2, 14 = 12 + 2), so the short kernel reads B in place. Each run must take it.
TEST(CpuBackend, ConvEdgeTilesReadBInPlace) {
  for (DType d : {DType::Float32, DType::Float64})
    for (int64_t cout : {10, 14})
      for (Round r : {Round::NearestEven, Round::TowardZero}) {
        if (d == DType::Float64 && r != Round::NearestEven) continue;  // the reference is slow
        const std::string what = std::string("conv2d 4->") + std::to_string(cout) + " on 2x4x6x32 " +
                                 std::string(dtype_name(d)) + " " + std::string(round_name(r));
        const uint64_t seed = static_cast<uint64_t>(cout * 7 + static_cast<int>(r));
        check_each_run(what, [&] {
          Tensor x = near_one_tensor(d, {2, 4, 6, 32}, seed, true);
          x = prim::mul(x.pad({{0, 0}, {0, 0}, {1, 1}, {1, 1}}), 1.0).realize();
          Tensor w = near_one_tensor(d, {cout, 4, 3, 3}, seed + 1), b = near_one_tensor(d, {cout}, seed + 2);
          RoundingScope scope(r);
          return x.conv2d(w, b, 1, {1}, {1}, {0}).relu();
        }, {GemmEdge::kShortRowsBInPlace});
      }
}

}  // namespace
}  // namespace maroon::test
