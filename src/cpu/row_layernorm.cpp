// Layer normalization over the last axis, one kernel (cpu/row_layernorm.h). A task is
// kRowsPerTask rows; a group of rows, one per lane, has its sums folded across lanes (lane t
// reads row t's k-th term, k in order: the left folds from +0 the reductions compute, with the
// same IEEE additions); x - mean is kept for the group in L1, and the normalized row is stored
// with NaNs made canonical, as the kernels store it. Every other value is one IEEE operation of
// the graph on the same operands, so the bits are the graph's.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/row_layernorm.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "cpu/lane_ops-inl.h"  // Canonical
#include "cpu/row_common.h"    // store_canonical, the split
#include "cpu/row_fold-inl.h"  // FoldRows

HWY_BEFORE_NAMESPACE();
namespace maroon::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The scalars, in the order of LayerNormRows' `k`: k1, neg, k2, eps.
// `rows` rows of n elements from x into out; cb: Lanes * stride floats, stride >= n.
HWY_NOINLINE void LayerNormRows(const float* x, float* out, int64_t rows, int n, const float* k, const float* gamma,
                                const float* beta, float* cb, int stride) {
  const hn::ScalableTag<float> d;
  const int G = static_cast<int>(hn::Lanes(d));
  HWY_ALIGN float lane[hn::MaxLanes(d)];
  const int full = n - n % G;
  const auto add = [](auto a, auto v) { return hn::Add(a, v); };
  const auto add_square = [](auto a, auto v) { return hn::Add(a, hn::Mul(v, v)); };
  for (int64_t r0 = 0; r0 < rows; r0 += G) {
    const int g = static_cast<int>(std::min<int64_t>(G, rows - r0));
    const float* xr = x + r0 * n;
    const auto s1 = FoldRows(d, xr, n, n, g, hn::Zero(d), add);
    hn::Store(hn::Mul(hn::Mul(s1, hn::Set(d, k[0])), hn::Set(d, k[1])), d, lane);  // -mean
    for (int t = 0; t < g; ++t) {  // c = x - mean
      const float* xt = xr + static_cast<int64_t>(t) * n;
      float* ct = cb + static_cast<int64_t>(t) * stride;
      const float mt = lane[t];
      const auto vm = hn::Set(d, mt);
      for (int j = 0; j < full; j += G) hn::StoreU(hn::Add(hn::LoadU(d, xt + j), vm), d, ct + j);
      for (int j = full; j < n; ++j) ct[j] = xt[j] + mt;
    }
    const auto s2 = FoldRows(d, cb, stride, n, g, hn::Zero(d), add_square);
    const auto ve = hn::Add(hn::Mul(s2, hn::Set(d, k[2])), hn::Set(d, k[3]));
    hn::Store(hn::Div(hn::Set(d, 1.0f), hn::Sqrt(ve)), d, lane);
    for (int t = 0; t < g; ++t) {
      const float* ct = cb + static_cast<int64_t>(t) * stride;
      float* ot = out + (r0 + t) * n;
      const float rt = lane[t];
      const auto vr = hn::Set(d, rt);
      if (!gamma) {  // no scale and shift: y = c * r, its NaN made canonical
        for (int j = 0; j < full; j += G) hn::StoreU(Canonical(d, hn::Mul(hn::LoadU(d, ct + j), vr)), d, ot + j);
        for (int j = full; j < n; ++j) rows::store_canonical(ct[j] * rt, ot + j);
        continue;
      }
      for (int j = 0; j < full; j += G) {
        const auto y = hn::Mul(hn::Mul(hn::LoadU(d, ct + j), vr), hn::LoadU(d, gamma + j));
        hn::StoreU(Canonical(d, hn::Add(y, hn::LoadU(d, beta + j))), d, ot + j);
      }
      for (int j = full; j < n; ++j) {
        const float p = ct[j] * rt * gamma[j] + beta[j];  // left to right, no contraction (-ffp-contract=off)
        rows::store_canonical(p, ot + j);
      }
    }
  }
}

}  // namespace maroon::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "core/view.h"
#include "cpu/row_layernorm.h"
#include "cpu/threads.h"
#include "maroon/tensor.h"

namespace maroon::cpu {

HWY_EXPORT(LayerNormRows);

namespace {

std::atomic<int64_t> g_tasks{0};
using rows::is_f32;
using rows::kMaxLanes;
using rows::kRowsPerTask;

// A float32 node of one element realized before the kernel, broadcast by views: that node.
Node* scalar_leaf(Node* n) {
  while ((n->op == Op::RESHAPE || n->op == Op::EXPAND) && numel(n->src[0]->shape) == 1) n = n->src[0].get();
  return n->dtype == DType::Float32 && numel(n->shape) == 1 && n->realized ? n : nullptr;
}

// A float32 row of len elements realized before the kernel, reshaped to (1, ..., 1, len) and
// expanded: its flat element j is the value at every position whose last index is j.
Node* row_leaf(Node* n, int64_t len) {
  if (n->op != Op::EXPAND) return nullptr;
  while (n->op == Op::EXPAND) n = n->src[0].get();
  if (n->shape.empty() || n->shape.back() != len || numel(n->shape) != len) return nullptr;
  while (n->op == Op::RESHAPE && numel(n->src[0]->shape) == len) n = n->src[0].get();
  return n->dtype == DType::Float32 && numel(n->shape) == len && n->realized ? n : nullptr;
}

// A binary float32 node `op` whose sources are (one `first` accepts, the other), in either order.
template <class F>
bool split(const Node* n, Op op, F first, Node** a, Node** b) {
  if (n->op != op || !is_f32(n)) return false;
  for (int i = 0; i < 2; ++i) {
    if (!first(n->src[i].get())) continue;
    *a = n->src[i].get();
    *b = n->src[1 - i].get();
    return true;
  }
  return false;
}

// A REDUCE ADD over x's last axis alone, keeping it.
bool last_axis_sum(const Node* r, const Node* x) {
  if (r->op != Op::REDUCE || r->arg.reduce_op != ReduceOp::ADD || r->src[0].get() != x || !is_f32(r)) return false;
  const size_t rank = x->shape.size();
  if (rank == 0 || r->arg.ints.size() != 1 || r->arg.ints[0] != static_cast<int64_t>(rank) - 1) return false;
  Shape want = x->shape;
  want.back() = 1;
  return r->shape == want;
}

// (the non-scalar source, the scalar leaf) of a binary op with one scalar operand.
bool with_scalar(const Node* n, Op op, Node** a, Node** s) {
  Node* k = nullptr;
  if (!split(n, op, [](const Node* m) { return m->op != Op::EXPAND || numel(m->src[0]->shape) != 1; }, a, &k)) return false;
  *s = scalar_leaf(k);
  return *s != nullptr;
}

bool read_scalar(const Node* n, float* v) {
  if (!n->buffer) return false;
  const std::vector<int64_t> zeros(n->shape.size(), 0);
  const int64_t i = n->view.index(zeros.data());
  if (i < 0) return false;
  std::memcpy(v, n->buffer->bytes() + i * 4, 4);
  return true;
}

}  // namespace

bool match_row_layernorm(Node* n, const std::function<bool(const Node*, int)>& only_here, RowLayerNorm* site) {
  if (n->shape.empty()) return false;
  const int64_t len = n->shape.back();
  RowLayerNorm s;
  Node *y2 = nullptr, *be = nullptr, *y = nullptr, *ge = nullptr, *c = nullptr, *rse = nullptr;
  auto is_mul = [](const Node* m) { return m->op == Op::MUL; };
  const bool affine = n->op == Op::ADD;  // else Tensor::layernorm without a scale and shift: n is y
  if (affine) {
    if (!split(n, Op::ADD, is_mul, &y2, &be) || !(s.beta = row_leaf(be, len))) return false;
    if (!split(y2, Op::MUL, is_mul, &y, &ge) || !(s.gamma = row_leaf(ge, len))) return false;
  } else {
    y = n;
  }
  if (!split(y, Op::MUL, [](const Node* m) { return m->op == Op::ADD; }, &c, &rse) || rse->op != Op::EXPAND) return false;
  Node* rs = rse->src[0].get();
  if (rs->op != Op::RECIPROCAL || !is_f32(rs)) return false;
  Node* sq = rs->src[0].get();
  if (sq->op != Op::SQRT || !is_f32(sq)) return false;
  Node *ve = sq->src[0].get(), *var = nullptr, *s2 = nullptr, *csq = nullptr;
  if (!with_scalar(ve, Op::ADD, &var, &s.eps) || !with_scalar(var, Op::MUL, &s2, &s.k2)) return false;
  csq = s2->src.empty() ? nullptr : s2->src[0].get();
  if (!csq || csq->op != Op::MUL || !is_f32(csq) || csq->src[0].get() != c || csq->src[1].get() != c ||
      !last_axis_sum(s2, csq))
    return false;
  Node *x = nullptr, *nme = nullptr;
  if (!split(c, Op::ADD, [](const Node* m) { return m->op != Op::EXPAND; }, &x, &nme) || nme->op != Op::EXPAND)
    return false;
  Node *nm = nme->src[0].get(), *mean = nullptr, *s1 = nullptr;
  if (!with_scalar(nm, Op::MUL, &mean, &s.neg) || !with_scalar(mean, Op::MUL, &s1, &s.k1)) return false;
  if (!last_axis_sum(s1, x) || !is_f32(x) || x->shape != n->shape) return false;
  s.x = x;
  s.inner = {s1, mean, nm, nme, c, csq, s2, var, ve, sq, rs, rse};
  if (affine) s.inner.insert(s.inner.end(), {y, y2});
  for (const Node* m : s.inner)
    if (!only_here(m, m == c ? 3 : 1)) return false;
  *site = std::move(s);
  return true;
}

bool run_row_layernorm(Node& n, const RowLayerNorm& site) {
  const Node& x = *site.x;
  if (!x.buffer || !x.view.is_contiguous()) return false;
  for (const Node* r : {site.gamma, site.beta})
    if (r && (!r->buffer || !r->view.is_contiguous())) return false;
  float k[4];
  const Node* scalars[4] = {site.k1, site.neg, site.k2, site.eps};
  for (int i = 0; i < 4; ++i)
    if (!read_scalar(scalars[i], &k[i])) return false;
  const int64_t total = numel(n.shape);
  const int64_t len = n.shape.back();
  if (len <= 0 || len > (int64_t{1} << 20)) return false;
  const int64_t rows = total / len;
  const int ln = static_cast<int>(len);
  auto buf = std::make_shared<Buffer>(DType::Float32, total);
  const float* xp = reinterpret_cast<const float*>(x.buffer->bytes());
  const float* gp = site.gamma ? reinterpret_cast<const float*>(site.gamma->buffer->bytes()) : nullptr;
  const float* bp = site.beta ? reinterpret_cast<const float*>(site.beta->buffer->bytes()) : nullptr;
  float* op = reinterpret_cast<float*>(buf->bytes());
  const int64_t tasks = (rows + kRowsPerTask - 1) / kRowsPerTask;
  parallel_for(tasks, [&](int64_t task) {
    thread_local std::vector<float> cb;
    if (cb.size() < static_cast<size_t>(ln) * kMaxLanes) cb.resize(static_cast<size_t>(ln) * kMaxLanes);
    const int64_t r0 = task * kRowsPerTask;
    HWY_DYNAMIC_DISPATCH(LayerNormRows)(xp + r0 * len, op + r0 * len, std::min(kRowsPerTask, rows - r0), ln, k, gp,
                                        bp, cb.data(), ln);
    g_tasks.fetch_add(1, std::memory_order_relaxed);
  }, Round::NearestEven);
  n.buffer = std::move(buf);
  n.view.set_contiguous(n.shape);
  return true;
}

int64_t row_layernorm_tasks() { return g_tasks.load(std::memory_order_relaxed); }

}  // namespace maroon::cpu
#endif  // HWY_ONCE
