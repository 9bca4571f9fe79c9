// A matmul operand padded only in its bottom view (conv2d with padding: the padded input, then
// the windows over it) is read over a copy of the padded input (cpu/matmul_plan.cpp,
// padded_base), not written out as im2col: the reference's bits on every SIMD target and 1-3
// threads, each CPU run checked to have taken the path; forward with the default and the fused
// products, padding on one side or both, stride, dilation, groups, float64, special values; the
// weight gradient (whose operand is the padded input again); conv_transpose2d (its input spread
// by the stride, then padded); and a stack that does not merge over the copy, which must keep
// the dense copy.
#include <gtest/gtest.h>

#include "harness.h"
#include "cpu/matmul_plan.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

struct Case {
  const char* name;
  int64_t n, cin, cout, h, w, k;
  std::vector<int64_t> stride, dilation, padding;
  int64_t groups = 1;
};

// x and w near one (divided by 3 under `fused`, so products round and an FMA chain shows);
// with `specials` one element in eight of x a NaN, an infinity, a signed zero or a subnormal.
Tensor conv(const Case& c, DType d, bool fused, bool specials, uint64_t seed) {
  Tensor x = near_one_tensor(d, {c.n, c.cin, c.h, c.w}, seed, specials);
  Tensor w = near_one_tensor(d, {c.cout, c.cin / c.groups, c.k, c.k}, seed + 1);
  if (fused) {
    const Tensor three = Tensor::full({}, 3.0, d);
    x = x.div(three).realized_leaf(), w = w.div(three).realized_leaf();
  }
  const FusedScope products(fused);
  return x.conv2d(w, std::nullopt, c.groups, c.stride, c.dilation, c.padding);
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all{
      {"3x3 padding 1", 2, 8, 16, 12, 12, 3, {1}, {1}, {1}},
      {"5x5 padding 2, rectangular", 2, 4, 8, 9, 16, 5, {1}, {1}, {2}},
      {"padding on one side", 2, 6, 8, 10, 11, 3, {1}, {1}, {0, 2, 1, 0}},
      {"stride 2 padding 1", 3, 8, 16, 16, 16, 3, {2}, {1}, {1}},
      {"dilation 2 padding 2", 2, 6, 8, 12, 12, 3, {1}, {2}, {2}},
      {"groups 2 padding 1", 2, 8, 16, 10, 10, 3, {1}, {1}, {1}, 2},
      {"a ResNet layer's shape", 4, 16, 16, 16, 16, 3, {1}, {1}, {1}},
      {"20 output channels (6-row tiles and their edge)", 2, 8, 20, 16, 16, 3, {1}, {1}, {1}},
      {"a 4x4 image (the narrow tile)", 1, 4, 8, 4, 4, 3, {1}, {1}, {1}},
      {"an 8-wide image (two rows a vector)", 2, 8, 16, 8, 8, 3, {1}, {1}, {1}},
  };
  return all;
}

int64_t padded() { return cpu::matmul_padded_bases(); }

TEST(CpuPaddedOperand, PaddedConv2dReadsACopyOfItsPaddedInput) {
  uint64_t seed = 1;
  for (const Case& c : cases())
    for (bool fused : {false, true}) {
      const std::string what = std::string(c.name) + (fused ? " fused" : "");
      check_path(what, [&] { return conv(c, DType::Float32, fused, false, seed); }, padded,
                 "read a copy of the padded input");
      ++seed;
    }
  check_path("float64 3x3 padding 1", [&] { return conv(cases()[0], DType::Float64, false, false, 50); }, padded,
             "read a copy of the padded input");
  // Specials in x: the copy keeps them (a NaN made the canonical one, as the product's NaN is).
  for (bool fused : {false, true})
    check_path(std::string("specials") + (fused ? " fused" : ""),
               [&] { return conv(cases()[3], DType::Float32, fused, true, 60); }, padded,
               "read a copy of the padded input");
}

// The weight gradient of a padded conv2d reads the padded input's windows as its operand.
TEST(CpuPaddedOperand, WeightGradientOfAPaddedConv2d) {
  for (bool fused : {false, true}) {
    const Case& c = cases()[0];
    check_path(std::string("weight gradient") + (fused ? " fused" : ""), [&] {
      Tensor x = near_one_tensor(DType::Float32, {c.n, c.cin, c.h, c.w}, 70);
      Tensor w = near_one_tensor(DType::Float32, {c.cout, c.cin, c.k, c.k}, 71);
      Tensor g = near_one_tensor(DType::Float32, {c.n, c.cout, c.h, c.w}, 72);
      const FusedScope products(fused);
      return (x.conv2d(w, std::nullopt, 1, c.stride, c.dilation, c.padding) * g).sum().gradient({w})[0];
    }, padded, "read a copy of the padded input");
  }
}

// conv_transpose2d: the input spread by the stride (a masked view), padded (another), then the
// windows: the copy is of the two lower views, written a view at a time by the plane copier
// (padded_levels), the windows read in place over it.
TEST(CpuPaddedOperand, ConvTransposeReadsACopyOfItsSpreadInput) {
  for (bool fused : {false, true})
    for (int64_t pad : {0, 1})
      check_path("conv_transpose2d 4x4 stride 2 padding " + std::to_string(pad) + (fused ? " fused" : ""), [&] {
        Tensor x = near_one_tensor(DType::Float32, {2, 8, 9, 9}, 90 + pad);
        Tensor w = near_one_tensor(DType::Float32, {8, 6, 4, 4}, 92 + pad);
        if (fused) {
          const Tensor three = Tensor::full({}, 3.0, DType::Float32);
          x = x.div(three).realized_leaf(), w = w.div(three).realized_leaf();
        }
        const FusedScope products(fused);
        return x.conv_transpose2d(w, std::nullopt, 1, {2}, {1}, {pad});
      }, [] { return cpu::matmul_padded_levels(); }, "write the spread input a view at a time");
}

// Where the windows do not merge into one view over the copy (a padded column broadcast, then
// re-split by a reshape), the operand keeps the dense copy, with the same bits.
TEST(CpuPaddedOperand, StacksThatDoNotMergeOverTheCopyKeepTheDenseCopy) {
  const int64_t before = padded();
  check("padded, broadcast and re-split operand", [] {
    Tensor a = near_one_tensor(DType::Float32, {60, 1}, 80).pad({{2, 2}, {0, 0}}).expand({64, 64}).reshape({32, 128});
    return a.matmul(near_one_tensor(DType::Float32, {128, 40}, 81));
  });
  EXPECT_EQ(padded(), before) << "an operand that does not merge over the copy took the padded copy";
}

}  // namespace
}  // namespace maroon::test
