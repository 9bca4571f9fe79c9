#include "ref/executor.h"

#include <algorithm>
#include <cassert>

#include "core/gather.h"
#include "ref/scalar.h"

namespace maroon::ref {

namespace {

// Reads a realized node's elements by index; padding reads as zero bits.
struct Reader {
  const Node& node;
  uint64_t at(const int64_t* idx) const {
    int64_t i = node.view.index(idx);
    return i < 0 ? 0 : node.buffer->load(i);
  }
};

// Advances a row-major multi-index; false once it wraps around.
bool next_index(std::vector<int64_t>& idx, const Shape& shape) {
  for (size_t d = shape.size(); d-- > 0;) {
    if (++idx[d] < shape[d]) return true;
    idx[d] = 0;
  }
  return false;
}

void run_elementwise(Node& n) {
  auto out = std::make_shared<Buffer>(n.dtype, numel(n.shape));
  // The operand dtype: WHERE's condition is bool, its values carry the dtype.
  DType in = n.op == Op::WHERE ? n.src[1]->dtype : n.src[0]->dtype;
  std::vector<Reader> readers;
  for (auto& s : n.src) readers.push_back(Reader{*s});
  if (out->count > 0) {
    std::vector<int64_t> idx(n.shape.size(), 0);
    uint64_t operands[3];
    int64_t i = 0;
    do {
      for (size_t k = 0; k < readers.size(); ++k) operands[k] = readers[k].at(idx.data());
      out->store(i++, eval(n.op, in, n.dtype, n.rnd, operands));
    } while (next_index(idx, n.shape));
  }
  n.buffer = out;
  n.view.set_contiguous(n.shape);
}

// A left fold per output, over the reduced axes in row-major index order, from the identity.
void run_reduce(Node& n) {
  const Node& s = *n.src[0];
  const ReduceOp rop = n.arg.reduce_op;
  auto out = std::make_shared<Buffer>(n.dtype, numel(n.shape));
  Shape inner(s.shape.size(), 1);  // the reduced sub-space
  for (int64_t ax : n.arg.ints) inner[ax] = s.shape[ax];
  Reader rd{s};
  std::vector<int64_t> o(n.shape.size(), 0), r(s.shape.size(), 0), idx(s.shape.size(), 0);
  int64_t i = 0;
  if (out->count > 0) do {
    uint64_t acc = reduce_identity(rop, n.dtype);
    if (numel(inner) > 0) {
      std::fill(r.begin(), r.end(), 0);
      do {
        for (size_t d = 0; d < idx.size(); ++d) idx[d] = o[d] + r[d];
        acc = reduce_step(rop, n.dtype, n.rnd, acc, rd.at(idx.data()));
      } while (next_index(r, inner));
    }
    out->store(i++, acc);
  } while (next_index(o, n.shape));
  n.buffer = out;
  n.view.set_contiguous(n.shape);
}

// REDUCE_MULACC: per output, acc = +0, then acc = MULACC(a[i], b[i], acc) over the reduced axes
// in row-major order; both sources are read through views stretched to the broadcast shape.
void run_fused_reduce(Node& n) {
  const Node& a = *n.src[0];
  const Node& b = *n.src[1];
  Shape full = a.shape;  // the broadcast shape: the sources differ only where one is 1
  for (size_t d = 0; d < full.size(); ++d) full[d] = std::max(a.shape[d], b.shape[d]);
  const ShapeTracker va = a.view.expand(full), vb = b.view.expand(full);
  auto read = [](const Node& s, const ShapeTracker& v, const int64_t* idx) {
    int64_t i = v.index(idx);
    return i < 0 ? uint64_t{0} : s.buffer->load(i);
  };
  auto out = std::make_shared<Buffer>(n.dtype, numel(n.shape));
  Shape inner(full.size(), 1);
  for (int64_t ax : n.arg.ints) inner[ax] = full[ax];
  std::vector<int64_t> o(n.shape.size(), 0), r(full.size(), 0), idx(full.size(), 0);
  int64_t i = 0;
  if (out->count > 0) do {
    uint64_t acc = 0;  // +0
    if (numel(inner) > 0) {
      std::fill(r.begin(), r.end(), 0);
      do {
        for (size_t d = 0; d < idx.size(); ++d) idx[d] = o[d] + r[d];
        const uint64_t x[3] = {read(a, va, idx.data()), read(b, vb, idx.data()), acc};
        acc = eval(Op::MULACC, n.dtype, n.dtype, n.rnd, x);
      } while (next_index(r, inner));
    }
    out->store(i++, acc);
  } while (next_index(o, n.shape));
  n.buffer = out;
  n.view.set_contiguous(n.shape);
}

// GATHER: per output index p, x at p with p[axis] replaced by idx[p]'s position, bit for bit;
// zero bits where the index selects nothing.
void run_gather(Node& n) {
  const Node& x = *n.src[0];
  const Node& ix = *n.src[1];
  const size_t axis = static_cast<size_t>(n.arg.ints[0]);
  Reader rx{x}, ri{ix};
  auto out = std::make_shared<Buffer>(n.dtype, numel(n.shape));
  std::vector<int64_t> p(n.shape.size(), 0), q(n.shape.size(), 0);
  int64_t i = 0;
  if (out->count > 0) do {
    const int64_t pos = gather_position(ri.at(p.data()), ix.dtype, x.shape[axis]);
    q = p;
    q[axis] = pos;
    out->store(i++, pos < 0 ? 0 : rx.at(q.data()));
  } while (next_index(p, n.shape));
  n.buffer = out;
  n.view.set_contiguous(n.shape);
}

void run_movement(Node& n) {
  n.buffer = n.src[0]->buffer;
  n.view = movement_view(n, n.src[0]->view);
  assert(n.view.shape() == n.shape);
}

void run_const(Node& n) {
  auto buf = std::make_shared<Buffer>(n.dtype, 1);
  buf->store(0, n.arg.bits);
  n.buffer = buf;
  n.view = ShapeTracker::broadcast_scalar(n.shape);
}

}  // namespace

ShapeTracker movement_view(const Node& n, const ShapeTracker& v) {
  switch (n.op) {
    case Op::RESHAPE: return v.reshape(n.arg.ints);
    case Op::EXPAND: return v.expand(n.arg.ints);
    case Op::PERMUTE: return v.permute(n.arg.ints);
    case Op::PAD: return v.pad(n.arg.pairs);
    case Op::SHRINK: return v.shrink(n.arg.pairs);
    case Op::FLIP: return v.flip(n.arg.ints);
    case Op::DETACH: case Op::CONTIGUOUS_BACKWARD: return v;
    default: assert(false && "not a movement op"); return v;
  }
}

void execute(Node& n) {
  // By the op table's KIND (no default: a new kind without a way to run fails to compile);
  // an elementwise op's meaning is src/ref/scalar.cpp's eval.
  switch (op_info(n.op).kind) {
    case OpKind::Unary: case OpKind::Cast: case OpKind::Binary: case OpKind::Compare:
    case OpKind::Ternary:
      return run_elementwise(n);
    case OpKind::Reduce:
      if (n.op == Op::REDUCE_MULACC) return run_fused_reduce(n);
      return run_reduce(n);
    case OpKind::Movement: return run_movement(n);
    case OpKind::Index: return run_gather(n);
    case OpKind::Source:
      if (n.op == Op::CONST) return run_const(n);
      assert(n.realized && "BUFFER nodes are created realized");
      return;
  }
}

}  // namespace maroon::ref
