// Matmul plans kept between calls (cpu/matmul_kept.h): a product of two realized factors planned
// again with the same inputs takes the kept plan over its own buffers, and a product that differs
// in anything the plan is a function of (a shape, the reduced axes, either factor's view, the
// dtype, the rounding mode) never finds another's. If the kept key missed a field, a variant
// below would find the base's plan (the hit count says so) and read its operands through the
// base's offsets: its bits would differ from the reference's.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "cpu/matmul_kept.h"
#include "harness.h"

namespace maroon::test {
namespace {

// x[M,K] @ y[K,N] as the Tensor API's primitives write it (the product's shape [M, K, N]).
Tensor kept_product(const Tensor& x, const Tensor& y) {
  int64_t M = x.shape()[0], K = x.shape()[1], N = y.shape()[1];
  return prim::mul(x.reshape({M, K, 1}).expand({M, K, N}), y.reshape({1, K, N}).expand({M, K, N}))
      .reduce(ReduceOp::ADD, {1})
      .reshape({M, N});
}

struct KeptVariant {
  std::string what;
  bool same_plan;  // whether the base's kept plan is the one for it
  bool kept;       // whether its own plan is kept (operands read in place)
  std::function<Tensor()> build;
};

std::vector<KeptVariant> kept_variants() {
  const DType f = DType::Float32;
  auto data = [](DType d, int64_t rows, int64_t cols, uint64_t seed) { return near_one_tensor(d, {rows, cols}, seed); };
  // A realized view: the factor's own view is what the product reads.
  auto realized = [](Tensor t) { t.realize(); return t; };
  return {
      {"base 40x48x36", true, true, [=] { return kept_product(data(f, 40, 48, 1), data(f, 48, 36, 2)); }},
      {"other data", true, true, [=] { return kept_product(data(f, 40, 48, 3), data(f, 48, 36, 4)); }},
      {"Tensor::matmul", false, true, [=] { return data(f, 40, 48, 1).matmul(data(f, 48, 36, 2)); }},
      {"float64", false, true, [=] {
         return kept_product(data(DType::Float64, 40, 48, 1), data(DType::Float64, 48, 36, 2));
       }},
      {"rounding up", false, true, [=] {
         RoundingScope r(Round::Up);
         return kept_product(data(f, 40, 48, 1), data(f, 48, 36, 2));
       }},
      {"more rows", false, true, [=] { return kept_product(data(f, 41, 48, 1), data(f, 48, 36, 2)); }},
      {"longer k", false, true, [=] { return kept_product(data(f, 40, 49, 1), data(f, 49, 36, 2)); }},
      {"more columns", false, true, [=] { return kept_product(data(f, 40, 48, 1), data(f, 48, 37, 2)); }},
      {"x transposed", false, true, [=] {
         return kept_product(realized(data(f, 48, 40, 1).permute({1, 0})), data(f, 48, 36, 2));
       }},
      {"y transposed", false, true, [=] {
         return kept_product(data(f, 40, 48, 1), realized(data(f, 36, 48, 2).permute({1, 0})));
       }},
      {"x at an offset", false, true, [=] {
         return kept_product(realized(data(f, 41, 48, 1).shrink({{1, 41}, {0, 48}})), data(f, 48, 36, 2));
       }},
      {"y at an offset", false, true, [=] {
         return kept_product(data(f, 40, 48, 1), realized(data(f, 48, 38, 2).shrink({{0, 48}, {2, 38}})));
       }},
      {"x row stride", false, true, [=] {
         return kept_product(realized(data(f, 40, 50, 1).shrink({{0, 40}, {0, 48}})), data(f, 48, 36, 2));
       }},
      {"x padded (a dense copy)", false, false, [=] {
         return kept_product(realized(data(f, 40, 46, 1).pad({{0, 0}, {1, 1}})), data(f, 48, 36, 2));
       }},
      {"reduced over the last axis", false, true, [=] {
         // The base's product shape [40, 48, 36], summed over its last axis: x @ y^T.
         Tensor x = data(f, 40, 36, 1), y = data(f, 48, 36, 2);
         return prim::mul(x.reshape({40, 1, 36}).expand({40, 48, 36}), y.reshape({1, 48, 36}).expand({40, 48, 36}))
             .reduce(ReduceOp::ADD, {2});
       }},
  };
}

std::vector<uint8_t> bits_with(Backend b, const std::function<Tensor()>& build) {
  BackendSettings keep;
  set_backend(b);
  return build().bytes();
}

TEST(CpuKeptMatmul, NeverReusedAcrossAChangedField) {
  const std::vector<KeptVariant> vs = kept_variants();
  for (const KeptVariant& v : vs) {
    const std::vector<uint8_t> want = bits_with(Backend::Ref, v.build);
    cpu::clear_kept_matmuls();
    bits_with(Backend::Cpu, vs[0].build);  // the base's plan kept
    ASSERT_EQ(cpu::kept_matmul_hits(), 0) << v.what;
    EXPECT_EQ(bits_with(Backend::Cpu, v.build), want) << v.what;
    EXPECT_EQ(cpu::kept_matmul_hits(), v.same_plan ? 1 : 0) << v.what;
    // Its own plan, kept by the run above (unless its operand is a dense copy), the second time.
    EXPECT_EQ(bits_with(Backend::Cpu, v.build), want) << v.what;
    EXPECT_EQ(cpu::kept_matmul_hits(), (v.same_plan ? 1 : 0) + (v.kept ? 1 : 0)) << v.what;
  }
  // All of them in turn with every plan kept, twice: each still the reference's bits.
  for (int round = 0; round < 2; ++round)
    for (const KeptVariant& v : vs) EXPECT_EQ(bits_with(Backend::Cpu, v.build), bits_with(Backend::Ref, v.build)) << v.what;
}

// Every kept variant against the reference on every target and 1, 2, 3 threads, each CPU run
// taking its kept plan (the first CPU run, outside check_path(), keeps it).
TEST(CpuKeptMatmul, GivesTheReferenceBits) {
  for (const KeptVariant& v : kept_variants()) {
    if (!v.kept) continue;
    cpu::clear_kept_matmuls();
    bits_with(Backend::Cpu, v.build);
    check_path(v.what, v.build, cpu::kept_matmul_hits, "take the kept matmul plan");
  }
}

}  // namespace
}  // namespace maroon::test
