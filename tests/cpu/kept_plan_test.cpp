// Plans kept between calls (cpu::plan, src/cpu/plan_key.h): a graph built again with the same
// structure takes the kept decisions, which are exactly plan_fresh()'s for it, and a graph that
// differs in anything the decisions read (an op, a shape, a dtype, a movement op, which leaves
// slots share, a handle held on an inner node) never finds another's plan. If the key missed a
// field, a variant below would find the base's plan (the hit count says so) and, for the held
// handle, take the base's decision to fuse the node instead of materializing it.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "core/graph.h"
#include "cpu/cpu.h"
#include "harness.h"

namespace maroon::test {
namespace {

// A graph, and the handles its builder keeps on inner nodes (a tensor the caller still holds).
struct Built {
  Tensor root;
  std::vector<Tensor> held;
};

struct PlanVariant {
  std::string what;
  bool same_plan;  // whether the base's kept plan is the one for it
  std::function<Built()> build;
};

Tensor data(DType d, const Shape& s, uint64_t seed) { return near_one_tensor(d, s, seed); }

// The 64x64 product from Python's `a @ b` (tinygrad's dot: eight nodes) and variants of it.
std::vector<PlanVariant> product_variants() {
  const DType f = DType::Float32;
  return {
      {"base 64x64 product", true, [=] { return Built{data(f, {64, 64}, 1).matmul(data(f, {64, 64}, 2)), {}}; }},
      {"other data", true, [=] { return Built{data(f, {64, 64}, 3).matmul(data(f, {64, 64}, 4)), {}}; }},
      {"more rows", false, [=] { return Built{data(f, {65, 64}, 1).matmul(data(f, {64, 64}, 2)), {}}; }},
      {"float64", false, [=] {
         return Built{data(DType::Float64, {64, 64}, 1).matmul(data(DType::Float64, {64, 64}, 2)), {}};
       }},
      {"a transposed in the graph", false, [=] { return Built{data(f, {64, 64}, 1).transpose(0, 1).matmul(data(f, {64, 64}, 2)), {}}; }},
      {"a read through a realized view", false, [=] {
         Tensor at = data(f, {64, 64}, 1).transpose(0, 1);
         at.realize();
         return Built{at.matmul(data(f, {64, 64}, 2)), {}};
       }},
      {"one leaf on both sides", false, [=] {
         Tensor a = data(f, {64, 64}, 1);
         return Built{a.matmul(a), {}};
       }},
      {"rounding up", false, [=] {
         RoundingScope r(Round::Up);
         return Built{data(f, {64, 64}, 1).matmul(data(f, {64, 64}, 2)), {}};
       }},
      {"the product held", false, [=] {
         Tensor a = data(f, {64, 64}, 1), b = data(f, {64, 64}, 2);
         Tensor p = a.reshape({64, 64, 1}) * b.reshape({1, 64, 64});
         return Built{p.sum(1), {p}};
       }},
  };
}

// The small op from Python, ((a + b) * a).sum() on 16 floats, and variants of it.
std::vector<PlanVariant> small_op_variants() {
  const DType f = DType::Float32;
  return {
      {"base small op", true, [=] { Tensor a = data(f, {16}, 1); return Built{((a + data(f, {16}, 2)) * a).sum(), {}}; }},
      {"other data", true, [=] { Tensor a = data(f, {16}, 5); return Built{((a + data(f, {16}, 6)) * a).sum(), {}}; }},
      {"mul for add", false, [=] { Tensor a = data(f, {16}, 1); return Built{((a * data(f, {16}, 2)) * a).sum(), {}}; }},
      {"sub for add", false, [=] { Tensor a = data(f, {16}, 1); return Built{((a - data(f, {16}, 2)) * a).sum(), {}}; }},
      {"17 elements", false, [=] { Tensor a = data(f, {17}, 1); return Built{((a + data(f, {17}, 2)) * a).sum(), {}}; }},
      {"max for sum", false, [=] { Tensor a = data(f, {16}, 1); return Built{((a + data(f, {16}, 2)) * a).max(), {}}; }},
      {"b for the second a", false, [=] {
         Tensor a = data(f, {16}, 1), b = data(f, {16}, 2);
         return Built{((a + b) * b).sum(), {}};
       }},
      {"a + b held", false, [=] {
         Tensor a = data(f, {16}, 1);
         Tensor s = a + data(f, {16}, 2);
         return Built{(s * a).sum(), {s}};
       }},
  };
}

// Graphs that differ only in which leaf a slot reads, every leaf with the same handle count:
// the leaves' numbering is all that tells them apart.
std::vector<PlanVariant> leaf_variants() {
  const DType f = DType::Float32;
  return {
      {"(a + b) * a, b held", true, [=] {
         Tensor a = data(f, {16}, 1), b = data(f, {16}, 2);
         return Built{((a + b) * a).sum(), {b}};
       }},
      {"(a + b) * b, a held", false, [=] {
         Tensor a = data(f, {16}, 1), b = data(f, {16}, 2);
         return Built{((a + b) * b).sum(), {a}};
       }},
  };
}

// The positions in `order` of the nodes whose kernels plan p runs.
std::vector<size_t> kernel_steps(const std::vector<Node*>& order, const cpu::Plan& p) {
  std::vector<size_t> out;
  for (Node* k : p.kernels()) out.push_back(static_cast<size_t>(std::find(order.begin(), order.end(), k) - order.begin()));
  return out;
}

void check_variants(const std::vector<PlanVariant>& vs) {
  BackendSettings keep;
  set_backend(Backend::Cpu);
  for (const PlanVariant& v : vs) {
    cpu::set_plan_cache(true);  // forgets every kept plan
    {
      Built base = vs[0].build();
      cpu::plan(schedule(base.root.node()));  // the base's plan kept
    }
    Built b = v.build();
    const std::vector<Node*> order = schedule(b.root.node());
    const int64_t before = cpu::plan_cache_hits();
    const std::vector<size_t> got = kernel_steps(order, cpu::plan(order));
    EXPECT_EQ(cpu::plan_cache_hits() - before, v.same_plan ? 1 : 0) << v.what;
    EXPECT_EQ(got, kernel_steps(order, cpu::plan_fresh(order))) << v.what;
    // Its own plan, kept by the call above, the second time.
    EXPECT_EQ(kernel_steps(order, cpu::plan(order)), got) << v.what;
    EXPECT_EQ(cpu::plan_cache_hits() - before, v.same_plan ? 2 : 1) << v.what;
  }
}

TEST(CpuBackend, KeptPlanOnlyForTheSameGraph) {
  check_variants(product_variants());
  check_variants(small_op_variants());
  check_variants(leaf_variants());
}

// Every variant against the reference on every target and 1, 2, 3 threads, each CPU run taking
// a kept plan (the first CPU run, outside check(), keeps it).
TEST(CpuBackend, KeptPlanGivesTheReferenceBits) {
  for (const auto& vs : {product_variants(), small_op_variants(), leaf_variants()})
    for (const PlanVariant& v : vs) {
      auto build = [&] { return v.build().root; };
      cpu::set_plan_cache(true);
      {
        BackendSettings keep;
        set_backend(Backend::Cpu);
        build().realize();
      }
      check_path(v.what, build, cpu::plan_cache_hits, "take the kept plan");
    }
}

}  // namespace
}  // namespace maroon::test
