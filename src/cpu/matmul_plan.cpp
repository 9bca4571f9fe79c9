#include "cpu/matmul_plan.h"

#include <algorithm>
#include <atomic>

#include "cpu/kernel.h"
#include "cpu/matmul_layouts.h"
#include "cpu/operand_copy.h"
#include "cpu/pad_copy.h"

namespace maroon::cpu {

namespace {

constexpr int64_t kMaxDenseElements = int64_t{1} << 26;

std::atomic<int64_t> g_reordered_copies{0}, g_padded_bases{0}, g_padded_levels{0};

// The axis order for an operand's dense copy, or empty for the view's own. Attention's values
// (V of the product P V, a slice of the fused QKV projection reshaped into heads) move along the
// head's 16 columns, adjacent in the source, and along the keys (k), the last axis of the
// product: copied in the view's order, each row was 64 elements a sequence position apart
// (copied one by one), and the kernel then packed that transposed B back through registers.
// With the columns last, the copy is runs of 16 adjacent elements and B's rows are whole vectors
// that the small-product kernel reads in place (gemm_direct.cpp). Only for a stack without
// padding (where every position has an element, so one step along an axis is a difference of
// two index() values): the layout of a copy never changes a bit, only where the kernel finds
// each element.
std::vector<int64_t> dense_order(const ShapeTracker& view, const std::vector<bool>& moves) {
  for (const View& v : view.views())
    if (v.has_mask()) return {};
  const Shape& s = view.shape();
  int64_t last = -1;
  for (size_t d = 0; d < s.size(); ++d)
    if (moves[d]) last = static_cast<int64_t>(d);
  if (last < 0) return {};
  std::vector<int64_t> c(s.size(), 0);
  const int64_t base = view.index(c.data());
  auto step = [&](size_t d) {
    c[d] = 1;
    const int64_t i = view.index(c.data());
    c[d] = 0;
    return i - base;
  };
  if (step(static_cast<size_t>(last)) == 1) return {};
  for (size_t d = 0; d < s.size(); ++d) {
    if (!moves[d] || static_cast<int64_t>(d) == last || step(d) != 1) continue;
    std::vector<int64_t> order;
    for (size_t e = 0; e < s.size(); ++e)
      if (e != d) order.push_back(static_cast<int64_t>(e));
    order.push_back(static_cast<int64_t>(d));
    return order;
  }
  return {};
}

// The strides of a dense copy over `dense` (the operand's shape, its broadcast axes 1), laid out
// row-major in `order` (empty: the axes' own): stride 0 on the axes of extent 1.
std::vector<int64_t> dense_strides(const Shape& dense, const std::vector<int64_t>& order) {
  std::vector<int64_t> st(dense.size(), 0);
  int64_t acc = 1;
  for (size_t i = dense.size(); i-- > 0;) {
    const size_t d = order.empty() ? i : static_cast<size_t>(order[i]);
    if (dense[d] != 1) st[d] = acc;
    acc *= dense[d];
  }
  return st;
}

// A padded stack deeper than one view (conv_transpose2d: the input spread by the stride, a
// masked view, then padded, another) written a view at a time below the highest masked one, each
// a plane copy (write_padded) of the dense copy of the view below it, then the kept view over
// the last: copy_dense walked the whole stack for every element (about 8 ns each, 19 of a (32,16,
// 32,32) conv_transpose2d's 42 ms). A view indexes the row-major elements of the view below it,
// which is what each level's dense copy holds, so the result is copy_dense's element for element
// (a NaN made canonical, as the one-view copy makes it; the product's NaN is canonical anyway).
// False (nothing written) where a level would be larger than a dense copy may be.
bool padded_levels(const Buffer& buffer, const std::vector<View>& vs, size_t h, const View& kept, uint8_t* dst) {
  for (size_t i = 0; i < h; ++i)
    if (numel(vs[i].shape) > kMaxDenseElements) return false;
  const size_t sz = itemsize(buffer.dtype);
  std::shared_ptr<Buffer> below;  // the dense copy of the level below
  for (size_t i = 0; i < h; ++i) {
    View v = vs[i];
    if (!v.has_mask())
      for (int64_t e : v.shape) v.mask.push_back({0, e});
    auto next = std::make_shared<Buffer>(buffer.dtype, numel(v.shape));
    write_padded(v, below ? below->bytes() : buffer.bytes(), sz, next->bytes());
    below = std::move(next);
  }
  write_padded(kept, below->bytes(), sz, dst);
  g_padded_levels.fetch_add(1, std::memory_order_relaxed);
  return true;
}

// A stack with padding (conv2d with padding: the padded input, then the windows over it;
// conv_transpose2d: the input spread by the stride and padded, then the windows), read over a
// copy of the views up to its highest masked one instead: the axes that view moves along (or
// masks) written out with their +0 elements (the padded input; for conv_transpose2d the spread
// one), its broadcast axes left at stride 0. Over the copy the stack is maskless and, where its
// views then merge into one, read in place like an unpadded conv2d's windows. The dense copy
// below would write the windows out instead (im2col, nine times the input for a 3x3 kernel)
// element run by element run: a (32,16,32,32) 3x3 conv2d with padding 1 took 144-182 ms against
// 1.1-1.5 ms without padding (one thread). A single masked bottom view is copied by the plane
// copier (pad_copy.h's write_padded, the ONNX importer's `x.pad(pads) * 1`, each NaN made
// canonical), a deeper stack by copy_dense; the values are the same either way (a NaN's payload
// aside, which the product's canonical NaN never shows), so the same bits.
bool padded_base(const Buffer& buffer, const ShapeTracker& view, Operand* o) {
  const std::vector<View>& vs = view.views();
  if (buffer.dtype != DType::Float32 && buffer.dtype != DType::Float64) return false;
  size_t h = vs.size();
  while (h-- > 0 && !vs[h].has_mask()) {
  }
  if (h >= vs.size()) return false;  // no padding
  const View& b = vs[h];
  auto kept_axis = [&](size_t d) {
    return b.strides[d] != 0 || b.mask[d].first > 0 || b.mask[d].second < b.shape[d];
  };
  View kept;  // the masked view over the axes the copy keeps
  Shape dense = b.shape;  // those axes, the others 1
  for (size_t d = 0; d < b.shape.size(); ++d) {
    if (!kept_axis(d)) {
      dense[d] = 1;
      continue;
    }
    kept.shape.push_back(b.shape[d]);
    kept.strides.push_back(b.strides[d]);
    kept.mask.push_back(b.mask[d]);
  }
  kept.offset = b.offset;
  if (kept.shape.empty()) return false;
  const int64_t n = numel(kept.shape);
  if (n == 0 || n > kMaxDenseElements) return false;
  // The copy read through the masked view's shape.
  const ShapeTracker over = view.rebased(View{b.shape, dense_strides(dense, {}), 0, {}}, h + 1);
  if (over.views().size() != 1) return false;  // the windows still need a copy of their own
  o->dense = std::make_shared<Buffer>(buffer.dtype, n);
  if (h == 0) write_padded(kept, buffer.bytes(), itemsize(buffer.dtype), o->dense->bytes());
  else if (!padded_levels(buffer, vs, h, kept, o->dense->bytes())) copy_dense(buffer, view.lower(h + 1), dense, o->dense->bytes());
  o->data = o->dense->bytes();
  o->count = n;
  o->strides = over.views()[0].strides;
  o->offset = over.views()[0].offset;
  g_padded_bases.fetch_add(1, std::memory_order_relaxed);
  return true;
}

// `reorder`: the copy may take dense_order's layout (B only: measured there; A's packing reads
// along k, which the reorder would scatter).
Operand operand(const Buffer& buffer, const ShapeTracker& view, bool reorder) {
  Operand o;
  const View& top = view.views().back();
  if (view.views().size() == 1 && !top.has_mask()) {
    o.data = buffer.bytes();
    o.count = buffer.count;
    o.strides = top.strides;
    o.offset = top.offset;
    return o;
  }
  if (padded_base(buffer, view, &o)) return o;
  const Shape& s = view.shape();
  Shape dense_shape = s;
  const std::vector<bool> moves = moving_axes(view);
  for (size_t d = 0; d < s.size(); ++d)
    if (!moves[d]) dense_shape[d] = 1;
  const int64_t n = numel(dense_shape);
  if (n > kMaxDenseElements) return o;
  o.dense = std::make_shared<Buffer>(buffer.dtype, n);
  // The copy's axis order: the view's, or that with the axis the source reads in steps of one
  // moved last (dense_order): copied in runs, and read by the kernel along its vectors.
  const std::vector<int64_t> order = reorder ? dense_order(view, moves) : std::vector<int64_t>{};
  if (order.empty()) {
    copy_dense(buffer, view, dense_shape, o.dense->bytes());
  } else {
    Shape permuted(s.size());
    for (size_t i = 0; i < s.size(); ++i) permuted[i] = dense_shape[static_cast<size_t>(order[i])];
    copy_dense(buffer, view.permute(order), permuted, o.dense->bytes());
    g_reordered_copies.fetch_add(1, std::memory_order_relaxed);
  }
  o.data = o.dense->bytes();
  o.count = n;
  o.strides = dense_strides(dense_shape, order);
  return o;
}

// Offsets of every coordinate of `axes` (row-major, last fastest) under `strides`, plus base.
// Filled in place, last axis first, in one allocation: a small matmul's whole call is a few
// microseconds, and building each list axis by axis was a measurable part of it.
std::vector<int64_t> offsets(const Shape& s, const std::vector<int64_t>& axes, const std::vector<int64_t>& strides,
                             int64_t base) {
  int64_t total = 1;
  for (int64_t a : axes) total *= s[a];
  std::vector<int64_t> off(static_cast<size_t>(total));
  if (total == 0) return off;
  off[0] = base;
  int64_t filled = 1;  // off[0, filled) holds the offsets over the axes after `i`
  for (size_t i = axes.size(); i-- > 0;) {
    const int64_t a = axes[i], n = s[a], st = strides[a];
    // Coordinate c of axis a comes before the later axes' block: fill from the back so the
    // block at the front is read before it is overwritten.
    for (int64_t c = n; c-- > 0;)
      for (int64_t j = filled; j-- > 0;) off[static_cast<size_t>(c * filled + j)] = off[static_cast<size_t>(j)] + c * st;
    filled *= n;
  }
  return off;
}

}  // namespace

int64_t matmul_reordered_copies() { return g_reordered_copies.load(); }
int64_t matmul_padded_bases() { return g_padded_bases.load(); }
int64_t matmul_padded_levels() { return g_padded_levels.load(); }

std::vector<bool> moving_axes(const ShapeTracker& view) {
  const View& top = view.views().back();
  std::vector<bool> m(top.shape.size());
  for (size_t d = 0; d < m.size(); ++d) {
    bool full_mask = !top.has_mask() || (top.mask[d].first == 0 && top.mask[d].second == top.shape[d]);
    m[d] = top.shape[d] != 1 && (top.strides[d] != 0 || !full_mask);
  }
  return m;
}

Split split_axes(const Shape& s, const std::vector<int64_t>& kaxes, const std::vector<bool>& mx,
                 const std::vector<bool>& my) {
  Split sp;
  std::vector<bool> reduced(s.size(), false);
  for (int64_t a : kaxes) { reduced[a] = true; sp.K *= s[a]; }
  for (size_t d = 0; d < s.size(); ++d) {
    if (reduced[d] || s[d] == 1) continue;
    const int64_t a = static_cast<int64_t>(d);
    if (mx[d] && !my[d]) { sp.rows.push_back(a); sp.M *= s[d]; }
    else if (!mx[d] && my[d]) { sp.cols.push_back(a); sp.N *= s[d]; }
    else { sp.batch.push_back(a); sp.NB *= s[d]; }
  }
  return sp;
}

namespace {

// The key a layout is stored under: every input of make_layout, each list preceded by its length
// so that no two different inputs give the same words.
void layout_key(const Shape& s, const std::vector<int64_t>& kaxes, const Shape& out_shape, const Operand& x,
                const Operand& y, std::vector<int64_t>* key) {
  key->clear();
  auto list = [&](const std::vector<int64_t>& v) {
    key->push_back(static_cast<int64_t>(v.size()));
    key->insert(key->end(), v.begin(), v.end());
  };
  list(s);
  list(kaxes);
  list(out_shape);
  list(x.strides);
  key->push_back(x.offset);
  list(y.strides);
  key->push_back(y.offset);
}

MatmulLayout make_layout(const Shape& s, const std::vector<int64_t>& kaxes, const Shape& out_shape, const Operand& x,
                         const Operand& y) {
  auto nonzero = [](const std::vector<int64_t>& st) {
    std::vector<bool> m(st.size());
    for (size_t d = 0; d < st.size(); ++d) m[d] = st[d] != 0;
    return m;
  };
  MatmulLayout l;
  l.split = split_axes(s, kaxes, nonzero(x.strides), nonzero(y.strides));
  const Split& sp = l.split;
  const Shape ostr = contiguous_strides(out_shape);
  l.kA = offsets(s, kaxes, x.strides, 0);
  l.kB = offsets(s, kaxes, y.strides, 0);
  l.rowA = offsets(s, sp.rows, x.strides, 0);
  l.colB = offsets(s, sp.cols, y.strides, 0);
  l.rowC = offsets(s, sp.rows, ostr, 0);
  l.colC = offsets(s, sp.cols, ostr, 0);
  l.batchA = offsets(s, sp.batch, x.strides, x.offset);
  l.batchB = offsets(s, sp.batch, y.strides, y.offset);
  l.batchC = offsets(s, sp.batch, ostr, 0);
  return l;
}

}  // namespace

bool plan_matmul(const Buffer& xb, const ShapeTracker& xv, const Buffer& yb, const ShapeTracker& yv,
                 const std::vector<int64_t>& kaxes, const Shape& out_shape, MatmulPlan* p) {
  p->x = operand(xb, xv, false);
  p->y = operand(yb, yv, true);
  if (!p->x.data || !p->y.data) return false;
  const Shape& s = xv.shape();
  thread_local std::vector<int64_t> key;  // reused: no allocation per call once grown
  layout_key(s, kaxes, out_shape, p->x, p->y, &key);
  p->layout = matmul_layout(key, [&] { return make_layout(s, kaxes, out_shape, p->x, p->y); });
  const MatmulLayout& l = *p->layout;
  p->split = l.split;
  p->kA = l.kA;
  p->kB = l.kB;
  p->rowA = l.rowA;
  p->colB = l.colB;
  p->rowC = l.rowC;
  p->colC = l.colC;
  p->batchA = l.batchA;
  p->batchB = l.batchB;
  p->batchC = l.batchC;
  return true;
}

void MatmulPlan::transpose() {
  std::swap(x, y);
  std::swap(kA, kB);
  std::swap(rowA, colB);
  std::swap(rowC, colC);
  std::swap(batchA, batchB);
  std::swap(split.rows, split.cols);
  std::swap(split.M, split.N);
}

GemmArgs MatmulPlan::args(void* C, int64_t nc) const {
  const int64_t M = split.M, N = split.N;
  return GemmArgs{x.data, y.data, C, M, N, split.K,
                  kA.data(), kB.data(), rowA.data(), colB.data(), rowC.data(), colC.data(),
                  batchA.data(), batchB.data(), batchC.data(),
                  (M + kGemmMC - 1) / kGemmMC, (N + nc - 1) / nc, nc, false, fused};
}

}  // namespace maroon::cpu
