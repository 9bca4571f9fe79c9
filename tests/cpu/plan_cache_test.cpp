// Matmul layouts kept between calls (cpu/matmul_layouts.h): a product that finds its layout
// stored gives the bits of one that builds it afresh and of the reference, and a product that
// differs in anything the layout depends on (shape, reduced axes, strides, offsets) never finds
// another's. If the stored key missed a field, a variant below would reuse the base's offsets and
// its bits would differ from the reference's.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "backend_settings.h"
#include "cpu/matmul_kept.h"
#include "cpu/matmul_layouts.h"
#include "maroon/backend.h"
#include "util.h"

namespace maroon::test {
namespace {

// x[M,K] @ y[K,N] as the Tensor API writes it.
Tensor layout_matmul(const Tensor& x, const Tensor& y) {
  int64_t M = x.shape()[0], K = x.shape()[1], N = y.shape()[1];
  return prim::mul(x.reshape({M, K, 1}).expand({M, K, N}), y.reshape({1, K, N}).expand({M, K, N}))
      .reduce(ReduceOp::ADD, {1})
      .reshape({M, N});
}

struct LayoutVariant {
  std::string what;
  bool same_layout;  // whether the base's stored layout is the right one for it
  std::function<Tensor()> build;
};

// A base product and variants of it, each differing from it in one thing.
std::vector<LayoutVariant> layout_variants(DType d) {
  auto data = [d](uint64_t seed, int64_t rows, int64_t cols) {
    Gen g(seed);
    std::vector<uint64_t> v(static_cast<size_t>(rows * cols));
    for (auto& x : v) x = encode(fmt(d), (g.next() % 2049) / 1024.0 - 1);
    return tensor_of_bits(v, {rows, cols}, d);
  };
  DType other = d == DType::Float32 ? DType::Float64 : DType::Float32;
  return {
      {"base 40x48x36", true, [=] { return layout_matmul(data(1, 40, 48), data(2, 48, 36)); }},
      {"other data", true, [=] { return layout_matmul(data(3, 40, 48), data(4, 48, 36)); }},
      {"rounding up", true, [=] { RoundingScope r(Round::Up); return layout_matmul(data(1, 40, 48), data(2, 48, 36)); }},
      {"other dtype", true, [=] {
         return layout_matmul(data(1, 40, 48).cast(other).realize(), data(2, 48, 36).cast(other).realize());
       }},
      {"more rows", false, [=] { return layout_matmul(data(1, 41, 48), data(2, 48, 36)); }},
      {"longer k", false, [=] { return layout_matmul(data(1, 40, 49), data(2, 49, 36)); }},
      {"more columns", false, [=] { return layout_matmul(data(1, 40, 48), data(2, 48, 37)); }},
      {"x transposed", false, [=] { return layout_matmul(data(1, 48, 40).permute({1, 0}), data(2, 48, 36)); }},
      {"y transposed", false, [=] { return layout_matmul(data(1, 40, 48), data(2, 36, 48).permute({1, 0})); }},
      {"x at an offset", false, [=] { return layout_matmul(data(1, 41, 48).shrink({{1, 41}, {0, 48}}), data(2, 48, 36)); }},
      {"y at an offset", false, [=] { return layout_matmul(data(1, 40, 48), data(2, 48, 38).shrink({{0, 48}, {2, 38}})); }},
      {"x row stride", false, [=] { return layout_matmul(data(1, 40, 50).shrink({{0, 40}, {0, 48}}), data(2, 48, 36)); }},
      {"reduced over the last axis", false, [=] {
         // The base's product shape [40, 48, 36], summed over its last axis: x @ y^T.
         Tensor x = data(1, 40, 36), y = data(2, 48, 36);
         return prim::mul(x.reshape({40, 1, 36}).expand({40, 48, 36}), y.reshape({1, 48, 36}).expand({40, 48, 36}))
             .reduce(ReduceOp::ADD, {2});
       }},
  };
}

std::vector<uint8_t> bits_on(Backend b, const std::function<Tensor()>& build) {
  BackendSettings keep;
  set_backend(b);
  cpu::clear_kept_matmuls();  // a kept plan (matmul_kept.h) would answer before the layout store
  return build().bytes();
}

TEST(CpuBackend, StoredMatmulLayoutGivesTheFreshBits) {
  for (DType d : {DType::Float32, DType::Float64})
    for (const LayoutVariant& v : layout_variants(d)) {
      const std::vector<uint8_t> want = bits_on(Backend::Ref, v.build);
      cpu::clear_matmul_layouts();
      const std::vector<uint8_t> fresh = bits_on(Backend::Cpu, v.build);
      ASSERT_EQ(cpu::matmul_layout_hits(), 0) << v.what;
      const std::vector<uint8_t> stored = bits_on(Backend::Cpu, v.build);
      EXPECT_EQ(cpu::matmul_layout_hits(), 1) << v.what << ": the second run found its layout";
      EXPECT_EQ(fresh, want) << v.what;
      EXPECT_EQ(stored, fresh) << v.what;
    }
}

TEST(CpuBackend, MatmulLayoutIsNeverReusedAcrossAChangedField) {
  for (DType d : {DType::Float32, DType::Float64}) {
    const std::vector<LayoutVariant> vs = layout_variants(d);
    for (const LayoutVariant& v : vs) {
      const std::vector<uint8_t> want = bits_on(Backend::Ref, v.build);
      cpu::clear_matmul_layouts();
      bits_on(Backend::Cpu, vs[0].build);  // the base's layout stored
      EXPECT_EQ(bits_on(Backend::Cpu, v.build), want) << v.what;
      EXPECT_EQ(cpu::matmul_layout_hits(), v.same_layout ? 1 : 0) << v.what;
    }
    // All of them in turn with every layout stored, twice: each still the reference's bits.
    for (int round = 0; round < 2; ++round)
      for (const LayoutVariant& v : vs) EXPECT_EQ(bits_on(Backend::Cpu, v.build), bits_on(Backend::Ref, v.build)) << v.what;
  }
}

// A layout of more offsets than the small layouts' bound (a convolution's: every output position
// in rowA and rowC) is kept as well, and a product that differs from it in a stride never finds it.
TEST(CpuBackend, LargeMatmulLayoutIsStoredAndGivesTheFreshBits) {
  auto data = [](uint64_t seed, int64_t rows, int64_t cols) {
    Gen g(seed);
    std::vector<uint64_t> v(static_cast<size_t>(rows * cols));
    for (auto& x : v) x = encode(fmt(DType::Float32), (g.next() % 2049) / 1024.0 - 1);
    return tensor_of_bits(v, {rows, cols}, DType::Float32);
  };
  const std::function<Tensor()> base = [&] { return layout_matmul(data(1, 20000, 5), data(2, 5, 8)); };
  const std::function<Tensor()> strided = [&] {
    return layout_matmul(data(1, 20000, 6).shrink({{0, 20000}, {0, 5}}), data(2, 5, 8));
  };
  for (const auto* build : {&base, &strided}) {
    const std::vector<uint8_t> want = bits_on(Backend::Ref, *build);
    cpu::clear_matmul_layouts();
    const std::vector<uint8_t> fresh = bits_on(Backend::Cpu, *build);
    ASSERT_EQ(cpu::matmul_layout_hits(), 0);
    EXPECT_EQ(bits_on(Backend::Cpu, *build), fresh);
    EXPECT_EQ(cpu::matmul_layout_hits(), 1) << "the second run found its 40,000-offset layout";
    EXPECT_EQ(fresh, want);
  }
  cpu::clear_matmul_layouts();
  bits_on(Backend::Cpu, base);
  EXPECT_EQ(bits_on(Backend::Cpu, strided), bits_on(Backend::Ref, strided));
  EXPECT_EQ(cpu::matmul_layout_hits(), 0) << "another row stride is another layout";
}

}  // namespace
}  // namespace maroon::test
