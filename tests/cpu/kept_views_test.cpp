// Movement views kept with a kept plan (cpu::plan's store, src/cpu/plan.cpp's KeptPlan): once a
// plan taken from the store has run, its movement steps' views are kept with the source views
// they were computed from, and a later run copies a step's view only where its source's view is
// the same. The plan key does not hold the leaves' views, so graphs below share one key while
// their leaves are read through other views (another offset, another row stride): those steps
// must compute their views again. If the source view were not compared, x's steps would take
// the base's views, read x at the base's offset and strides, and give other bits.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "cpu/cpu.h"
#include "harness.h"

namespace maroon::test {
namespace {

struct ViewVariant {
  std::string what;
  bool same_key;   // whether it takes the base's kept plan
  int kept_views;  // how many of its movement steps take a kept view (of the product's six)
  std::function<Tensor()> build;
};

std::vector<ViewVariant> view_variants() {
  auto data = [](int64_t rows, int64_t cols, uint64_t seed) { return near_one_tensor(DType::Float32, {rows, cols}, seed); };
  // x: 40x48 read out of a wider realized tensor; which columns and how wide is its view alone.
  // Realized on the reference executor: its own realize takes no plan (the counts below are the
  // product's alone).
  auto x_of = [=](int64_t width, int64_t first, uint64_t seed) {
    Tensor t = data(40, width, seed).shrink({{0, 40}, {first, first + 48}});
    BackendSettings keep;
    set_backend(Backend::Ref);
    t.realize();
    return t;
  };
  return {
      {"base", true, 6, [=] { return x_of(50, 0, 1).matmul(data(48, 36, 2)); }},
      {"other data", true, 6, [=] { return x_of(50, 0, 3).matmul(data(48, 36, 4)); }},
      // x's reshape and expand computed again; y's three steps and the result's reshape kept.
      {"x at another offset", true, 4, [=] { return x_of(50, 2, 1).matmul(data(48, 36, 2)); }},
      {"x with another row stride", true, 4, [=] { return x_of(52, 0, 1).matmul(data(48, 36, 2)); }},
      {"rounding up", false, 0, [=] {
         RoundingScope r(Round::Up);
         return x_of(50, 0, 1).matmul(data(48, 36, 2));
       }},
      {"float64", false, 0, [=] {
         Tensor x = near_one_tensor(DType::Float64, {40, 50}, 1).shrink({{0, 40}, {0, 48}});
         {
           BackendSettings keep;
           set_backend(Backend::Ref);
           x.realize();
         }
         return x.matmul(near_one_tensor(DType::Float64, {48, 36}, 2));
       }},
      {"more columns", false, 0, [=] { return x_of(50, 0, 1).matmul(data(48, 37, 2)); }},
      {"a sum over x's rows", false, 0, [=] { return x_of(50, 0, 1).sum(0); }},
  };
}

std::vector<uint8_t> bits_by(Backend b, const std::function<Tensor()>& build) {
  BackendSettings keep;
  set_backend(b);
  return build().bytes();
}

TEST(CpuKeptViews, OnlyWhereTheSourceViewIsTheSame) {
  const std::vector<ViewVariant> vs = view_variants();
  for (const ViewVariant& v : vs) {
    const std::vector<uint8_t> want = bits_by(Backend::Ref, v.build);
    cpu::set_plan_cache(true);     // forgets every kept plan
    bits_by(Backend::Cpu, vs[0].build);  // the base's plan kept
    bits_by(Backend::Cpu, vs[0].build);  // taken from the store: its views kept
    const int64_t hits = cpu::plan_cache_hits(), views = cpu::plan_kept_views();
    EXPECT_EQ(bits_by(Backend::Cpu, v.build), want) << v.what;
    EXPECT_EQ(cpu::plan_cache_hits() - hits, v.same_key ? 1 : 0) << v.what;
    EXPECT_EQ(cpu::plan_kept_views() - views, v.kept_views) << v.what;
  }
  // All of them in turn, every plan and its views kept, twice: each still the reference's bits.
  for (int round = 0; round < 2; ++round)
    for (const ViewVariant& v : vs) EXPECT_EQ(bits_by(Backend::Cpu, v.build), bits_by(Backend::Ref, v.build)) << v.what;
}

// Every variant against the reference on every target and 1, 2, 3 threads, each CPU run after
// the first two taking kept views.
TEST(CpuKeptViews, GiveTheReferenceBits) {
  for (const ViewVariant& v : view_variants()) {
    cpu::set_plan_cache(true);
    bits_by(Backend::Cpu, v.build);
    bits_by(Backend::Cpu, v.build);
    check_path(v.what, v.build, cpu::plan_kept_views, "take kept views");
  }
}

}  // namespace
}  // namespace maroon::test
