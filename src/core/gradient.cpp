// tinygrad's gradient rules (mixin/gradient.py, pm_gradient), one case per primitive, and the
// walk that applies them (compute_gradient). `ctx` is the gradient flowing into a node, `ret`
// the node itself; each rule returns one gradient (or nothing) per source.
#include "core/gradient.h"
#include "maroon/primitives.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <unordered_set>

namespace maroon {

namespace {

using Grads = std::vector<std::optional<Tensor>>;

constexpr double kLn2 = 0.6931471805599453;  // math.log(2): a weak float, rounded to the dtype

Tensor src(const Node& n, size_t i) { return Tensor(n.src[i]); }

// A REDUCE's output keeps the reduced axes as size 1, so broadcasting back is a plain expand.
Tensor expand_to(const Tensor& t, const Shape& s) { return t.expand(s); }

Grads reduce_gradient(const Tensor& ctx, const Tensor& ret, const Node& n) {
  Tensor x = src(n, 0);
  const Shape& xs = x.shape();
  const std::vector<int64_t>& axes = n.arg.ints;
  switch (n.arg.reduce_op) {
    case ReduceOp::ADD: return {expand_to(ctx, xs)};
    case ReduceOp::MAX: {
      // Tied maxima share the gradient equally: mask / count(mask).
      Tensor mask = prim::cmpeq(x, expand_to(ret, xs)).cast(ctx.dtype());
      Tensor count = mask.reduce(ReduceOp::ADD, axes);
      return {prim::mul(prim::mul(mask, expand_to(count, xs).reciprocal()), expand_to(ctx, xs))};
    }
    case ReduceOp::MUL: {
      // d(prod x)/dx_j = ret/x_j unless x_j == 0; then the product of the others if x_j is the
      // only zero, else 0.
      Tensor is_zero = prim::cmpeq(x, 0);
      Tensor safe = prim::where(is_zero, Tensor::full({}, 1, x.dtype()), x);
      Tensor zero_count = is_zero.cast(sum_acc_dtype(DType::Bool)).reduce(ReduceOp::ADD, axes);
      Tensor others = safe.reduce(ReduceOp::MUL, axes);
      Tensor at_zero =
          prim::where(expand_to(prim::cmpeq(zero_count, 1), xs), expand_to(others, xs), Tensor::full({}, 0, x.dtype()));
      Tensor elsewhere = prim::mul(expand_to(ret, xs), safe.reciprocal());
      return {prim::mul(expand_to(ctx, xs), prim::where(is_zero, at_zero, elsewhere))};
    }
  }
  return {std::nullopt};
}

// REDUCE_MULACC(a, b): out[o] = sum over the reduced axes of a[s] * b[s] (s in the broadcast
// shape). a[p] feeds every position that stretches over a's size-1 axes, so its gradient is the
// fused reduction of ctx (broadcast back over the reduced axes) with b over exactly those axes:
// a fused matmul's gradients are fused matmuls. Where neither ctx nor b varies along an axis a
// spans, the result is broadcast back to a's shape.
Grads fused_reduce_gradient(const Tensor& ctx, const Node& n) {
  Grads g;
  for (size_t i = 0; i < 2; ++i) {
    const Shape& own = n.src[i]->shape;
    const Shape& other = n.src[1 - i]->shape;
    std::vector<int64_t> axes;
    for (size_t d = 0; d < own.size(); ++d)
      if (own[d] == 1 && other[d] != 1) axes.push_back(static_cast<int64_t>(d));
    Tensor v = prim::fused_reduce(ctx, src(n, 1 - i), axes);
    g.push_back(v.shape() == own ? v : v.expand(own));
  }
  return g;
}

// GATHER(x, idx, axis): x's gradient is exactly the one-hot formulation's (docs/spec.md §15):
// on a wide shape with x's axis after idx's, ctx where idx selects the position, else +0, summed
// over idx's axis in index order in the sum accumulator dtype (as the generic rule sums an EXPAND).
Grads gather_gradient(const Tensor& ctx, const Node& n) {
  const int64_t ax = n.arg.ints[0];
  const Shape& xs = n.src[0]->shape;
  Shape at_k = ctx.shape(), at_n(ctx.ndim() + 1, 1);
  at_k.insert(at_k.begin() + ax + 1, 1);
  at_n[ax + 1] = xs[ax];
  Tensor mask = src(n, 1).reshape(at_k).eq(Tensor::arange(xs[ax]).reshape(at_n));
  Tensor v = prim::where(mask, ctx.reshape(at_k), 0);
  return Grads{v.cast(sum_acc_dtype(v.dtype())).reduce(ReduceOp::ADD, {ax}).reshape(xs).cast(v.dtype()),
               std::nullopt};
}

// The constant a node broadcasts (a CONST seen through reshapes and expands), else null.
const Node* broadcast_const(const Node* n) {
  while (n->op == Op::RESHAPE || n->op == Op::EXPAND) n = n->src[0].get();
  return n->op == Op::CONST ? n : nullptr;
}

// WHERE's condition for its gradients. ReLU is where(k < x, x, k) with one constant k (0), and
// there (k < out) equals (k < x) at every element: where k < x, out is x; elsewhere out is k,
// and k < k is false (NaN too). So the gradients compare the output, which the forward pass
// realized, and not x: a conv + bias fused into the ReLU's epilogue is then not computed again
// for the backward pass. The same bits, one matmul fewer per conv layer.
Tensor where_condition(const Node& n, const Tensor& ret) {
  const Node& c = *n.src[0];
  if (c.op != Op::CMPLT || c.src[1] != n.src[1]) return src(n, 0);
  const Node *k = broadcast_const(c.src[0].get()), *z = broadcast_const(n.src[2].get());
  if (!k || !z || k->dtype != z->dtype || k->dtype != n.dtype || k->arg.bits != z->arg.bits) return src(n, 0);
  return prim::cmplt(src(c, 0), ret);
}

Tensor neg(const Tensor& t) { return prim::mul(t, -1); }
Tensor zeros_like(const Tensor& t) { return Tensor::full({}, 0, t.dtype()).reshape(Shape(t.ndim(), 1)).expand(t.shape()); }

// One rule per op whose GRAD column (maroon/ops.def) is Grad. Returns nullopt for the ops whose
// column says None (an error if a gradient reaches them); Stop ops pass no gradient on.
std::optional<Grads> rule(const Node& n, const Tensor& ctx, const Tensor& ret) {
  switch (op_info(n.op).grad) {
    case GradRule::None: return std::nullopt;
    case GradRule::Stop: return Grads(n.src.size());
    case GradRule::Grad: break;
  }
  switch (n.op) {
    case Op::CAST: return Grads{ctx.cast(n.src[0]->dtype)};
    case Op::RECIPROCAL: return Grads{prim::mul(prim::mul(neg(ctx), ret), ret)};
    case Op::SIN: {
      Tensor x = src(n, 0);
      Tensor shifted = prim::add(Tensor::full({}, std::numbers::pi / 2, x.dtype()), neg(x));
      return Grads{prim::mul(shifted.sin(), ctx)};
    }
    case Op::LOG2:
      return Grads{prim::mul(ctx, prim::mul(src(n, 0), kLn2).reciprocal())};
    case Op::EXP2: return Grads{prim::mul(prim::mul(ret, ctx), kLn2)};
    case Op::SQRT: return Grads{prim::mul(ctx, prim::mul(ret, 2).reciprocal())};
    case Op::TRUNC: return Grads{zeros_like(ctx)};
    case Op::ADD: return Grads{ctx, ctx};
    case Op::MUL: return Grads{prim::mul(src(n, 1), ctx), prim::mul(src(n, 0), ctx)};
    case Op::POW: {
      Tensor b = src(n, 0), e = src(n, 1);
      Tensor db = prim::mul(ctx, prim::where(prim::cmpeq(e, 0), e,
                                                 prim::mul(e, prim::pow(b, prim::add(e, -1)))));
      // d/de b^e = b^e ln b; at b == 0 it is 0 for e >= 0 and -inf for e < 0.
      Tensor at_zero = prim::where(prim::cmplt(e, 0), Tensor::full({}, -INFINITY, ret.dtype()),
                                     Tensor::full({}, 0, ret.dtype()));
      Tensor de = prim::mul(ctx, prim::where(prim::cmpeq(b, 0), at_zero,
                                                 prim::mul(prim::mul(ret, b.log2()), kLn2)));
      return Grads{db, de};
    }
    case Op::MAX: {
      // Ties split the gradient 0.5/0.5; with a NaN both sides get 0.
      Tensor x = src(n, 0), y = src(n, 1);
      Tensor half = prim::mul(ctx, 0.5);
      Tensor z = zeros_like(ctx);
      Tensor tie = prim::where(prim::cmpeq(x, y), half, z);
      return Grads{prim::where(prim::cmplt(y, x), ctx, tie), prim::where(prim::cmplt(x, y), ctx, tie)};
    }
    case Op::WHERE: {
      Tensor c = where_condition(n, ret), z = zeros_like(ctx);
      return Grads{std::nullopt, prim::where(c, ctx, z), prim::where(c, z, ctx)};
    }
    case Op::MULACC:  // not emitted by the API; a*b+c differentiates as MUL then ADD
      return Grads{prim::mul(src(n, 1), ctx), prim::mul(src(n, 0), ctx), ctx};
    case Op::REDUCE: return reduce_gradient(ctx, ret, n);
    case Op::REDUCE_MULACC: return fused_reduce_gradient(ctx, n);
    case Op::GATHER: return gather_gradient(ctx, n);
    case Op::RESHAPE: return Grads{ctx.reshape(n.src[0]->shape)};
    // CONTIGUOUS_BACKWARD's ctx.contiguous() is ctx itself in this engine (realization decides
    // layout, never values). DETACH (Stop) never gets here: the walk skips it.
    case Op::CONTIGUOUS_BACKWARD: return Grads{ctx};
    case Op::EXPAND: return Grads{ctx};  // summed over the expanded axes by the generic rule
    case Op::PAD: {
      Pairs p;
      for (size_t i = 0; i < n.arg.pairs.size(); ++i)
        p.push_back({n.arg.pairs[i].first, n.arg.pairs[i].first + n.src[0]->shape[i]});
      return Grads{ctx.shrink(p)};
    }
    case Op::SHRINK: {
      Pairs p;
      for (size_t i = 0; i < n.arg.pairs.size(); ++i)
        p.push_back({n.arg.pairs[i].first, n.src[0]->shape[i] - n.arg.pairs[i].second});
      return Grads{ctx.pad(p)};
    }
    case Op::PERMUTE: {
      std::vector<int64_t> inv(n.arg.ints.size());
      for (size_t i = 0; i < inv.size(); ++i) inv[n.arg.ints[i]] = static_cast<int64_t>(i);
      return Grads{ctx.permute(inv)};
    }
    case Op::FLIP: return Grads{ctx.flip(n.arg.ints)};
    default: break;
  }
  throw std::logic_error("[gradient] maroon/ops.def gives " + std::string(op_name(n.op)) +
                         " a gradient rule (GRAD), but src/core/gradient.cpp has none");
}

}  // namespace

Tensor marker(const Tensor& t, Op op) {
  return Tensor(make_node(op, t.dtype(), t.shape(), {t.node()}));
}

std::vector<Node*> toposort_all(const NodePtr& root) {
  auto all = [](const Node*) { return true; };
  return post_order(root.get(), all, all);
}

std::unordered_map<const Node*, Tensor> compute_gradient(const Tensor& root, const Tensor& root_grad,
                                                         const std::vector<const Node*>& targets) {
  std::unordered_set<const Node*> target_set(targets.begin(), targets.end());
  std::vector<Node*> topo = toposort_all(root.node());
  // A node is on the target path when one of its sources is a target or on the path.
  std::unordered_map<const Node*, bool> on_path;
  for (Node* n : topo) {
    bool p = false;
    for (auto& s : n->src) p = p || target_set.count(s.get()) || on_path[s.get()];
    on_path[n] = p;
  }
  // Keep the owning pointers alive for the walk.
  std::unordered_map<const Node*, NodePtr> owner;
  for (Node* n : topo)
    for (auto& s : n->src) owner.emplace(s.get(), s);
  owner.emplace(root.node().get(), root.node());

  std::unordered_map<const Node*, Tensor> grads;
  grads.emplace(root.node().get(), root_grad);
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    Node* n = *it;
    if (!on_path[n] || n->op == Op::DETACH) continue;  // gradients stop at DETACH
    auto g = grads.find(n);
    if (g == grads.end()) continue;
    Tensor ctx = g->second;
    Tensor ret(owner.at(n));
    std::optional<Grads> lg = rule(*n, ctx, ret);
    if (!lg)
      throw DTypeError("[gradient] no gradient rule for " + std::string(op_name(n->op)) + " (" +
                       std::string(dtype_name(n->dtype)) + ", shape " + shape_str(n->shape) + ")");
    for (size_t i = 0; i < n->src.size(); ++i) {
      if (!(*lg)[i]) continue;
      Tensor v = *(*lg)[i];
      const Node* k = n->src[i].get();
      if (v.shape() != k->shape) {
        // The one generic rule: a gradient wider than its source is summed over the broadcast
        // axes, in the sum accumulator dtype.
        std::vector<int64_t> axes;
        for (size_t d = 0; d < k->shape.size(); ++d)
          if (k->shape[d] != v.shape()[d]) axes.push_back(static_cast<int64_t>(d));
        v = v.cast(sum_acc_dtype(v.dtype())).reduce(ReduceOp::ADD, axes).reshape(k->shape).cast(v.dtype());
      }
      auto e = grads.find(k);
      if (e != grads.end()) e->second = prim::add(e->second, v);
      else grads.emplace(k, v);
    }
  }
  return grads;
}

}  // namespace maroon
