// Every gradient rule of src/core/gradient.cpp against central finite differences in float64,
// on random inputs, with ties and zeros where a rule has a special case.
//
// Tolerance: with h = 1e-6 and float64, central differences of these smooth functions agree
// with the exact derivative to about 1e-9 relative; we assert |analytic - fd| <= 1e-6 *
// (1 + |fd|).
#include <functional>

#include "util.h"
#include "maroon/primitives.h"

namespace maroon {
namespace {

using apitest::f64;
using apitest::rand64;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

constexpr double kH = 1e-6;
constexpr double kTol = 1e-6;

// Loss = sum(f(xs) * w) with a fixed random weight, so every output element matters.
double loss_value(const Fn& f, const std::vector<Tensor>& xs, const Tensor& w) {
  return (f(xs) * w).sum().item();
}

// Checks d loss / d xs[k] from backward() against central differences, element by element.
void check_fd(const std::string& name, const Fn& f, std::vector<std::vector<double>> vals,
              std::vector<Shape> shapes, std::vector<bool> diff = {}, double h = kH) {
  SCOPED_TRACE(name);
  if (diff.empty()) diff.assign(vals.size(), true);
  auto build = [&](const std::vector<std::vector<double>>& v) {
    std::vector<Tensor> xs;
    for (size_t k = 0; k < v.size(); ++k) xs.push_back(f64(v[k], shapes[k]));
    return xs;
  };
  std::vector<Tensor> xs = build(vals);
  Tensor out = f(xs);
  Tensor w = rand64(out.shape(), 99, 0.5, 1.5);
  Tensor loss = (out * w).sum();
  loss.backward();
  for (size_t k = 0; k < vals.size(); ++k) {
    if (!diff[k]) continue;
    ASSERT_TRUE(xs[k].grad().has_value()) << "input " << k << " got no gradient";
    ASSERT_EQ(xs[k].grad()->shape(), xs[k].shape());
    std::vector<double> g = xs[k].grad()->tolist();
    for (size_t i = 0; i < vals[k].size(); ++i) {
      auto vp = vals, vm = vals;
      vp[k][i] += h;
      vm[k][i] -= h;
      double fd = (loss_value(f, build(vp), w) - loss_value(f, build(vm), w)) / (2 * h);
      EXPECT_NEAR(g[i], fd, kTol * (1 + std::fabs(fd))) << "input " << k << " element " << i;
    }
  }
}

std::vector<double> rnd(size_t n, uint32_t seed, double lo = -2, double hi = 2) {
  return apitest::uniform_values(n, lo, hi, seed);
}

TEST(GradientFD, UnaryPrimitives) {
  check_fd("EXP2", [](auto& x) { return x[0].exp2(); }, {rnd(6, 1)}, {{2, 3}});
  check_fd("LOG2", [](auto& x) { return x[0].log2(); }, {rnd(6, 2, 0.2, 3)}, {{2, 3}});
  check_fd("SIN", [](auto& x) { return x[0].sin(); }, {rnd(6, 3, -5, 5)}, {{6}});
  check_fd("SQRT", [](auto& x) { return x[0].sqrt(); }, {rnd(6, 4, 0.1, 4)}, {{3, 2}});
  check_fd("RECIPROCAL", [](auto& x) { return x[0].reciprocal(); }, {rnd(6, 5, 0.3, 3)}, {{6}});
  // Through float32: inputs and step are multiples of 2^-10, so x +- h stays exact in float32.
  std::vector<double> q{0.5, -1.25, 0.0009765625 * 37, 1.75};
  check_fd("CAST f64->f32->f64", [](auto& x) { return (x[0].cast(DType::Float32) * 3.0f).cast(DType::Float64); },
           {q}, {{4}}, {}, 0.0009765625);
}

TEST(GradientFD, BitcastAndComparisonsStopGradients) {
  // BITCAST and CMPLT/CMPNE have no gradient: only the direct path reaches x.
  Tensor x = f64({1.5, -2.0, 3.0}, {3});
  Tensor y = x.bitcast(DType::Int64).cast(DType::Float64) * 1e-20 + x + prim::cmplt(x, 0.0).cast(DType::Float64);
  std::vector<double> g = y.sum().gradient({x})[0].tolist();
  for (double v : g) EXPECT_EQ(v, 1.0);
}

TEST(GradientFD, BackwardFillsEveryFloatTensor) {
  Tensor x = f64({1.0, 2.0}, {2});
  Tensor h = x * 3.0;  // an intermediate: also gets .grad, as in tinygrad
  Tensor idx = Tensor::from_vector<int32_t>({1, 0}, {2});
  Tensor loss = (h * h).sum() + idx.cast(DType::Float64).sum();
  loss.backward();
  ASSERT_TRUE(x.grad() && h.grad());
  EXPECT_EQ(x.grad()->tolist(), (std::vector<double>{18.0, 36.0}));
  EXPECT_EQ(h.grad()->tolist(), (std::vector<double>{6.0, 12.0}));
  EXPECT_FALSE(idx.grad().has_value());  // not a float tensor
  // A second backward accumulates.
  (x * 2.0).sum().backward();
  EXPECT_EQ(x.grad()->tolist(), (std::vector<double>{20.0, 38.0}));
  EXPECT_THROW(x.sum().gradient({idx}), DTypeError);
  EXPECT_THROW(Tensor::from_vector<int32_t>({1}, {1}).sum().backward(), DTypeError);
  EXPECT_THROW(x.backward(), ShapeError);  // not a scalar
}

TEST(GradientFD, TruncIsZero) {
  // TRUNC is flat almost everywhere: its rule gives 0, as does the finite difference away
  // from integers.
  check_fd("TRUNC", [](auto& x) { return x[0].trunc(); }, {{0.3, -1.7, 2.2, 5.5}}, {{4}});
}

TEST(GradientFD, BinaryPrimitivesWithBroadcast) {
  // (2,3) op (3,): the broadcast operand's gradient is summed by the generic rule.
  check_fd("ADD", [](auto& x) { return prim::add(x[0], x[1]); }, {rnd(6, 7), rnd(3, 8)}, {{2, 3}, {3}});
  check_fd("MUL", [](auto& x) { return prim::mul(x[0], x[1]); }, {rnd(6, 9), rnd(2, 10)}, {{2, 3}, {2, 1}});
  check_fd("POW", [](auto& x) { return prim::pow(x[0], x[1]); }, {rnd(6, 11, 0.5, 2), rnd(6, 12, -2, 2)},
           {{2, 3}, {2, 3}});
  check_fd("MAX", [](auto& x) { return prim::maximum(x[0], x[1]); }, {rnd(6, 13), rnd(6, 14)}, {{6}, {6}});
  check_fd("WHERE", [](auto& x) { return prim::where(prim::cmplt(x[0], 0.0), x[0] * 3.0, x[1]); },
           {rnd(6, 15), rnd(6, 16)}, {{6}, {6}});
  check_fd("MULACC", [](auto& x) { return prim::mulacc(x[0], x[1], x[2]); }, {rnd(4, 17), rnd(4, 18), rnd(4, 19)},
           {{4}, {4}, {4}});
}

TEST(GradientFD, MaxTiesSplitHalf) {
  // At x == y the central difference of max is exactly (h - 0) / 2h = 0.5: tinygrad's split.
  check_fd("MAX ties", [](auto& x) { return prim::maximum(x[0], x[1]); }, {{1.0, -2.0, 0.5}, {1.0, -2.0, 0.25}},
           {{3}, {3}});
  // NaN: both sides get 0.
  Tensor a = f64({NAN}, {1}), b = f64({1.0}, {1});
  prim::maximum(a, b).sum().backward();
  EXPECT_EQ(a.grad()->item(), 0.0);
  EXPECT_EQ(b.grad()->item(), 0.0);
}

TEST(GradientFD, PowAtZeroBase) {
  // d/db: e*b^(e-1) (0 when e == 0); d/de: 0 at b == 0 for e >= 0, -inf for e < 0.
  check_fd("POW b=0, e>=1", [](auto& x) { return prim::pow(x[0], x[1]); }, {{0.0, 0.0}, {2.0, 3.0}}, {{2}, {2}});
  Tensor b = f64({0.0, 0.0, 0.0}, {3}), e = f64({0.0, 2.5, -1.0}, {3});
  prim::pow(b, e).sum().backward();
  std::vector<double> db = b.grad()->tolist(), de = e.grad()->tolist();
  EXPECT_EQ(db[0], 0.0);  // e == 0 -> e
  EXPECT_EQ(db[1], 0.0);  // 2.5 * 0^1.5
  EXPECT_TRUE(std::isinf(db[2]));
  EXPECT_EQ(de[0], 0.0);
  EXPECT_EQ(de[1], 0.0);
  EXPECT_TRUE(std::isinf(de[2]) && de[2] < 0);
}

TEST(GradientFD, ReduceAddAndMul) {
  check_fd("REDUCE ADD", [](auto& x) { return x[0].reduce(ReduceOp::ADD, {1}); }, {rnd(12, 20)}, {{3, 4}});
  check_fd("REDUCE MUL", [](auto& x) { return x[0].reduce(ReduceOp::MUL, {0}); }, {rnd(12, 21)}, {{3, 4}});
  // One zero in a column: its gradient is the product of the others; two zeros: all zero.
  check_fd("REDUCE MUL zeros", [](auto& x) { return x[0].reduce(ReduceOp::MUL, {1}); },
           {{0.0, 2.0, 3.0, 1.5, 0.0, 0.0, -1.0, 2.0, 0.5}}, {{3, 3}});
}

TEST(GradientFD, ReduceMaxSharesTies) {
  check_fd("REDUCE MAX distinct", [](auto& x) { return x[0].reduce(ReduceOp::MAX, {1}); }, {rnd(12, 22)},
           {{3, 4}});
  // Three tied maxima: each gets 1/3; moving all three together moves the max one for one.
  std::vector<double> v{2.0, 1.0, 2.0, 2.0, -1.0};
  Tensor x = f64(v, {5});
  x.reduce(ReduceOp::MAX, {0}).sum().backward();
  std::vector<double> g = x.grad()->tolist();
  double total = 0;
  for (int i : {0, 2, 3}) {
    EXPECT_DOUBLE_EQ(g[i], 1.0 / 3);
    total += g[i];
  }
  EXPECT_EQ(g[1], 0.0);
  EXPECT_EQ(g[4], 0.0);
  auto shifted = [&](double h) {
    std::vector<double> w = v;
    for (int i : {0, 2, 3}) w[i] += h;
    return f64(w, {5}).reduce(ReduceOp::MAX, {0}).item();
  };
  EXPECT_NEAR(total, (shifted(kH) - shifted(-kH)) / (2 * kH), kTol);
}

TEST(GradientFD, NaNCases) {
  // REDUCE MAX whose result is NaN: mask/count is 0/0, NaN (as tinygrad).
  Tensor x = f64({1.0, NAN, 2.0}, {3});
  x.reduce(ReduceOp::MAX, {0}).sum().backward();
  for (double g : x.grad()->tolist()) EXPECT_TRUE(std::isnan(g) || g == 0.0);
  // POW with a negative base: d/de is b^e ln b, NaN.
  Tensor b = f64({-2.0}, {1}), e = f64({2.0}, {1});
  prim::pow(b, e).sum().backward();
  EXPECT_TRUE(std::isnan(e.grad()->item()));
  EXPECT_NEAR(b.grad()->item(), -4.0, 1e-12);
}

TEST(GradientFD, Movement) {
  check_fd("RESHAPE", [](auto& x) { return x[0].reshape({3, 2}) * f64({1, 2, 3, 4, 5, 6}, {3, 2}); },
           {rnd(6, 23)}, {{2, 3}});
  check_fd("EXPAND", [](auto& x) { return x[0].expand({3, 4}) * rand64({3, 4}, 5); }, {rnd(4, 24)}, {{1, 4}});
  check_fd("PERMUTE", [](auto& x) { return x[0].permute({2, 0, 1}).exp2(); }, {rnd(8, 25)}, {{2, 2, 2}});
  check_fd("PAD", [](auto& x) { return x[0].pad({{1, 2}, {0, 1}}).exp2(); }, {rnd(4, 26)}, {{2, 2}});
  check_fd("SHRINK", [](auto& x) { return x[0].shrink({{1, 3}, {0, 2}}).exp2(); }, {rnd(12, 27)}, {{3, 4}});
  check_fd("FLIP", [](auto& x) { return x[0].flip({0}) * rand64({4}, 6); }, {rnd(4, 28)}, {{4}});
}

TEST(GradientFD, DetachAndContiguousBackward) {
  Tensor x = rand64({4}, 29);
  // d/dx (x * detach(x)) = detach(x): the detached factor is a constant.
  (x * x.detach()).sum().backward();
  EXPECT_EQ(x.grad()->tolist(), x.tolist());
  Tensor y = rand64({4}, 30);
  check_fd("CONTIGUOUS_BACKWARD", [](auto& x) { return x[0].contiguous_backward().exp2(); }, {y.tolist()}, {{4}});
}

TEST(GradientFD, BroadcastSumUsesAccumulatorDtype) {
  // A float16 operand broadcast to (64, 4): its gradient is summed in float32 and cast back.
  std::vector<uint16_t> h(4, 0x3c00);  // 1.0
  Tensor a = Tensor::from_vector<uint16_t>(h, {1, 4}, DType::Float16);
  Tensor b = Tensor::full({64, 4}, 1.0, DType::Float16);
  (a * b).sum().backward();
  ASSERT_EQ(a.grad()->dtype(), DType::Float16);
  for (double g : a.grad()->tolist()) EXPECT_EQ(g, 64.0);
}

TEST(GradientFD, GradientOfGradient) {
  // g(x) = d/dx sum(x^3) = 3x^2, whose own gradient is 6x.
  std::vector<double> v = rnd(5, 31);
  Fn first = [](const std::vector<Tensor>& x) {
    Tensor y = x[0] * x[0] * x[0];
    return y.sum().gradient({x[0]})[0];
  };
  check_fd("grad of grad", first, {v}, {{5}});
  Tensor x = f64(v, {5});
  Tensor g = (x * x * x).sum().gradient({x})[0];
  Tensor gg = g.sum().gradient({x})[0];
  std::vector<double> got = gg.tolist();
  for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(got[i], 6 * v[i], 1e-12);
}

TEST(GradientFD, ApiCompositions) {
  // The Tensor API's decompositions differentiate through the rules above.
  check_fd("relu", [](auto& x) { return x[0].relu(); }, {rnd(6, 40)}, {{6}});
  check_fd("sigmoid", [](auto& x) { return x[0].sigmoid(); }, {rnd(6, 41)}, {{6}});
  check_fd("tanh", [](auto& x) { return x[0].tanh(); }, {rnd(6, 42)}, {{6}});
  check_fd("gelu", [](auto& x) { return x[0].gelu(); }, {rnd(6, 43)}, {{6}});
  check_fd("exp/log", [](auto& x) { return x[0].exp() + x[0].abs().add(0.5).log(); }, {rnd(6, 44)}, {{6}});
  check_fd("softmax", [](auto& x) { return x[0].softmax(-1); }, {rnd(6, 45)}, {{2, 3}});
  check_fd("log_softmax", [](auto& x) { return x[0].log_softmax(0); }, {rnd(6, 46)}, {{2, 3}});
  check_fd("matmul", [](auto& x) { return x[0].matmul(x[1]); }, {rnd(6, 47), rnd(6, 48)}, {{2, 3}, {3, 2}});
  check_fd("var/std", [](auto& x) { return x[0].var(1) + x[0].std(0).sum(); }, {rnd(6, 49)}, {{2, 3}});
  check_fd("conv2d", [](auto& x) { return x[0].conv2d(x[1], std::nullopt, 1, {1}, {1}, {1}); },
           {rnd(16, 50), rnd(4, 51)}, {{1, 1, 4, 4}, {1, 1, 2, 2}});
  check_fd("max_pool2d", [](auto& x) { return x[0].max_pool2d(); }, {rnd(16, 52)}, {{1, 1, 4, 4}});
  check_fd("cat/stack", [](auto& x) { return x[0].cat({x[1]}, 0).exp2() + x[0].stack({x[1]}, 1).sum(); },
           {rnd(4, 53), rnd(4, 54)}, {{2, 2}, {2, 2}});
  check_fd("svd values", [](auto& x) { return std::get<1>(x[0].svd(false)); }, {rnd(6, 56)}, {{3, 2}});
  check_fd("qr", [](auto& x) { auto [q, r] = x[0].qr(); return q.sum(0) + r.sum(1); }, {rnd(9, 57)}, {{3, 3}});
  check_fd("getitem", [](auto& x) { return x[0][{Index(slice(1, std::nullopt)), Index(slice(std::nullopt, std::nullopt, -2))}].exp2(); },
           {rnd(12, 55)}, {{3, 4}});
}

}  // namespace
}  // namespace maroon
