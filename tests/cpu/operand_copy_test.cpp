// Matmul operands that one strided view cannot express, copied out densely (src/cpu/operand_copy.cpp),
// against the reference executor, bit for bit, on every SIMD target and 1, 2 and 3 threads:
// attention's heads (a slice of the fused QKV projection, reshaped into heads and transposed, and
// joined back: rows of runs), contiguous runs and runs at a stride, padded views and rows
// that cross a carry of the view below (neither kept as runs). The runs of a view stack are kept
// after its first copy, so every later run of the same graph must find them. The elementwise
// kernels read such leaves through the same kept runs (src/cpu/view_runs.cpp): attention's
// query scaled as it is read, heads joined back and added to a residual, runs at a stride,
// five dtypes, rounding modes; and stacks that are not runs (padding, rows across a carry).
#include <gtest/gtest.h>

#include "cpu/gemm_direct.h"
#include "cpu/matmul_plan.h"
#include "cpu/operand_copy.h"
#include "cpu/view_runs.h"
#include "harness.h"

namespace maroon::test {
namespace {

Tensor copy_operand(DType d, const Shape& s, uint64_t seed) {
  Gen g(seed);
  return tensor_of_bits(near_one(g, static_cast<size_t>(numel(s)), d == DType::Float32 ? sf::kF32 : sf::kF64), s, d);
}

// Part `part` of the last axis of qkv (seq, batch, 3 * heads * hd) as (batch * heads, seq, hd).
Tensor heads_of(const Tensor& qkv, int64_t part, int64_t heads) {
  const int64_t seq = qkv.shape()[0], batch = qkv.shape()[1], d = qkv.shape()[2] / 3;
  return qkv.shrink({{0, seq}, {0, batch}, {part * d, (part + 1) * d}})
      .reshape({seq, batch * heads, d / heads})
      .permute({1, 0, 2});
}

TEST(CpuBackend, DenseOperandRuns) {
  for (DType d : {DType::Float32, DType::Float64}) {
    const std::string tag(dtype_name(d));
    // q @ k^T reads rows of hd contiguous elements; p @ v reads v's rows at the stride of a
    // sequence step (3 * batch * heads * hd elements): three copies per run.
    int64_t before = cpu::dense_copy_hits();
    int runs = g_runs;
    check("attention scores and values " + tag, [&] {
      Tensor qkv = copy_operand(d, {32, 3, 48}, 11);
      Tensor q = heads_of(qkv, 0, 2), k = heads_of(qkv, 1, 2), v = heads_of(qkv, 2, 2);
      Tensor p = q.matmul(k.permute({0, 2, 1})).realize();
      return p.matmul(v);
    });
    EXPECT_GT(g_runs - runs, 1) << tag;
    EXPECT_GE(cpu::dense_copy_hits() - before, 3 * (g_runs - runs - 1)) << tag << ": a run did not find its runs";
    // The heads joined back for the output projection: rows of 16 in runs of hd = 8.
    before = cpu::dense_copy_hits();
    runs = g_runs;
    check("heads joined " + tag, [&] {
      Tensor o = copy_operand(d, {6, 32, 8}, 12).permute({1, 0, 2}).reshape({32 * 3, 16});
      return o.matmul(copy_operand(d, {16, 40}, 13));
    });
    EXPECT_GE(cpu::dense_copy_hits() - before, g_runs - runs - 1) << tag << ": a run did not find its runs";
  }
}

// A kept copy of more than kCopyTaskElements (16384) elements is cut into tasks of whole runs
// (operand_copy.cpp, copy_runs): 36864 elements per operand here, two whole tasks and a partial
// one, with NaN, infinities, signed zeros and subnormals. Every run after the first (which walks
// the views) must split its copies.
TEST(CpuBackend, DenseOperandRunsInTasks) {
  for (DType d : {DType::Float32, DType::Float64}) {
    const std::string tag(dtype_name(d));
    const int64_t before = cpu::dense_copy_splits();
    const int runs = g_runs;
    check("attention heads in tasks " + tag, [&] {
      Tensor qkv = near_one_tensor(d, {72, 8, 3 * 64}, 51, true);
      Tensor q = heads_of(qkv, 0, 4), k = heads_of(qkv, 1, 4), v = heads_of(qkv, 2, 4);
      Tensor p = q.matmul(k.permute({0, 2, 1})).realize();
      return p.matmul(v);
    });
    EXPECT_GE(cpu::dense_copy_splits() - before, 3 * (g_runs - runs - 1)) << tag << ": a copy was not split";
  }
}

// Attention's values (p @ v, v a slice of qkv reshaped into heads) are copied with the head's
// columns last (matmul_plan.cpp, dense_order): runs of hd adjacent elements, and with hd = 16 (a
// whole number of vectors on every target) B's rows are read in place (gemm_direct.cpp); with
// hd = 24 the packed kernel reads the same copy. NaN, infinities, signed zeros and subnormals,
// two rounding modes. Not reordered: q @ k^T (k's last moving axis already steps by one) and
// padded heads.
TEST(CpuBackend, DenseOperandValuesColumnsLast) {
  for (DType d : {DType::Float32, DType::Float64})
    for (Round r : {Round::NearestEven, Round::Up})
      for (int64_t hd : {16, 24}) {
        const std::string tag = std::string(dtype_name(d)) + " " + std::string(round_name(r)) + " hd " +
                                std::to_string(hd);
        const int64_t reordered = cpu::matmul_reordered_copies(), direct = cpu::gemm_direct_runs();
        const int runs = g_runs;
        check("attention values " + tag, [&] {
          RoundingScope scope(r);
          Tensor qkv = near_one_tensor(d, {40, 3, 3 * 2 * hd}, 41 + static_cast<uint64_t>(hd), true);
          Tensor p = near_one_tensor(d, {3 * 2, 40, 40}, 42, true);
          return p.matmul(heads_of(qkv, 2, 2));
        });
        EXPECT_GE(cpu::matmul_reordered_copies() - reordered, g_runs - runs) << tag << ": values not reordered";
        if (hd == 16) {
          EXPECT_GE(cpu::gemm_direct_runs() - direct, g_runs - runs) << tag << ": values not read in place";
        }
      }
  const int64_t before = cpu::matmul_reordered_copies();
  check("scores and padded values, not reordered", [] {
    Tensor qkv = copy_operand(DType::Float32, {40, 3, 96}, 43);
    Tensor q = heads_of(qkv, 0, 2), k = heads_of(qkv, 1, 2);
    Tensor v = heads_of(qkv.pad({{1, 1}, {0, 0}, {0, 0}}), 2, 2);
    Tensor p = q.matmul(k.permute({0, 2, 1})).realize();
    return p.pad({{0, 0}, {0, 0}, {1, 1}}).matmul(v);
  });
  EXPECT_EQ(cpu::matmul_reordered_copies(), before) << "a copy was reordered";
}

TEST(CpuBackend, DenseOperandIrregular) {
  // Padding inside the view stack: indices of -1 read as zeros, never kept as runs.
  check("padded heads", [] {
    Tensor qkv = copy_operand(DType::Float32, {30, 3, 48}, 21);
    Tensor padded = qkv.pad({{1, 1}, {0, 0}, {0, 0}});
    Tensor q = heads_of(padded, 0, 2), k = heads_of(padded, 1, 2);
    return q.matmul(k.permute({0, 2, 1}));
  });
  // Rows of 15 over a transposed (10, 6) view: each crosses a carry of the view below.
  check("rows across a carry", [] {
    Tensor t = copy_operand(DType::Float64, {6, 10}, 31).permute({1, 0}).reshape({4, 15});
    return t.matmul(copy_operand(DType::Float64, {15, 300}, 32));
  });
}

TEST(CpuBackend, ElementwiseViewRuns) {
  for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::Int32, DType::UInt8})
    for (Round r : {Round::NearestEven, Round::Up}) {
      if (!is_float(d) && r != Round::NearestEven) continue;
      const std::string tag = std::string(dtype_name(d)) + " " + std::string(round_name(r));
      const int64_t before = cpu::elementwise_view_runs_hits();
      const int runs = g_runs;
      check("scaled query, values at a stride " + tag, [&] {
        Tensor qkv = random_bits_tensor({20, 3, 48}, d, 40 + static_cast<int>(r));
        Tensor q = heads_of(qkv, 0, 2), v = heads_of(qkv, 2, 2).permute({0, 2, 1});  // rows along seq
        RoundingScope scope(r);
        return q.mul(Tensor::full({}, 2, d)).permute({0, 2, 1}).add(v);
      });
      check("heads joined plus a residual " + tag, [&] {
        Tensor o = random_bits_tensor({6, 32, 8}, d, 50).permute({1, 0, 2}).reshape({32 * 3, 16});
        RoundingScope scope(r);
        return o.add(random_bits_tensor({32 * 3, 16}, d, 51));
      });
      // Each run after a graph's first finds its leaves' runs (two in the first case, one in
      // the second).
      EXPECT_GE(cpu::elementwise_view_runs_hits() - before, g_runs - runs - 2) << tag << ": a run did not find its runs";
    }
  check("padded heads, scaled", [] {
    Tensor padded = copy_operand(DType::Float32, {30, 3, 48}, 61).pad({{1, 1}, {0, 0}, {0, 0}});
    return heads_of(padded, 0, 2).mul(Tensor::full({}, 0.5, DType::Float32));
  });
  check("rows across a carry, negated", [] {
    return copy_operand(DType::Float64, {6, 10}, 62).permute({1, 0}).reshape({4, 15}).neg();
  });
}

}  // namespace
}  // namespace maroon::test
