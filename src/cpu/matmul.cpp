// Recognises a matmul in the graph: REDUCE ADD over one axis of MUL(x, y) where x and y are
// strided views of realized buffers. Output axes where only x moves are rows, where only y moves
// are columns, where both move are batches; the reduced axis is k.
#include "cpu/gemm.h"
#include "cpu/kernel.h"
#include "cpu/threads.h"

namespace maroon::cpu {

namespace {

// A matmul operand as strided memory. A view that strides cannot express (pool windows, padding:
// what conv2d builds) is first copied out densely, with its broadcast (stride-0) axes kept as
// stride 0 so the copy is no larger than the data it reads: that copy is im2col.
struct Operand {
  const void* data = nullptr;
  std::vector<int64_t> strides;
  int64_t offset = 0;
  std::shared_ptr<Buffer> dense;  // owns the copy, if one was made
};

constexpr int64_t kMaxDenseElements = int64_t{1} << 26;

Operand operand(const Node& leaf) {
  Operand o;
  LeafMap m(&leaf);
  if (m.affine) {
    o.data = leaf.buffer->bytes();
    o.strides = m.strides;
    o.offset = m.offset;
    return o;
  }
  const View& top = leaf.view.views().back();
  const Shape& s = leaf.shape;
  Shape dense_shape = s;
  for (size_t d = 0; d < s.size(); ++d) {
    bool full_mask = !top.has_mask() || (top.mask[d].first == 0 && top.mask[d].second == s[d]);
    if (top.strides[d] == 0 && full_mask) dense_shape[d] = 1;
  }
  const int64_t n = numel(dense_shape);
  if (n > kMaxDenseElements) return o;
  o.dense = std::make_shared<Buffer>(leaf.dtype, n);
  // Row by row along the last axis (row_indices walks the view stack without divisions).
  const int64_t row = dense_shape.empty() ? 1 : dense_shape.back();
  std::vector<int64_t> c(s.size(), 0), idx(static_cast<size_t>(std::max<int64_t>(row, 1)));
  for (int64_t p0 = 0; p0 < n; p0 += row) {
    if (s.empty()) idx[0] = leaf.view.index(c.data());
    else leaf.view.row_indices(c.data(), row, idx.data());
    gather(*leaf.buffer, idx.data(), static_cast<int>(row), o.dense->bytes() + p0 * itemsize(leaf.dtype));
    for (size_t d = s.size() - (s.empty() ? 0 : 1); d-- > 0;) {
      if (++c[d] < dense_shape[d]) break;
      c[d] = 0;
    }
  }
  o.data = o.dense->bytes();
  o.strides.assign(s.size(), 0);
  int64_t acc = 1;
  for (size_t d = s.size(); d-- > 0;) {
    if (dense_shape[d] != 1) o.strides[d] = acc;
    acc *= dense_shape[d];
  }
  return o;
}

}  // namespace

bool try_matmul(Node& out) {
  if (out.arg.reduce_op != ReduceOp::ADD || out.arg.ints.empty()) return false;
  const Node& mul = *out.src[0];
  if (mul.realized || mul.op != Op::MUL) return false;
  if (out.dtype != DType::Float32 && out.dtype != DType::Float64) return false;
  if (mul.rnd != out.rnd) return false;  // one hardware rounding mode for the whole kernel
  const Node& x = *mul.src[0];
  const Node& y = *mul.src[1];
  // An operand still fused (say relu'(h) * grad in a backward pass) is computed into a buffer
  // first: a matmul over it is far faster than folding the whole expression per output.
  if (numel(mul.shape) < 4096) return false;
  for (const NodePtr& s : mul.src) {
    if (s->realized) continue;
    OpKind k = op_info(s->op).kind;
    if (k == OpKind::Reduce || k == OpKind::Movement || k == OpKind::Source) return false;
    run_elementwise(*s);
    s->realized = true;
  }
  Operand mx = operand(x), my = operand(y);
  if (!mx.data || !my.data) return false;

  const Shape& s = mul.shape;
  const std::vector<int64_t>& kaxes = out.arg.ints;  // sorted: k is row-major over them
  std::vector<bool> reduced(s.size(), false);
  for (int64_t a : kaxes) reduced[a] = true;
  std::vector<int64_t> rows, cols, batch;  // axes
  for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d) {
    if (reduced[d] || s[d] == 1) continue;
    bool xm = mx.strides[d] != 0, ym = my.strides[d] != 0;
    if (xm && !ym) rows.push_back(d);
    else if (!xm && ym) cols.push_back(d);
    else batch.push_back(d);
  }
  auto size_of = [&](const std::vector<int64_t>& axes) {
    int64_t n = 1;
    for (int64_t a : axes) n *= s[a];
    return n;
  };
  const int64_t M = size_of(rows), N = size_of(cols), NB = size_of(batch), K = size_of(kaxes);
  if (M * N * K < 4096 || M * N == 0 || K == 0) return false;  // small: the generic fold will do

  // Offsets of every row/column/batch coordinate in x, y and the (contiguous) output.
  const Shape ostr = [&] {
    Shape st(out.shape.size());
    int64_t acc = 1;
    for (size_t i = out.shape.size(); i-- > 0;) { st[i] = acc; acc *= out.shape[i]; }
    return st;
  }();
  auto offsets = [&](const std::vector<int64_t>& axes, const std::vector<int64_t>& strides) {
    std::vector<int64_t> off(1, 0);
    for (int64_t a : axes) {  // row-major over the axes, last fastest
      std::vector<int64_t> next;
      for (int64_t o : off)
        for (int64_t c = 0; c < s[a]; ++c) next.push_back(o + c * strides[a]);
      off.swap(next);
    }
    return off;
  };
  std::vector<int64_t> kA = offsets(kaxes, mx.strides), kB = offsets(kaxes, my.strides);
  std::vector<int64_t> rowA = offsets(rows, mx.strides), colB = offsets(cols, my.strides);
  std::vector<int64_t> rowC = offsets(rows, ostr), colC = offsets(cols, ostr);
  std::vector<int64_t> batchA = offsets(batch, mx.strides), batchB = offsets(batch, my.strides),
                       batchC = offsets(batch, ostr);
  for (auto& v : batchA) v += mx.offset;
  for (auto& v : batchB) v += my.offset;

  auto buf = std::make_shared<Buffer>(out.dtype, numel(out.shape));
  GemmArgs g{mx.data, my.data, buf->bytes(), M, N, K,
             kA.data(), kB.data(), rowA.data(), colB.data(), rowC.data(), colC.data(),
             batchA.data(), batchB.data(), batchC.data(),
             (M + kGemmMC - 1) / kGemmMC, (N + kGemmNC - 1) / kGemmNC};
  const DType d = out.dtype;
  int64_t mr, nr;
  gemm_panel_sizes(d, &mr, &nr);
  const size_t sz = itemsize(d);
  std::vector<uint64_t> apack(((M + mr - 1) / mr * mr * K * sz + 7) / 8);
  std::vector<uint64_t> bpack(((N + nr - 1) / nr * nr * K * sz + 7) / 8);
  const int64_t per_batch = g.tasks_m * g.tasks_n;
  for (int64_t b = 0; b < NB; ++b) {
    gemm_pack(d, g, b, apack.data(), bpack.data());
    parallel_for(per_batch, [&](int64_t t) {
      if (out.rnd != Round::NearestEven) set_hw_round(out.rnd);
      gemm_task(d, g, apack.data(), bpack.data(), b * per_batch + t);
      if (out.rnd != Round::NearestEven) set_hw_round(Round::NearestEven);
    }, Round::NearestEven);
  }
  out.buffer = buf;
  out.view = ShapeTracker::contiguous(out.shape);
  return true;
}

}  // namespace maroon::cpu
