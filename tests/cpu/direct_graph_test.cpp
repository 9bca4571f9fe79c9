// Graphs the API makes node by node instead of through a Tensor per intermediate: Tensor::dot's
// (src/api/dot_graph.cpp) and a reduction that drops its axes (reduce_and_drop, reduce.cpp).
// Each is the same graph as the composition of public ops it replaces, node for node (so the
// same plans, kernels and bits), and the bits are the reference executor's on every target and
// 1-3 threads, specials included.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "api/dot_graph.h"
#include "api/internal.h"
#include "core/graph.h"
#include "core/ops.h"
#include "harness.h"

namespace maroon::test {
namespace {

// dot() as Tensor::dot composes it when it does not build the nodes itself.
Tensor composed_dot(const Tensor& a, const Tensor& w, std::optional<DType> dtype = std::nullopt) {
  const int64_t dx = a.ndim(), dw = w.ndim();
  const int64_t axis_w = -std::min<int64_t>(dw, 2);
  const int64_t mid = std::min<int64_t>({dx - 1, dw - 1, 1});
  Shape xs(a.shape().begin(), a.shape().end() - 1);
  xs.insert(xs.end(), mid, 1);
  xs.push_back(a.shape().back());
  Shape ws(w.shape().begin(), w.shape().end() - std::min<int64_t>(dw, 2));
  ws.insert(ws.end(), mid, 1);
  ws.insert(ws.end(), w.shape().end() + axis_w, w.shape().end());
  Tensor x = a.reshape(xs);
  Tensor ww = w.reshape(ws).transpose(-1, axis_w);
  DType out = dtype ? *dtype : concrete(least_upper_dtype(x.dtype(), ww.dtype()));
  return (x * ww).sum(-1, false, dtype).cast(out);
}

// Both graphs walked together from the root: every node the same op, dtype, shape, rounding
// mode and argument, with as many sources, and the same realized leaves (the operands).
void expect_same_graph(const std::string& what, const Node* got, const Node* want) {
  std::vector<std::pair<const Node*, const Node*>> stack{{got, want}};
  int nodes = 0;
  while (!stack.empty()) {
    auto [g, w] = stack.back();
    stack.pop_back();
    ++nodes;
    const std::string at = what + ", node " + std::to_string(nodes) + " (" + std::string(op_name(w->op)) + ")";
    if (w->realized) {
      EXPECT_EQ(g, w) << at << ": not the same leaf";
      continue;
    }
    ASSERT_FALSE(g->realized) << at;
    ASSERT_EQ(g->op, w->op) << at;
    EXPECT_EQ(g->dtype, w->dtype) << at;
    EXPECT_EQ(g->shape, w->shape) << at;
    EXPECT_EQ(g->rnd, w->rnd) << at;
    EXPECT_EQ(g->arg.ints, w->arg.ints) << at;
    EXPECT_EQ(g->arg.pairs, w->arg.pairs) << at;
    EXPECT_EQ(g->arg.dtype, w->arg.dtype) << at;
    EXPECT_EQ(g->arg.reduce_op, w->arg.reduce_op) << at;
    EXPECT_EQ(g->arg.bits, w->arg.bits) << at;
    ASSERT_EQ(g->src.size(), w->src.size()) << at;
    for (size_t i = 0; i < w->src.size(); ++i) {
      // One handle per consumer in both: the plan key counts them.
      EXPECT_EQ(g->src[i].use_count(), w->src[i].use_count()) << at << ", source " << i;
      stack.push_back({g->src[i].get(), w->src[i].get()});
    }
  }
}

struct DotCase {
  Shape x, w;
};

std::vector<DotCase> dot_cases() {
  return {{{64, 64}, {64, 64}}, {{17, 33}, {33, 5}}, {{33}, {33, 7}}, {{9, 12}, {12}},   {{12}, {12}},
          {{2, 3, 4}, {4, 5}},  {{4, 5}, {2, 5, 3}}, {{2, 1, 3, 4}, {5, 4, 6}},          {{3, 0}, {0, 4}},
          {{0, 6}, {6, 2}},     {{1, 1}, {1, 1}}};
}

TEST(CpuDotGraph, NodesAreTheComposition) {
  for (DType d : {DType::Float32, DType::Float64, DType::Int32, DType::Int64}) {
    uint64_t seed = 1;
    for (const DotCase& c : dot_cases()) {
      Tensor x = random_bits_tensor(c.x, d, seed++), w = random_bits_tensor(c.w, d, seed++);
      const std::string what = std::string(dtype_name(d)) + " " + shape_str(c.x) + " . " + shape_str(c.w);
      const uint64_t before = api::dot_direct_graphs();
      Tensor got = x.dot(w);
      EXPECT_EQ(api::dot_direct_graphs(), before + 1) << what << ": not built directly";
      Tensor want = composed_dot(x, w);
      expect_same_graph(what, got.node().get(), want.node().get());
      Tensor got_typed = x.dot(w, d);  // an explicit dtype equal to the operands'
      expect_same_graph(what + " dtype=", got_typed.node().get(), composed_dot(x, w, d).node().get());
    }
  }
}

TEST(CpuDotGraph, OtherProductsAreComposed) {
  const uint64_t before = api::dot_direct_graphs();
  Tensor f32 = random_bits_tensor({4, 5}, DType::Float32, 1), f64 = random_bits_tensor({5, 3}, DType::Float64, 2);
  Tensor f16 = random_bits_tensor({5, 3}, DType::Float16, 3), f16b = random_bits_tensor({4, 5}, DType::Float16, 4);
  Tensor f32w = random_bits_tensor({5, 3}, DType::Float32, 5);
  Tensor i8 = random_bits_tensor({4, 5}, DType::Int8, 6), i8w = random_bits_tensor({5, 3}, DType::Int8, 7);
  expect_same_graph("float32 . float64", f32.dot(f64).node().get(), composed_dot(f32, f64).node().get());
  expect_same_graph("float16", f16b.dot(f16).node().get(), composed_dot(f16b, f16).node().get());
  expect_same_graph("int8", i8.dot(i8w).node().get(), composed_dot(i8, i8w).node().get());
  expect_same_graph("dtype=float64", f32.dot(f32w, DType::Float64).node().get(),
                    composed_dot(f32, f32w, DType::Float64).node().get());
  f32.dot(f32w, std::nullopt, true);  // fused: REDUCE_MULACC
  EXPECT_EQ(api::dot_direct_graphs(), before) << "a product needing a cast or fused was built directly";
  // Batch axes that do not broadcast: the composition's error.
  EXPECT_THROW(random_bits_tensor({2, 4, 5}, DType::Float32, 8).dot(random_bits_tensor({3, 5, 6}, DType::Float32, 9)),
               ShapeError);
}

TEST(CpuDotGraph, DirectProductsGiveTheReferenceBits) {
  struct Run {
    DType d;
    Shape x, w;
  };
  const std::vector<Run> runs = {{DType::Float32, {64, 64}, {64, 64}}, {DType::Float32, {17, 33}, {33, 5}},
                                 {DType::Float64, {2, 3, 4}, {4, 5}},  {DType::Float32, {33}, {33, 7}},
                                 {DType::Float32, {9, 12}, {12}},      {DType::Int32, {6, 7}, {7, 8}}};
  uint64_t seed = 100;
  for (const Run& r : runs) {
    const uint64_t sx = seed++, sw = seed++;
    const bool is_f = r.d == DType::Float32 || r.d == DType::Float64;
    auto make = [&](const Shape& s, uint64_t sd) {
      return is_f ? near_one_tensor(r.d, s, sd, /*specials=*/true) : random_bits_tensor(s, r.d, sd);
    };
    const std::string what = std::string(dtype_name(r.d)) + " " + shape_str(r.x) + " . " + shape_str(r.w);
    check_path(what, [&] { return make(r.x, sx).dot(make(r.w, sw)); },
               [] { return static_cast<int64_t>(api::dot_direct_graphs()); }, "build its graph directly");
  }
}

// x.reduce(op, axes).reshape(shape without them): what reduce_op composed before.
Tensor composed_reduce(const Tensor& x, ReduceOp op, const std::vector<int64_t>& axes) {
  Shape s;
  for (int64_t i = 0; i < x.ndim(); ++i)
    if (std::find(axes.begin(), axes.end(), i) == axes.end()) s.push_back(x.shape()[i]);
  return x.reduce(op, axes).reshape(s);
}

TEST(CpuReduceGraph, DroppedAxesAreTheComposition) {
  struct Case {
    Shape x;
    Axis axis;
    std::vector<int64_t> axes;  // resolved
  };
  const std::vector<Case> cases = {{{16}, Axis(), {0}},           {{4, 5}, Axis(-1), {1}},
                                   {{4, 5}, Axis(), {0, 1}},      {{2, 3, 4}, Axis({2, 0}), {0, 2}},
                                   {{2, 0, 3}, Axis(1), {1}},     {{1, 1}, Axis(0), {0}}};
  uint64_t seed = 1;
  for (const Case& c : cases) {
    Tensor x = random_bits_tensor(c.x, DType::Float32, seed++);
    const std::string what = shape_str(c.x) + " over " + shape_str(c.axes);
    const uint64_t before = api::reduce_direct_graphs();
    expect_same_graph("sum " + what, x.sum(c.axis).node().get(), composed_reduce(x, ReduceOp::ADD, c.axes).node().get());
    expect_same_graph("max " + what, x.max(c.axis).node().get(), composed_reduce(x, ReduceOp::MAX, c.axes).node().get());
    EXPECT_EQ(api::reduce_direct_graphs(), before + 2) << what << ": not built directly";
  }
  // keepdim keeps the REDUCE node alone, as before.
  const uint64_t before = api::reduce_direct_graphs();
  Tensor x = random_bits_tensor({3, 4}, DType::Float32, 99);
  expect_same_graph("keepdim", x.sum(1, true).node().get(), x.reduce(ReduceOp::ADD, {1}).node().get());
  EXPECT_EQ(api::reduce_direct_graphs(), before);
}

TEST(CpuReduceGraph, DroppedAxesGiveTheReferenceBits) {
  // The Python small op ((a + b) * a).sum(), a row sum and a max over two axes, specials included.
  auto runs = [] { return static_cast<int64_t>(api::reduce_direct_graphs()); };
  check_path("small op sum", [] {
    Tensor a = near_one_tensor(DType::Float32, {16}, 1, true), b = near_one_tensor(DType::Float32, {16}, 2, true);
    return ((a + b) * a).sum();
  }, runs, "build its graph directly");
  check_path("row sums", [] { return near_one_tensor(DType::Float64, {7, 33}, 3, true).sum(-1); }, runs,
             "build its graph directly");
  check_path("max over two axes", [] { return near_one_tensor(DType::Float32, {3, 5, 9}, 4, true).max({0, 2}); }, runs,
             "build its graph directly");
}

}  // namespace
}  // namespace maroon::test
