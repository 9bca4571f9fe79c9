// A product's graph built node by node (Tensor::dot's common case). The composition in
// linalg.cpp (reshape, transpose, x * w broadcast, sum(-1), cast) wraps each of its eight
// intermediate nodes in a Tensor: a TensorState block registered under the autograd registry's
// mutex, pruned later, and the checks and shape copies of each public op. Nothing outside dot()
// ever sees those intermediates (no handle on them survives the call, so backward() cannot reach
// them), so here the same nodes are made directly: the same ops, dtypes, shapes, arguments and
// rounding modes, the same sources, in the same order. The graph is the same, so every plan,
// kernel and bit is (tests/cpu/direct_graph_test.cpp compares the two graphs node by node).
#include "api/dot_graph.h"

#include <atomic>

#include "core/graph.h"
#include "core/ops.h"

namespace maroon::api {

namespace {

std::atomic<uint64_t> g_direct{0};

// prim::reshape's node for a shape of the same size (checked by the caller): none when the
// shape is the node's own. Shapes are taken by value and moved: each is a heap block.
NodePtr reshape_node(NodePtr x, Shape s) {
  if (s == x->shape) return x;
  Arg arg;
  arg.ints = s;
  const DType d = x->dtype;
  return make_node(Op::RESHAPE, d, std::move(s), {std::move(x)}, std::move(arg));
}

// prim::expand's node (the shapes broadcast: checked by the caller): none when nothing stretches.
NodePtr expand_node(NodePtr x, const Shape& s) {
  if (s == x->shape) return x;
  Arg arg;
  arg.ints = s;
  const DType d = x->dtype;
  return make_node(Op::EXPAND, d, s, {std::move(x)}, std::move(arg));
}

// prim::broadcast_to: same rank, an expand; fewer axes, ones in front, then the expand.
NodePtr broadcast_node(NodePtr x, const Shape& s) {
  if (x->shape == s) return x;
  if (x->shape.size() == s.size()) return expand_node(std::move(x), s);
  Shape padded;
  padded.reserve(s.size());
  padded.assign(s.size() - x->shape.size(), 1);
  padded.insert(padded.end(), x->shape.begin(), x->shape.end());
  return expand_node(reshape_node(std::move(x), std::move(padded)), s);
}

// Tensor::transpose(-1, -2) of a node of rank >= 2 (prim::permute's node).
NodePtr swap_last_two(NodePtr x) {
  const size_t r = x->shape.size();
  Arg arg;
  arg.ints.resize(r);
  for (size_t i = 0; i < r; ++i) arg.ints[i] = static_cast<int64_t>(i);
  std::swap(arg.ints[r - 1], arg.ints[r - 2]);
  Shape out = x->shape;
  std::swap(out[r - 1], out[r - 2]);
  const DType d = x->dtype;
  return make_node(Op::PERMUTE, d, std::move(out), {std::move(x)}, std::move(arg));
}

// broadcast_shapes for two shapes (view.h's takes a list: a heap block of its own).
std::optional<Shape> broadcast_two(const Shape& a, const Shape& b) {
  const Shape& longer = a.size() >= b.size() ? a : b;
  const Shape& shorter = a.size() >= b.size() ? b : a;
  Shape out = longer;
  const size_t off = longer.size() - shorter.size();
  for (size_t i = 0; i < shorter.size(); ++i) {
    const int64_t l = longer[off + i], s = shorter[i];
    if (l == s || s == 1) continue;
    if (l != 1) return std::nullopt;
    out[off + i] = s;
  }
  return out;
}

}  // namespace

bool dot_direct_applies(DType x, DType w, std::optional<DType> dtype) {
  // One dtype throughout: no cast node, the sum accumulates in it and ends in it.
  return x == w && (!dtype || *dtype == x) && sum_acc_dtype(x) == x && op_accepts(Op::MUL, x);
}

std::optional<Tensor> dot_direct(const Tensor& x, const Tensor& w, Shape& xs, Shape& ws, bool w_swap) {
  Shape wt = ws;  // w's shape once its last two axes are swapped
  if (w_swap) std::swap(wt[wt.size() - 1], wt[wt.size() - 2]);
  std::optional<Shape> s = broadcast_two(xs, wt);
  if (!s) return std::nullopt;  // the composition throws the broadcast's error
  NodePtr a = reshape_node(x.node(), std::move(xs));
  NodePtr b = reshape_node(w.node(), std::move(ws));
  if (w_swap) b = swap_last_two(std::move(b));
  a = broadcast_node(std::move(a), *s);
  b = broadcast_node(std::move(b), *s);
  const DType d = a->dtype;
  // sum(-1): REDUCE over the last axis, then the reshape that drops it.
  Shape kept = *s;
  kept.back() = 1;
  Shape out(s->begin(), s->end() - 1);
  NodePtr prod = make_node(Op::MUL, d, std::move(*s), {std::move(a), std::move(b)});
  Arg arg;
  arg.reduce_op = ReduceOp::ADD;
  arg.ints = {static_cast<int64_t>(kept.size()) - 1};
  NodePtr r = make_node(Op::REDUCE, d, std::move(kept), {std::move(prod)}, std::move(arg));
  g_direct.fetch_add(1, std::memory_order_relaxed);
  return Tensor(reshape_node(std::move(r), std::move(out)));
}

uint64_t dot_direct_graphs() { return g_direct.load(std::memory_order_relaxed); }

}  // namespace maroon::api
