// Products with one column (cpu/vector_product.h): depthwise conv2d (a batch per channel, a row
// per output position, k over the window) and a matrix times a vector, folded a vector of rows
// at a time. The reference's bits on every SIMD target and 1-3 threads, each CPU run checked to
// have taken the path (the fused product only where the target has an FMA instruction; elsewhere
// gemm_fused.h's software steps take it): padding, stride 2 (gathered rows), dilation, float64,
// special values, each rounding mode, rows reversed (a negative step), the vector on either side
// of the product, runs that end at the last element of the buffer (a gathered last vector), rows
// in short runs gathered a vector of rows at a time (depthwise conv2d's weight gradient); and the
// depthwise input gradient's window tensor, a product with nothing summed, folded tile by tile.
#include <gtest/gtest.h>

#include "harness.h"
#include "cpu/epilogue.h"
#include "cpu/matmul_plan.h"
#include "cpu/vector_product.h"
#include "maroon/primitives.h"
#include "maroon/round.h"

namespace maroon::test {
namespace {

int64_t runs() { return cpu::vector_product_runs(); }
const char* const kPath = "fold the product a vector of rows at a time";

struct Depthwise {
  const char* name;
  int64_t n, c, h, w, k;
  std::vector<int64_t> stride, dilation, padding;
};

const std::vector<Depthwise>& depthwise_cases() {
  static const std::vector<Depthwise> all{
      {"3x3", 2, 8, 12, 12, 3, {1}, {1}, {0}},
      {"3x3 padding 1", 2, 8, 12, 12, 3, {1}, {1}, {1}},
      {"3x3 stride 2 padding 1", 2, 8, 15, 15, 3, {2}, {1}, {1}},
      {"5x5 dilation 2, rectangular", 2, 4, 13, 21, 5, {1}, {2}, {2}},
      {"3x3 on rows longer than a vector", 1, 3, 7, 45, 3, {1}, {1}, {0, 1}},
  };
  return all;
}

// x and w near one (divided by 3 under `fused`, so products round and an FMA chain shows).
Tensor depthwise(const Depthwise& c, DType d, bool fused, bool specials, uint64_t seed) {
  Tensor x = near_one_tensor(d, {c.n, c.c, c.h, c.w}, seed, specials);
  Tensor w = near_one_tensor(d, {c.c, 1, c.k, c.k}, seed + 1);
  if (fused) {
    const Tensor three = Tensor::full({}, 3.0, d);
    x = x.div(three).realized_leaf(), w = w.div(three).realized_leaf();
  }
  const FusedScope products(fused);
  return x.conv2d(w, std::nullopt, c.c, c.stride, c.dilation, c.padding);
}

// Every target takes the default product; the fused one only where there is an FMA.
void check_case(const std::string& what, bool fused, const std::function<Tensor()>& build) {
  if (!fused) return check_path(what, build, runs, kPath);
  check_path_on(what, build, runs, kPath, {"avx2", "avx512"});
}

TEST(CpuVectorProduct, DepthwiseConv2d) {
  uint64_t seed = 1;
  for (const Depthwise& c : depthwise_cases())
    for (bool fused : {false, true}) {
      check_case(std::string(c.name) + (fused ? " fused" : ""), fused,
                 [&] { return depthwise(c, DType::Float32, fused, false, seed); });
      ++seed;
    }
  for (bool fused : {false, true}) {
    check_case(std::string("float64") + (fused ? " fused" : ""), fused,
               [&] { return depthwise(depthwise_cases()[1], DType::Float64, fused, false, 40); });
    check_case(std::string("specials") + (fused ? " fused" : ""), fused,
               [&] { return depthwise(depthwise_cases()[2], DType::Float32, fused, true, 50); });
  }
}

// The elementwise kernel reading the product (a bias, then ReLU, ONNX's Clip or a residual) as its
// epilogue, applied to each task's rows once they are final (epilogue.h,
// try_vector_product_epilogue): MobileNet's depthwise conv2d, bias and ReLU6.
TEST(CpuVectorProduct, DepthwiseEpilogues) {
  auto epi_runs = [] { return cpu::vector_epilogue_runs(); };
  const char* const path = "run the vector form with an epilogue";
  auto check_epi = [&](const std::string& what, bool fused, const std::function<Tensor()>& build) {
    if (!fused) return check_path(what, build, epi_runs, path);
    check_path_on(what, build, epi_runs, path, {"avx2", "avx512"});
  };
  uint64_t seed = 300;
  for (DType d : {DType::Float32, DType::Float64})
    // (The last: 3-wide outputs, rows in runs too short for a vector: gathered, vector_rows.)
    for (const Depthwise& c : {depthwise_cases()[1], depthwise_cases()[2], depthwise_cases()[4],
                               Depthwise{"3x3 on 5-wide images", 4, 16, 12, 5, 3, {1}, {1}, {0}}})
      for (bool fused : {false, true}) {
        const std::string tag = std::string(c.name) + " " + std::string(dtype_name(d)) + (fused ? " fused" : "");
        auto conv = [=](uint64_t s, bool specials) {
          Tensor b = near_one_tensor(d, {c.c}, s + 7, specials);
          return depthwise(c, d, fused, specials, s).add(b.reshape({1, c.c, 1, 1}));
        };
        auto k = [d](double v) { return Tensor::full({}, v, d); };
        check_epi("bias, relu " + tag, fused, [=] { return conv(seed, true).relu(); });
        check_epi("bias, relu6 " + tag, fused, [=] { return conv(seed + 1, true).maximum(k(0.0)).minimum(k(6.0)); });
        check_epi("bias, clip " + tag, fused, [=] { return conv(seed + 2, false).maximum(k(-0.25)).minimum(k(0.5)); });
        check_epi("bias, residual " + tag, fused, [=] {
          Tensor y = conv(seed + 3, false);
          return y.add(near_one_tensor(d, y.shape(), seed + 4, true));
        });
        seed += 10;
      }
}

TEST(CpuVectorProduct, EveryRoundingMode) {
  for (Round r : {Round::TowardZero, Round::Down, Round::Up})
    for (bool fused : {false, true})
      check_case(std::string("rounding ") + std::to_string(static_cast<int>(r)) + (fused ? " fused" : ""), fused, [&] {
        const RoundingScope scope(r);
        return depthwise(depthwise_cases()[1], DType::Float32, fused, false, 60);
      });
}

// A (m, k) matrix times a k vector, both orientations, the matrix's rows reversed (a negative
// step) or not: rows k apart, gathered.
TEST(CpuVectorProduct, MatrixTimesVector) {
  for (bool fused : {false, true}) {
    const std::string f = fused ? " fused" : "";
    // a (300, 40) and v (40, 1) near one, divided by 3 under `fused`.
    auto product = [fused](const std::function<Tensor(const Tensor&, const Tensor&)>& of) {
      Tensor a = near_one_tensor(DType::Float32, {300, 40}, 70);
      Tensor v = near_one_tensor(DType::Float32, {40, 1}, 71);
      if (fused) {
        const Tensor three = Tensor::full({}, 3.0, DType::Float32);
        a = a.div(three).realized_leaf(), v = v.div(three).realized_leaf();
      }
      const FusedScope products(fused);
      return of(a, v);
    };
    check_case("a @ v" + f, fused, [&] { return product([](const Tensor& a, const Tensor& v) { return a.matmul(v); }); });
    check_case("v.T @ a.T" + f, fused, [&] {
      return product([](const Tensor& a, const Tensor& v) { return v.transpose(0, 1).matmul(a.transpose(0, 1)); });
    });
    check_case("flip(a) @ v" + f, fused,
               [&] { return product([](const Tensor& a, const Tensor& v) { return a.flip({0}).matmul(v); }); });
  }
}

int64_t gathered() { return cpu::vector_product_gathered_rows(); }
const char* const kGathered = "gather its rows a vector at a time";

// Rows in runs of two (two rows of a matrix, then two of its other half) are gathered a vector of
// rows at a time; the same matrix read in order is folded along its runs.
TEST(CpuVectorProduct, ShortRunsAreGathered) {
  Tensor a = near_one_tensor(DType::Float32, {2, 200, 12}, 80);
  Tensor v = near_one_tensor(DType::Float32, {12, 1}, 81);
  check_path("rows alternating between two halves", [&] { return a.permute({1, 0, 2}).matmul(v); }, gathered,
             kGathered);
  const int64_t before = gathered();
  check_path("the same rows in order", [&] { return a.matmul(v); }, runs, kPath);
  EXPECT_EQ(gathered(), before) << "rows in one run were gathered";
}

// The weight gradient of a depthwise conv2d: per channel, each window position summed over the
// batch and the image (9 rows in runs of 3, k long), default and fused, padded or not.
TEST(CpuVectorProduct, DepthwiseWeightGradient) {
  for (bool fused : {false, true})
    for (int64_t pad : {0, 1}) {
      const std::string what = "weight gradient, padding " + std::to_string(pad) + (fused ? " fused" : "");
      auto build = [&] {
        const Depthwise c{"", 3, 4, 14, 14, 3, {1}, {1}, {pad}};
        Tensor x = near_one_tensor(DType::Float32, {c.n, c.c, c.h, c.w}, 90);
        Tensor w = near_one_tensor(DType::Float32, {c.c, 1, c.k, c.k}, 91);
        const int64_t o = c.h - 2 + 2 * pad;
        Tensor g = near_one_tensor(DType::Float32, {c.n, c.c, o, o}, 92);
        const FusedScope products(fused);
        return (x.conv2d(w, std::nullopt, c.c, c.stride, c.dilation, c.padding) * g).sum().gradient({w})[0];
      };
      if (!fused) check_path(what, build, gathered, kGathered);
      else check_path_on(what, build, gathered, kGathered, {"avx2", "avx512"});
    }
}

int64_t folds() { return cpu::matmul_fold_runs(); }
const char* const kFold = "fold the window tensor's product tile by tile";

// The input gradient of a depthwise conv2d: the window tensor is the output gradient times the
// weights with nothing summed (a MUL, or a REDUCE_MULACC over no axes), folded onto the image
// tile by tile (matmul_fold.cpp, plan_outer_product) with the channels as batch units. Its
// elements there are +0 + round(g * w) or fma(g, w, +0): special values (signed zeros among
// them) in every rounding mode show that the fold cannot tell them from the MUL's.
TEST(CpuVectorProduct, DepthwiseInputGradient) {
  for (bool fused : {false, true})
    for (const Depthwise& c : {depthwise_cases()[0], depthwise_cases()[1], depthwise_cases()[2], depthwise_cases()[3]})
      for (Round r : {Round::NearestEven, Round::TowardZero, Round::Down, Round::Up}) {
        const std::string what = std::string("input gradient, ") + c.name + ", rounding " +
                                 std::to_string(static_cast<int>(r)) + (fused ? " fused" : "");
        auto build = [&] {
          Tensor x = near_one_tensor(DType::Float32, {c.n, c.c, c.h, c.w}, 110);
          Tensor w = near_one_tensor(DType::Float32, {c.c, 1, c.k, c.k}, 111, true);
          const FusedScope products(fused);
          const RoundingScope scope(r);
          Tensor y = x.conv2d(w, std::nullopt, c.c, c.stride, c.dilation, c.padding);
          Tensor g = near_one_tensor(DType::Float32, y.shape(), 112, true);
          return (y * g).sum().gradient({x})[0];
        };
        if (!fused) check_path(what, build, folds, kFold);
        else check_path_on(what, build, folds, kFold, {"avx2", "avx512"});
      }
}

// The Vector form's sum is bounded (the kernel counts k in an int and copies k weights a task):
// a longer one is left to the generic fold.
TEST(CpuVectorProduct, SumsPastTheBoundAreNotVectorProducts) {
  cpu::Split sp;
  sp.M = 4, sp.N = 1, sp.K = cpu::kVectorMaxK;
  EXPECT_TRUE(cpu::product_takes(sp, cpu::ProductForm::Vector));
  sp.K = cpu::kVectorMaxK + 1;
  EXPECT_FALSE(cpu::product_takes(sp, cpu::ProductForm::Vector));
  sp.K = int64_t{1} << 33;  // past an int: never taken
  EXPECT_FALSE(cpu::product_takes(sp, cpu::ProductForm::Vector));
}

// A batch of dot products (one row and one column: batchnorm's sum of squares) is not a vector
// product: left to the fold.
TEST(CpuVectorProduct, DotProductsStayWithTheFold) {
  const int64_t before = runs();
  check("rows of x times rows of y", [] {
    Tensor x = near_one_tensor(DType::Float32, {64, 100}, 100);
    Tensor y = near_one_tensor(DType::Float32, {64, 100}, 101);
    return (x * y).sum({1});
  });
  EXPECT_EQ(runs(), before) << "a batch of dot products took the vector path";
}

}  // namespace
}  // namespace maroon::test
