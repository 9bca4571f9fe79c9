// Softmax over the last axis, one kernel (cpu/row_softmax.h). A task is kRowsPerTask rows; a
// group of rows, one per lane, is folded across lanes (lane t reads row t's k-th element, k in
// order), so each row's maximum and sum are the left folds the reductions compute, with the same
// lane ops (Maximum: NaN wins, +0 over -0; IEEE addition) from the same identities (-inf, +0).
// Between them each row's exponentials are computed along the row by the same SIMD exp2
// (Exp2Span: correctly rounded, so the bits of every exp2) into a group buffer in L1, and the
// products are stored with NaNs made canonical, as the kernels store them.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/row_softmax.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <vector>

#include "cpu/exp2_lanes-inl.h"  // Exp2Span
#include "cpu/lane_ops-inl.h"    // Canonical, Maximum
#include "cpu/row_common.h"      // store_canonical, the split
#include "cpu/row_fold-inl.h"     // FoldRows

HWY_BEFORE_NAMESPACE();
namespace maroon::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// `rows` rows of n elements from x into out. tb: n + 64 floats; eb: Lanes * stride words, stride
// >= n + 64 (Exp2Span reads and writes whole vectors past n).
HWY_NOINLINE void SoftmaxRows(const float* x, float* out, int64_t rows, int n, uint32_t negb, uint32_t scaleb,
                              float* tb, uint32_t* eb, int stride) {
  const hn::ScalableTag<float> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  const int G = static_cast<int>(hn::Lanes(d));
  float neg, scale;
  std::memcpy(&neg, &negb, 4);
  std::memcpy(&scale, &scaleb, 4);
  const auto vneg = hn::Set(d, neg), vscale = hn::Set(d, scale);
  HWY_ALIGN float lane[hn::MaxLanes(d)];
  const int full = n - n % G;
#if HWY_TARGET == HWY_AVX3
  const Exp2RnData& rc = exp2_rn_data();
  ++exp2_rn_calls();
#endif
  for (int64_t r0 = 0; r0 < rows; r0 += G) {
    const int g = static_cast<int>(std::min<int64_t>(G, rows - r0));
    const float* xr = x + r0 * n;
    const auto m = FoldRows(d, xr, n, n, g, hn::Set(d, -std::numeric_limits<float>::infinity()),
                            [d](auto a, auto v) { return Maximum(d, a, v); });
    hn::Store(hn::Mul(m, vneg), d, lane);
    for (int t = 0; t < g; ++t) {  // t = (x + m * neg) * scale along the row, then exp2
      const float* xt = xr + static_cast<int64_t>(t) * n;
      const float mt = lane[t];
      const auto vm = hn::Set(d, mt);
#if HWY_TARGET == HWY_AVX3
      // The whole vectors' exp2 on registers (Exp2RnVec: correctly rounded, so the same bits),
      // the tail through tb as below.
      uint32_t* et = eb + static_cast<int64_t>(t) * stride;
      for (int j = 0; j < full; j += G)
        hn::StoreU(hn::Vec512<float>{Exp2RnVec(hn::Mul(hn::Add(hn::LoadU(d, xt + j), vm), vscale).raw, rc)}, d,
                   reinterpret_cast<float*>(et + j));
      if (full < n) {
        for (int j = full; j < n; ++j) tb[j] = (xt[j] + mt) * scale;
        Exp2Span(tb + full, et + full, n - full, Round::NearestEven);
      }
#else
      for (int j = 0; j < full; j += G) hn::StoreU(hn::Mul(hn::Add(hn::LoadU(d, xt + j), vm), vscale), d, tb + j);
      for (int j = full; j < n; ++j) tb[j] = (xt[j] + mt) * scale;
      Exp2Span(tb, eb + static_cast<int64_t>(t) * stride, n, Round::NearestEven);
#endif
    }
    const auto s = hn::BitCast(d, FoldRows(du, eb, stride, n, g, hn::Zero(du), [d, du](auto a, auto v) {
      return hn::BitCast(du, hn::Add(hn::BitCast(d, a), hn::BitCast(d, v)));
    }));
    hn::Store(hn::Div(hn::Set(d, 1.0f), s), d, lane);
    for (int t = 0; t < g; ++t) {
      const uint32_t* et = eb + static_cast<int64_t>(t) * stride;
      float* ot = out + (r0 + t) * n;
      const float rt = lane[t];
      const auto vr = hn::Set(d, rt);
      for (int j = 0; j < full; j += G) hn::StoreU(Canonical(d, hn::Mul(hn::BitCast(d, hn::LoadU(du, et + j)), vr)), d, ot + j);
      for (int j = full; j < n; ++j) {
        float e;
        std::memcpy(&e, et + j, 4);
        const float p = e * rt;
        rows::store_canonical(p, ot + j);
      }
    }
  }
}

}  // namespace maroon::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "core/view.h"
#include "cpu/row_softmax.h"
#include "cpu/threads.h"
#include "maroon/tensor.h"

namespace maroon::cpu {

HWY_EXPORT(SoftmaxRows);

namespace {

std::atomic<int64_t> g_tasks{0};
using rows::is_f32;
using rows::kMaxLanes;
using rows::kRowsPerTask;

// A float32 scalar broadcast by views of a CONST: its bits.
bool const_scalar(const Node* n, uint32_t* bits) {
  while ((n->op == Op::RESHAPE || n->op == Op::EXPAND) && numel(n->src[0]->shape) == 1) n = n->src[0].get();
  if (n->op != Op::CONST || n->dtype != DType::Float32) return false;
  *bits = static_cast<uint32_t>(n->arg.bits);
  return true;
}

// A REDUCE of `op` over x's last axis alone, keeping it.
bool last_axis_reduce(const Node* r, ReduceOp op, const Node* x) {
  if (r->op != Op::REDUCE || r->arg.reduce_op != op || r->src[0].get() != x || !is_f32(r)) return false;
  const size_t rank = x->shape.size();
  if (rank == 0 || r->arg.ints.size() != 1 || r->arg.ints[0] != static_cast<int64_t>(rank) - 1) return false;
  Shape want = x->shape;
  want.back() = 1;
  return r->shape == want;
}

// A binary node's sources as (the one `first` accepts, the other), in either order.
template <class F>
bool split(const Node* n, F first, Node** a, Node** b) {
  for (int i = 0; i < 2; ++i) {
    if (!first(n->src[i].get())) continue;
    *a = n->src[i].get();
    *b = n->src[1 - i].get();
    return true;
  }
  return false;
}

}  // namespace

bool match_row_softmax(Node* n, const std::function<bool(const Node*, int)>& only_here, RowSoftmax* site) {
  if (n->op != Op::MUL || !is_f32(n)) return false;
  Node *e = nullptr, *re = nullptr;
  auto is_exp = [](const Node* m) { return m->op == Op::EXP2 && is_f32(m); };
  if (!split(n, is_exp, &e, &re) || re->op != Op::EXPAND) return false;
  Node* r = re->src[0].get();
  if (r->op != Op::RECIPROCAL || !is_f32(r)) return false;
  Node* s = r->src[0].get();
  Node* t = e->src[0].get();
  Node *dn = nullptr, *cn = nullptr;
  uint32_t scale = 0, neg = 0;
  if (t->op != Op::MUL || !is_f32(t) || !split(t, [&](const Node* m) { return !const_scalar(m, &scale); }, &dn, &cn) ||
      !const_scalar(cn, &scale))
    return false;
  Node *x = nullptr, *nme = nullptr;
  if (dn->op != Op::ADD || !is_f32(dn) || !split(dn, [](const Node* m) { return m->op != Op::EXPAND; }, &x, &nme) ||
      nme->op != Op::EXPAND)
    return false;
  Node* nm = nme->src[0].get();
  Node *dm = nullptr, *kn = nullptr;
  if (nm->op != Op::MUL || !is_f32(nm) || !split(nm, [&](const Node* m) { return !const_scalar(m, &neg); }, &dm, &kn) ||
      !const_scalar(kn, &neg))
    return false;
  Node* detach = dm->op == Op::DETACH ? dm : nullptr;
  Node* mx = detach ? dm->src[0].get() : dm;
  if (!last_axis_reduce(mx, ReduceOp::MAX, x) || !last_axis_reduce(s, ReduceOp::ADD, e) || !is_f32(x) ||
      x->shape != n->shape || e->shape != n->shape || !x->realized)
    return false;
  std::vector<Node*> inner{mx};
  if (detach) inner.push_back(detach);
  for (Node* m : {nm, nme, dn, t, e, s, r, re}) inner.push_back(m);
  for (const Node* m : inner)
    if (!only_here(m, m == e ? 2 : 1)) return false;
  *site = {x, neg, scale, std::move(inner)};
  return true;
}

bool run_row_softmax(Node& n, const RowSoftmax& site) {
  const Node& x = *site.x;
  if (!x.buffer || !x.view.is_contiguous()) return false;
  const int64_t total = numel(n.shape);
  const int64_t len = n.shape.back();
  if (len <= 0 || len > (int64_t{1} << 20)) return false;
  const int64_t rows = total / len;
  const int ln = static_cast<int>(len);
  const int stride = ln + 64;
  auto buf = std::make_shared<Buffer>(DType::Float32, total);
  const float* xp = reinterpret_cast<const float*>(x.buffer->bytes());
  float* op = reinterpret_cast<float*>(buf->bytes());
  const int64_t tasks = (rows + kRowsPerTask - 1) / kRowsPerTask;
  parallel_for(tasks, [&](int64_t task) {
    thread_local std::vector<float> tb;
    thread_local std::vector<uint32_t> eb;
    if (tb.size() < static_cast<size_t>(stride)) tb.resize(static_cast<size_t>(stride));
    if (eb.size() < static_cast<size_t>(stride) * kMaxLanes) eb.resize(static_cast<size_t>(stride) * kMaxLanes);
    std::fill(tb.begin() + ln, tb.begin() + stride, 0.0f);  // exp2 of the padding: in its domain, no fallback
    const int64_t r0 = task * kRowsPerTask;
    HWY_DYNAMIC_DISPATCH(SoftmaxRows)(xp + r0 * len, op + r0 * len, std::min(kRowsPerTask, rows - r0), ln, site.neg,
                                      site.scale, tb.data(), eb.data(), stride);
    g_tasks.fetch_add(1, std::memory_order_relaxed);
  }, Round::NearestEven);
  n.buffer = std::move(buf);
  n.view.set_contiguous(n.shape);
  return true;
}

int64_t row_softmax_tasks() { return g_tasks.load(std::memory_order_relaxed); }

}  // namespace maroon::cpu
#endif  // HWY_ONCE
