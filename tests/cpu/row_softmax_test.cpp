// Softmax over the last axis as one kernel (src/cpu/row_softmax.cpp): each row's maximum,
// exponentials, sum and products while the row is in L1, against the reference executor on every
// SIMD target and 1-3 threads (harness.h), and each run checked to take the kernel.
#include <gtest/gtest.h>

#include "cpu/row_softmax.h"
#include "harness.h"
#include <limits>

#include "maroon/primitives.h"

namespace maroon::test {
namespace {

int64_t softmax_tasks() { return cpu::row_softmax_tasks(); }

// Rows of 64 (attention's scores), 100 and 7 (a tail past the last whole vector, folded by
// gathers), 2 and 16; row counts that leave a partial group of lanes and a partial task; values
// near one with NaN, infinities, signed zeros and subnormals (one in eight), random bits (huge
// and tiny magnitudes: exp2's overflow, underflow and fallback lanes), scores scaled by 40 (most
// terms underflow to subnormals or zero), rows all equal or all -inf, and scores computed in the
// same graph (a matmul, as attention's scores are).
TEST(CpuBackend, RowSoftmaxOneKernel) {
  const int runs_before = g_runs;
  int cases = 0;
  const Shape shapes[] = {{6, 9, 64}, {3, 5, 100}, {37, 7}, {5, 2}, {70, 16}, {2, 33, 64}};
  for (const Shape& s : shapes) {
    const uint64_t seed = 1700 + static_cast<uint64_t>(cases);
    check_path("softmax near one " + shape_str(s), [&] {
      return near_one_tensor(DType::Float32, s, seed, true).softmax(-1);
    }, softmax_tasks, "run the row softmax");
    check_path("softmax random bits " + shape_str(s), [&] {
      return random_bits_tensor(s, DType::Float32, seed + 1).softmax(-1);
    }, softmax_tasks, "run the row softmax");
    check_path("softmax scaled " + shape_str(s), [&] {
      Tensor x = near_one_tensor(DType::Float32, s, seed + 2) * 40.0;
      return x.realize().softmax(-1);
    }, softmax_tasks, "run the row softmax");
    check_path("softmax of a matmul " + shape_str(s), [&] {
      Shape as = s;
      as.back() = 16;
      Tensor a = near_one_tensor(DType::Float32, as, seed + 3, true);
      Tensor b = near_one_tensor(DType::Float32, {16, s.back()}, seed + 4);
      return a.matmul(b).softmax(-1);
    }, softmax_tasks, "run the row softmax");
    cases += 4;
  }
  check_path("softmax of equal rows and -inf rows", [&] {
    Tensor x = near_one_tensor(DType::Float32, {8, 64}, 1790);
    Tensor same = Tensor::full({8, 64}, 0.5, DType::Float32);
    Tensor ninf = Tensor::full({8, 64}, -std::numeric_limits<double>::infinity(), DType::Float32);
    return x.cat({same, ninf}, 0).softmax(-1);
  }, softmax_tasks, "run the row softmax");
  ++cases;
  std::printf("row softmax: %d cases, %d backend runs equal to the reference\n", cases, g_runs - runs_before);
}

// Attention from the Tensor API: the scores times their scale (and plus a mask) are read by the
// softmax's maximum and by x - max only; planned as the scores' matmul epilogue they are written
// once, so the row softmax takes the rest (plan.cpp, epilogue_instead_of_fusing).
TEST(CpuBackend, RowSoftmaxOfScaledScores) {
  const Shape qs{2, 4, 64, 32};
  auto q = [&] { return near_one_tensor(DType::Float32, qs, 1850, true); };
  auto k = [&] { return near_one_tensor(DType::Float32, qs, 1851); };
  auto v = [&] { return near_one_tensor(DType::Float32, qs, 1852); };
  check_path("softmax of scores / 8", [&] { return q().matmul(k().transpose(-1, -2)).div(8.0).softmax(-1); },
             softmax_tasks, "run the row softmax");
  check_path("attention, scores * 0.125", [&] {
    return q().matmul(k().transpose(-1, -2)).mul(0.125).softmax(-1).matmul(v());
  }, softmax_tasks, "run the row softmax");
  check_path("scaled_dot_product_attention", [&] { return q().scaled_dot_product_attention(k(), v()); },
             softmax_tasks, "run the row softmax");
  check_path("attention with an additive mask", [&] {
    Tensor mask = near_one_tensor(DType::Float32, {64, 64}, 1853, true);
    return q().matmul(k().transpose(-1, -2)).mul(0.125).add(mask).softmax(-1).matmul(v());
  }, softmax_tasks, "run the row softmax");
}

// Softmaxes the kernel must leave alone (float64, another rounding mode, an axis not last) and
// scores seen through a permute (planned for the kernel, then computed node by node because the
// rows are not contiguous): the same bits, and the kernel does not run.
TEST(CpuBackend, RowSoftmaxOtherCasesKeepTheirKernels) {
  auto none = [](const std::string& what, const std::function<Tensor()>& build) {
    const int64_t before = softmax_tasks();
    check(what, build);
    EXPECT_EQ(softmax_tasks(), before) << what << ": ran the row softmax";
  };
  none("softmax float64", [] { return near_one_tensor(DType::Float64, {6, 9, 64}, 1800, true).softmax(-1); });
  none("softmax rounding down", [] {
    Tensor x = near_one_tensor(DType::Float32, {6, 9, 64}, 1801, true);
    RoundingScope scope(Round::Down);
    return x.softmax(-1);
  });
  none("softmax over axis 1", [] { return near_one_tensor(DType::Float32, {6, 64, 9}, 1802, true).softmax(1); });
  none("softmax of permuted scores", [] {
    return near_one_tensor(DType::Float32, {9, 6, 64}, 1803, true).permute({1, 0, 2}).softmax(-1);
  });
}

}  // namespace
}  // namespace maroon::test
