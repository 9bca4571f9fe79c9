// REDUCE against a model written as plain loops: for every output, a left fold over the reduced
// axes in row-major index order, from the identity, one rounding per step. Arithmetic itself is
// checked against MPFR in float_mpfr_test; here the order and the identity are what is tested,
// so the model reuses the element op (sf::add etc.) but not the executor's loops.
#include <gtest/gtest.h>

#include "util.h"

namespace maroon::test {
namespace {

uint64_t step(ReduceOp op, DType d, Round r, uint64_t acc, uint64_t x) {
  if (is_float_dtype(d)) {
    sf::Format f = fmt(d);
    if (op == ReduceOp::ADD) return sf::add(f, acc, x, r);
    if (op == ReduceOp::MUL) return sf::mul(f, acc, x, r);
    return sf::max(f, acc, x);
  }
  const uint64_t m = width_mask(bitwidth(d));
  if (d == DType::Bool) return op == ReduceOp::MUL ? (acc & x) : (acc | x);
  if (op == ReduceOp::ADD) return (acc + x) & m;
  if (op == ReduceOp::MUL) return (acc * x) & m;
  if (is_unsigned(d)) return std::max(acc, x);
  const int sh = 64 - bitwidth(d);
  int64_t a = static_cast<int64_t>(acc << sh) >> sh, b = static_cast<int64_t>(x << sh) >> sh;
  return a < b ? x : acc;
}

uint64_t identity(ReduceOp op, DType d) {
  if (op == ReduceOp::ADD) return parse(d, d == DType::Bool ? "false" : "0");
  if (op == ReduceOp::MUL) return parse(d, d == DType::Bool ? "true" : "1");
  if (is_float_dtype(d)) return parse(d, "-inf");
  return parse(d, d == DType::Bool ? "false" : "min");
}

TEST(Reduce, LeftFoldInIndexOrderOverAnyAxes) {
  std::mt19937_64 rng(21);
  int cases = 0;
  for (DType d : kConcreteDTypes) {
    Gen g(100 + static_cast<int>(d));
    for (ReduceOp op : kAllReduceOps) {
      for (Round r : kAllRounds) {
        for (int trial = 0; trial < 6; ++trial) {
          Shape s;
          for (int64_t k = 1 + rng() % 3, i = 0; i < k; ++i) s.push_back(rng() % 5);
          std::vector<int64_t> axes;
          for (size_t i = 0; i < s.size(); ++i) if (rng() % 2) axes.push_back(static_cast<int64_t>(i));
          const int64_t n = numel(s);
          std::vector<uint64_t> x(n);
          for (auto& v : x) v = g.bits(d);
          Tensor out = [&] {
            RoundingScope scope(r);
            return tensor_of_bits(x, s, d).reduce(op, axes);
          }();
          Shape os = s;
          for (int64_t a : axes) os[a] = 1;
          ASSERT_EQ(out.shape(), os);
          // The model: odometers over the kept and the reduced axes.
          std::vector<uint64_t> want;
          std::vector<int64_t> o(s.size(), 0);
          const int64_t on = numel(os);
          for (int64_t oi = 0; oi < on; ++oi) {
            uint64_t acc = identity(op, d);
            Shape inner(s.size(), 1);
            for (int64_t a : axes) inner[a] = s[a];
            std::vector<int64_t> rr(s.size(), 0);
            for (int64_t ri = 0; ri < numel(inner); ++ri) {
              int64_t lin = 0;
              for (size_t i = 0; i < s.size(); ++i) lin = lin * s[i] + o[i] + rr[i];
              acc = step(op, d, r, acc, x[lin]);
              for (size_t i = s.size(); i-- > 0;) { if (++rr[i] < inner[i]) break; rr[i] = 0; }
            }
            want.push_back(acc);
            for (size_t i = os.size(); i-- > 0;) { if (++o[i] < os[i]) break; o[i] = 0; }
          }
          ASSERT_EQ(out.bits(), want) << reduce_op_name(op) << " " << dtype_name(d) << " " << shape_str(s)
                                      << " axes " << shape_str(axes) << " " << round_name(r);
          ++cases;
        }
      }
    }
  }
  EXPECT_EQ(cases, 13 * 3 * 4 * 6);
}

// The fold order is visible in float bits: these sums differ between a left fold and a
// pairwise (tree) order, and the reduction over a permuted view folds in the view's order.
TEST(Reduce, OrderIsVisibleAndFollowsTheView) {
  Tensor x = Tensor::from_vector<float>({1e8f, 1.f, -1e8f, 1.f}, {4});
  EXPECT_EQ(x.reduce(ReduceOp::ADD, {0}).to_vector<float>()[0], 1.f);
  EXPECT_EQ(x.flip({0}).reduce(ReduceOp::ADD, {0}).to_vector<float>()[0], 0.f);  // 1 - 1e8 + 1 + 1e8
  // Reducing a transposed view folds in the view's index order: column j of m.T is row j of m.
  Tensor m = Tensor::from_vector<float>({1e8f, 1.f, -1e8f, 1.f, 1.f, -1e8f, 1.f, 1e8f}, {2, 4});
  std::vector<float> t = m.permute({1, 0}).reduce(ReduceOp::ADD, {0}).to_vector<float>();
  EXPECT_EQ(t, (std::vector<float>{1.f, 0.f}));
}

}  // namespace
}  // namespace maroon::test
