// Reductions over leading axes whose outputs are adjacent in one realized buffer (a column sum,
// x.sum(0)), folded row by row in place (src/cpu/column_fold.cpp), against the reference executor
// on every SIMD target and 1, 2 and 3 threads over poisoned buffers (harness.h), each run required
// to take that path: ADD, MUL and MAX; float32 in four rounding modes, float64, int32 (wrapping)
// and uint32; random bits (NaNs, infinities, signed zeros, subnormals); fewer outputs than a
// block (one task, a tail of 8 past the whole vectors), several tasks with a partial last one (a
// tail of 40), outputs over two kept axes, two reduced axes, a reversed reduced axis, a sliced
// source (rows 256 apart, 190 outputs), and a reduced axis after the kept ones (an expand's
// stride 0). A reduction whose outputs are not adjacent (a row sum) is left to the other folds.
#include <gtest/gtest.h>

#include "core/ops.h"
#include "cpu/kernel.h"
#include "harness.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

struct ColumnCase {
  const char* what;
  Shape in;
  std::vector<int64_t> axes;
  int view = 0;  // 0 plain, 1 reversed along axis 0, 2 columns 10..199 of 256, 3 expanded last
};

Tensor source(const ColumnCase& c, DType d, uint64_t seed) {
  if (c.view == 2) {
    Shape wide = c.in;
    wide.back() = 256;
    return random_bits_tensor(wide, d, seed).shrink({{0, c.in[0]}, {10, 200}});
  }
  if (c.view == 3) {
    Shape base = c.in;
    base.back() = 1;
    return random_bits_tensor(base, d, seed).expand(c.in);
  }
  Tensor x = random_bits_tensor(c.in, d, seed);
  return c.view == 1 ? x.flip({0}) : x;
}

TEST(CpuColumnFold, LeadingAxisReductionsBitExact) {
  const int runs_before = g_runs;
  const ColumnCase cases[] = {{"300 x 200 over rows", {300, 200}, {0}},
                              {"50 x 1000 over rows", {50, 1000}, {0}},
                              {"7 x 9 x 130 over two axes", {7, 9, 130}, {0, 1}},
                              {"6 x 4 x 80 over the first", {6, 4, 80}, {0}},
                              {"40 x 300 reversed", {40, 300}, {0}, 1},
                              {"30 x 190 sliced", {30, 190}, {0}, 2},
                              {"20 x 70 x 3 expanded last", {20, 70, 3}, {0, 2}, 3}};
  int n = 0;
  for (const ColumnCase& c : cases)
    for (DType d : {DType::Float32, DType::Float64, DType::Int32, DType::UInt32})
      for (ReduceOp op : {ReduceOp::ADD, ReduceOp::MUL, ReduceOp::MAX}) {
        std::vector<Round> modes{Round::NearestEven};
        if (d == DType::Float32 && op != ReduceOp::MAX) modes = {Round::NearestEven, Round::Down, Round::Up, Round::TowardZero};
        for (Round r : modes) {
          const uint64_t seed = 7100 + static_cast<uint64_t>(n++);
          check_path(std::string("column fold ") + c.what + " " + std::string(reduce_op_name(op)) + " " +
                         std::string(dtype_name(d)) + " " + std::string(round_name(r)),
                     [&] {
                       Tensor x = source(c, d, seed);
                       RoundingScope scope(r);
                       return prim::reduce(x, op, c.axes);
                     },
                     [] { return cpu::column_fold_runs(); }, "take the column fold");
        }
      }
  std::printf("column folds: %d cases, %d backend runs equal to the reference\n", n, g_runs - runs_before);
}

// Outputs a stride apart (a sum over the last axis, a transposed matrix's columns) or fewer than
// 64 of them stay with the other folds, with the reference's bits.
TEST(CpuColumnFold, OtherLayoutsFallBack) {
  const int64_t before = cpu::column_fold_runs();
  check("row sums", [] { return prim::reduce(random_bits_tensor({64, 300}, DType::Float32, 7600), ReduceOp::ADD, {1}); });
  check("transposed columns", [] {
    return prim::reduce(random_bits_tensor({300, 100}, DType::Float32, 7601).permute({1, 0}), ReduceOp::ADD, {0});
  });
  check("32 outputs", [] { return prim::reduce(random_bits_tensor({100, 32}, DType::Float32, 7602), ReduceOp::ADD, {0}); });
  EXPECT_EQ(cpu::column_fold_runs(), before);
}

}  // namespace
}  // namespace maroon::test
