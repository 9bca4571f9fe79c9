// The tile interpreter: gathers leaves through their views, runs the fused DAG a tile at a time
// (SIMD where fastops has the op, src/ref's scalar meaning otherwise) and writes the result.
#include <algorithm>
#include <atomic>
#include <cassert>
#include <memory>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <cstring>

#include "core/node_map.h"
#include "cpu/acc_runs.h"
#include "cpu/fast_math.h"
#include "cpu/fastops.h"
#include "cpu/fill_simd.h"
#include "cpu/kernel.h"
#include "cpu/pad_copy.h"
#include "cpu/select_copy.h"
#include "cpu/run_cursor.h"
#include "cpu/threads.h"
#include "cpu/view_runs.h"
#include "ref/scalar.h"
#include "maroon/settings.h"

namespace maroon::cpu {

// ---- programs ----

namespace {

// post_order (core/graph.h) entering unrealized nodes only, with a NodeSet for the nodes met:
// the same walk, the same order, without a hash table per kernel.
std::vector<Node*> kernel_nodes(Node* root) {
  // Room for a small kernel up front: growing each list from one entry was a malloc/free pair
  // per doubling, a few per kernel of a small op.
  std::vector<Node*> order;
  order.reserve(8);
  NodeSet seen;
  seen.insert(root);
  std::vector<std::pair<Node*, size_t>> stack;
  stack.reserve(8);
  stack.push_back({root, 0});
  while (!stack.empty()) {
    auto& [n, i] = stack.back();
    if (!n->realized && i < n->src.size()) {
      Node* s = n->src[i++].get();
      if (seen.insert(s)) stack.push_back({s, 0});
    } else {
      order.push_back(n);
      stack.pop_back();
    }
  }
  return order;
}

}  // namespace

Program build_program(const Node* root, const std::vector<Node*>& outputs) {
  Program p;
  // Realized nodes are leaves (read through their views); the rest is code, in dependency order.
  const std::vector<Node*> nodes = kernel_nodes(const_cast<Node*>(root));
  std::vector<Node*> code_nodes;
  code_nodes.reserve(nodes.size());
  p.leaves.reserve(nodes.size());
  p.code.reserve(nodes.size());
  for (Node* n : nodes)
    (n->realized ? p.leaves.push_back(n) : code_nodes.push_back(n));
  NodeMap<int> id;
  const int L = static_cast<int>(p.leaves.size());
  for (int i = 0; i < L; ++i) id[p.leaves[i]] = i;
  for (size_t i = 0; i < code_nodes.size(); ++i) id[code_nodes[i]] = L + static_cast<int>(i);
  auto value_id = [&](const Node* n) { return *id.find(n); };
  for (const Node* n : code_nodes) {
    Instr ins{};
    ins.op = n->op;
    ins.in = n->op == Op::WHERE ? n->src[1]->dtype : n->src[0]->dtype;
    ins.out = n->dtype;
    ins.rnd = n->rnd;
    ins.nsrc = static_cast<int>(n->src.size());
    for (int k = 0; k < ins.nsrc; ++k) ins.src[k] = value_id(n->src[k].get());
    p.code.push_back(ins);
  }
  p.result = value_id(root);
  p.dtype = root->dtype;
  p.outputs.reserve(outputs.size());
  for (const Node* o : outputs) {
    const int* v = id.find(o);
    assert(v && *v >= L);
    p.outputs.push_back(*v);
  }
  find_segments(p);
  return p;
}

namespace {

// Program::step_op and step_other for the chains among p.segments.
void decode_steps(Program& p) {
  const int L = static_cast<int>(p.leaves.size());
  for (const Segment& s : p.segments) {
    if (s.end - s.start < 2) continue;
    if (p.step_op.empty()) {
      p.step_op.resize(p.code.size());
      p.step_other.assign(p.code.size(), -1);
    }
    for (int i = s.start; i < s.end; ++i) {
      const Instr& ins = p.code[i];
      chain_op(ins, &p.step_op[i]);
      // The instruction's operand that is not the running value (the first instruction's second).
      const int other = ins.nsrc < 2 ? -1 : i == s.start || ins.src[0] == L + i - 1 ? ins.src[1] : ins.src[0];
      p.step_other[i] = p.step_op[i] == ChainOp::Square ? -1 : other;
    }
  }
}

}  // namespace

void find_segments(Program& p) {
  p.segments.clear();
  p.step_op.clear();
  p.step_other.clear();
  if (p.code.size() < 2) return;  // one instruction: nothing to chain (and nothing allocated)
  const int L = static_cast<int>(p.leaves.size());
  std::vector<int> uses(static_cast<size_t>(p.num_values()), 0);
  for (const Instr& ins : p.code)
    for (int k = 0; k < ins.nsrc; ++k) ++uses[ins.src[k]];
  ++uses[p.result];
  for (int o : p.outputs) ++uses[o];  // stored: a chain may end at it, not run through it
  ChainOp op;
  bool chaining = false;  // the last segment is a chain (or its first instruction may start one)
  for (int i = 0; i < static_cast<int>(p.code.size()); ++i) {
    const Instr& ins = p.code[i];
    const bool chains = chain_op(ins, &op);
    if (chaining && chains && ins.in == p.code[i - 1].in) {
      // Extends the chain if it reads the value before it, and that value nothing else.
      const int prev = L + i - 1;
      int reads = 0;
      for (int k = 0; k < ins.nsrc; ++k) reads += ins.src[k] == prev;
      const Segment& last = p.segments.back();
      // Read twice (x + x, max(x, x)) only as Square's operand: another step reads its second
      // operand from a tile, and the running value is in none.
      const bool one_operand = reads == 1 || op == ChainOp::Square;
      if (reads > 0 && one_operand && reads == uses[prev] && last.end - last.start < kMaxChain) {
        p.segments.back().end = i + 1;
        continue;
      }
    }
    p.segments.push_back({i, i + 1});
    chaining = chains;
  }
  decode_steps(p);
  find_acc(p);
}

// ---- leaves ----

LeafMap::LeafMap(const Node* n) : node(n) {
  const auto& views = n->view.views();
  affine = views.size() == 1 && !views[0].has_mask();
  if (affine) {
    strides = views[0].strides;
    offset = views[0].offset;
    return;
  }
  // A stack whose leading axes are batch axes: its inner indices are computed once into a table
  // when the batches are many and the table small (pool's gradient: (batch, channel) over a
  // window stack), so each position costs a lookup instead of a walk through every view.
  ShapeTracker inner;
  nbatch = n->view.batch_axes(&strides, &inner);
  if (nbatch == 0) return;
  const Shape& is = inner.shape();
  int64_t batches = 1;
  for (int d = 0; d < nbatch; ++d) batches *= n->shape[d];
  const int64_t size = numel(is);
  if (batches < 4 || size > (int64_t{1} << 22) || is.empty() || size == 0) { nbatch = 0; return; }
  table.resize(static_cast<size_t>(size));
  std::vector<int64_t> c(is.size(), 0);
  for (int64_t p = 0; p < size; p += is.back()) {
    inner.row_indices(c.data(), is.back(), table.data() + p);
    for (size_t d = is.size() - 1; d-- > 0;) { if (++c[d] < is[d]) break; c[d] = 0; }
  }
}

int64_t LeafMap::index(const int64_t* coords) const {
  if (nbatch > 0) {
    int64_t b = 0, flat = 0;
    for (int d = 0; d < nbatch; ++d) b += coords[d] * strides[d];
    for (size_t d = nbatch; d < node->shape.size(); ++d) flat = flat * node->shape[d] + coords[d];
    const int64_t t = table[flat];
    return t < 0 ? -1 : b + t;
  }
  if (!affine) return node->view.index(coords);
  int64_t i = offset;
  for (size_t d = 0; d < strides.size(); ++d) i += coords[d] * strides[d];
  return i;
}

void LeafMap::row(const int64_t* coords, int n, int64_t* out) const {
  if (nbatch > 0 && static_cast<size_t>(nbatch) < node->shape.size()) {
    int64_t b = 0, flat = 0;
    for (int d = 0; d < nbatch; ++d) b += coords[d] * strides[d];
    for (size_t d = nbatch; d < node->shape.size(); ++d) flat = flat * node->shape[d] + coords[d];
    // Branch-free: padding (-1) comes in patterns the branch predictor misses.
    for (int i = 0; i < n; ++i) {
      const int64_t t = table[flat + i];
      out[i] = (b + t) | (t >> 63);  // t < 0: all ones, -1
    }
    return;
  }
  node->view.row_indices(coords, n, out);
}

void gather(const Buffer& b, const int64_t* idx, int n, void* dst) {
  const uint8_t* src = b.bytes();
  switch (itemsize(b.dtype)) {
#define MAROON_GATHER(SZ, T)                                                 \
  case SZ: {                                                                 \
    T* d = static_cast<T*>(dst);                                             \
    const T* s = reinterpret_cast<const T*>(src);                            \
    for (int i = 0; i < n; ++i) {                                            \
      /* Branch-free (padding comes in patterns the predictor misses):   */ \
      /* padding reads element 0, always readable (buffers have slack),  */ \
      /* and masks it to zero bits.                                      */ \
      const int64_t j = idx[i], pad = j >> 63;                               \
      d[i] = s[j & ~pad] & static_cast<T>(~pad);                             \
    }                                                                        \
    break;                                                                   \
  }
    MAROON_GATHER(1, uint8_t)
    MAROON_GATHER(2, uint16_t)
    MAROON_GATHER(4, uint32_t)
    MAROON_GATHER(8, uint64_t)
#undef MAROON_GATHER
  }
}

// ---- instructions ----

namespace {

uint64_t load_bits(const void* p, size_t sz, int i) {
  uint64_t v = 0;
  std::memcpy(&v, static_cast<const uint8_t*>(p) + i * sz, sz);
  return v;
}
void store_bits(void* p, size_t sz, int i, uint64_t v) {
  std::memcpy(static_cast<uint8_t*>(p) + i * sz, &v, sz);
}

}  // namespace

void exec_instr(const Instr& ins, const void* const* srcs, void* dst, int n) {
  // Transcendentals round to ins.rnd themselves, under the default FPU state.
  if (MathFn fn = fast_math(ins.op, ins.in, ins.out)) return fn(srcs[0], dst, n, ins.rnd);
  if (MathFn2 fn = fast_math2(ins.op, ins.in, ins.out)) return fn(srcs[0], srcs[1], dst, n, ins.rnd);
  if (FastFn fn = fast_op(ins.op, ins.in, ins.out)) {
    // The op table's ROUNDS column: which kernels follow the hardware rounding mode.
    bool set = op_info(ins.op).rounds && ins.rnd != Round::NearestEven;
    if (set) set_hw_round(ins.rnd);
    fn(srcs[0], ins.nsrc > 1 ? srcs[1] : nullptr, ins.nsrc > 2 ? srcs[2] : nullptr, dst, n);
    if (set) set_hw_round(Round::NearestEven);
    return;
  }
  // src/ref's meaning, one element at a time (it never uses the FPU's rounding mode).
  const bool report = setting_flag(SettingId::MAROON_REPORT_SLOW_OPS);
  if (report)
    std::fprintf(stderr, "maroon: scalar path for %s %s -> %s (%d elements)\n",
                 std::string(op_name(ins.op)).c_str(), std::string(dtype_name(ins.in)).c_str(),
                 std::string(dtype_name(ins.out)).c_str(), n);
  size_t sz[3] = {0, 0, 0};
  for (int k = 0; k < ins.nsrc; ++k)
    sz[k] = itemsize(ins.op == Op::WHERE && k == 0 ? DType::Bool : ins.in);
  const size_t osz = itemsize(ins.out);
  uint64_t x[3];
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < ins.nsrc; ++k) x[k] = load_bits(srcs[k], sz[k], i);
    store_bits(dst, osz, i, ref::eval(ins.op, ins.in, ins.out, ins.rnd, x));
  }
}

namespace {
// Per-thread scratch for TileEval, a stack so that nested evaluators each get their own.
thread_local std::vector<std::unique_ptr<std::vector<uint64_t>>> t_scratch;
}  // namespace

namespace {
std::atomic<int64_t> g_chain_runs{0};
std::atomic<int64_t> g_chain_exp2_runs{0};
}  // namespace

int64_t chain_runs() { return g_chain_runs.load(); }
int64_t chain_exp2_runs() { return g_chain_exp2_runs.load(); }

TileEval::TileEval(const Program& p) : prog_(p), ptr_(p.num_values()) {
  if (!p.acc.empty()) {
    count_acc_run();
  } else {
    for (const Segment& s : p.segments)
      if (s.end - s.start > 1) {
        g_chain_runs.fetch_add(1, std::memory_order_relaxed);
        break;
      }
    for (const Segment& s : p.segments)
      if (s.end - s.start > 1 && std::any_of(p.code.begin() + s.start, p.code.begin() + s.end,
                                             [](const Instr& ins) { return ins.op == Op::EXP2; })) {
        g_chain_exp2_runs.fetch_add(1, std::memory_order_relaxed);
        break;
      }
  }
  if (t_scratch.empty()) t_scratch.push_back(std::make_unique<std::vector<uint64_t>>());
  scratch_ = t_scratch.back().release();
  t_scratch.pop_back();
  const size_t need = static_cast<size_t>(p.num_values()) * (kTile + kTilePad);
  if (scratch_->size() < need) scratch_->resize(need, 0);  // every lane initialised once
}

TileEval::~TileEval() { t_scratch.emplace_back(scratch_); }

const void* TileEval::eval(const std::vector<const int64_t*>& idx, int n,
                           const std::vector<const void*>* direct, void* out, void* const* outs) {
  const int L = static_cast<int>(prog_.leaves.size());
  std::vector<const void*>& ptr = ptr_;
  for (int l = 0; l < L; ++l) {
    if (direct && (*direct)[l]) {
      ptr[l] = (*direct)[l];
    } else {
      gather(*prog_.leaves[l]->buffer, idx[l], n, value(l));
      ptr[l] = value(l);
    }
  }
  // The other outputs' places: given, or this evaluator's tiles (at() finds either).
  void* small[4];
  const size_t O = prog_.outputs.size();
  std::vector<void*> big(O > 4 ? O : 0);
  void** o_at = O > 4 ? big.data() : small;
  for (size_t k = 0; k < O; ++k) {
    o_at[k] = outs ? outs[k] : value(prog_.outputs[k]);
    ptr[prog_.outputs[k]] = o_at[k];
  }
  if (!prog_.acc.empty()) {  // the whole program in one pass, the result last
    void* dst = out ? out : value(prog_.result);
    fast_acc(prog_.dtype)(prog_.acc.data(), static_cast<int>(prog_.acc.size()), ptr.data(), o_at, dst, n);
    return dst;
  }
  const int C = static_cast<int>(prog_.code.size());
  const bool by_segment = !prog_.segments.empty();
  for (size_t si = 0, i = 0; i < static_cast<size_t>(C); ++si) {
    const Segment s = by_segment ? prog_.segments[si] : Segment{static_cast<int>(i), static_cast<int>(i) + 1};
    const int id = L + s.end - 1;  // the value the segment defines
    const bool last = out && id == prog_.result && s.end == C;
    void* dst = last ? out : value(id);
    for (size_t k = 0; k < O; ++k)
      if (prog_.outputs[k] == id) dst = o_at[k];
    if (s.end - s.start > 1) {
      run_chain(s, dst, n);
    } else {
      const Instr& ins = prog_.code[s.start];
      const void* srcs[3] = {nullptr, nullptr, nullptr};
      for (int k = 0; k < ins.nsrc; ++k) srcs[k] = ptr[ins.src[k]];
      exec_instr(ins, srcs, dst, n);
    }
    ptr[id] = dst;
    i = static_cast<size_t>(s.end);
  }
  return ptr[prog_.result];
}

// A chain: the first instruction's first operand is the running value's start; each instruction
// is a step with its operand other than the running value (find_segments checked the rest).
void TileEval::run_chain(const Segment& s, void* dst, int n) {
  const Instr& first = prog_.code[s.start];
  ChainStep st[kMaxChain];
  for (int i = s.start; i < s.end; ++i)
    st[i - s.start] = {prog_.step_op[i], prog_.step_other[i] < 0 ? nullptr : ptr_[prog_.step_other[i]]};
  fast_chain(first.in)(ptr_[first.src[0]], st, s.end - s.start, dst, n);
}

// ---- elementwise kernels ----

void flat_indices(const LeafMap& m, const Shape& shape, int64_t p0, int n, int64_t* idx) {
  const size_t nd = shape.size();
  Coords c(nd);
  int64_t p = p0;
  for (size_t d = nd; d-- > 0;) { c[d] = shape[d] ? p % shape[d] : 0; p = shape[d] ? p / shape[d] : 0; }
  if (m.affine) {
    if (nd == 0) { std::fill(idx, idx + n, m.offset); return; }
    // A row segment along the last axis at a time: a tight loop the compiler keeps in registers.
    const int64_t last_stride = m.strides[nd - 1];
    for (int i = 0; i < n;) {
      const int64_t cur = m.index(c.data());
      const int seg = static_cast<int>(std::min<int64_t>(n - i, shape[nd - 1] - c[nd - 1]));
      for (int j = 0; j < seg; ++j) idx[i + j] = cur + j * last_stride;
      i += seg;
      c[nd - 1] = 0;  // carry into the outer axes
      for (size_t d = nd - 1; d-- > 0;) { if (++c[d] < shape[d]) break; c[d] = 0; }
    }
    return;
  }
  // Several views: walk each row segment along the last axis incrementally.
  if (nd == 0) { idx[0] = m.index(c.data()); return; }
  for (int i = 0; i < n;) {
    const int seg = static_cast<int>(std::min<int64_t>(n - i, shape[nd - 1] - c[nd - 1]));
    m.row(c.data(), seg, idx + i);
    i += seg;
    c[nd - 1] = 0;
    for (size_t d = nd - 1; d-- > 0;) { if (++c[d] < shape[d]) break; c[d] = 0; }
  }
}

namespace {

template <class T>
void copy_strided_as(const T* src, int64_t stride, int n, T* dst) {
  if (stride == 1) std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
  else if (stride == 0) std::fill(dst, dst + n, *src);
  else for (int i = 0; i < n; ++i) dst[i] = src[i * stride];
}

}  // namespace

void copy_strided(const uint8_t* src, size_t sz, int64_t stride, int n, void* dst) {
  if (stride == 0 && n >= 16 && (sz == 4 || sz == 8)) {  // a broadcast's fill, whole vectors
    if (sz == 4) {
      uint32_t v;
      std::memcpy(&v, src, 4);
      return fill_words(v, static_cast<uint32_t*>(dst), n);
    }
    uint64_t v;
    std::memcpy(&v, src, 8);
    return fill_words(v, static_cast<uint64_t*>(dst), n);
  }
  switch (sz) {
    case 1: return copy_strided_as(src, stride, n, static_cast<uint8_t*>(dst));
    case 2: return copy_strided_as(reinterpret_cast<const uint16_t*>(src), stride, n, static_cast<uint16_t*>(dst));
    case 4: return copy_strided_as(reinterpret_cast<const uint32_t*>(src), stride, n, static_cast<uint32_t*>(dst));
    default: return copy_strided_as(reinterpret_cast<const uint64_t*>(src), stride, n, static_cast<uint64_t*>(dst));
  }
}

namespace {

// Copies an affine leaf's elements for flat positions p0.. of `shape` into dst (what gather()
// reads through flat_indices(), without the index list): a segment at a time, copied where the
// leaf's step is 1, filled where it is 0 (a broadcast: a mean or a bias), strided otherwise. A
// segment runs over the trailing axes that the leaf reads at one step per position, so
// batchnorm's per-channel weight over (y, x) = (20, 20) is one fill of 400 where it was 20
// fills of 20 (a tenth of batchnorm's forward and gradient went to these fills).
void copy_affine(const LeafMap& m, const Shape& shape, int64_t p0, int n, void* dst) {
  const size_t nd = shape.size(), sz = itemsize(m.node->dtype);
  const uint8_t* src = m.node->buffer->bytes();
  const int64_t step = m.strides[nd - 1];
  size_t first = nd - 1;  // the segment's outermost axis
  int64_t len = shape[nd - 1];
  while (first > 0 && m.strides[first - 1] == step * len) len *= shape[--first];
  Coords c(nd);
  int64_t p = p0;
  for (size_t d = nd; d-- > 0;) { c[d] = shape[d] ? p % shape[d] : 0; p = shape[d] ? p / shape[d] : 0; }
  int64_t at = len ? p0 % len : 0;  // the position within the first segment
  for (int i = 0; i < n;) {
    const int seg = static_cast<int>(std::min<int64_t>(n - i, len - at));
    copy_strided(src + m.index(c.data()) * sz, sz, step, seg, static_cast<uint8_t*>(dst) + i * sz);
    i += seg;
    at = 0;
    for (size_t d = first; d < nd; ++d) c[d] = 0;  // carry into the axes outside the segment
    for (size_t d = first; d-- > 0;) { if (++c[d] < shape[d]) break; c[d] = 0; }
  }
}

// An affine leaf's trailing axes read as one block of positions, for leaves whose rows along the
// last axis are short (a pool window's 2, a 6-wide image): each block position's offset from the
// block's first element is tabled once per kernel, so a tile costs a lookup per element instead
// of a call and an index per row of a few elements.
struct AffineBlock {
  int axes = 0;          // trailing axes in the block; 0: rows are long, copied as they are
  int64_t size = 1;      // positions in the block
  std::vector<int64_t> off;
  bool pairs = false;    // off in adjacent pairs (a 2x2 pool window's rows): copied two at a time
};

AffineBlock affine_block(const LeafMap& m, const Shape& shape) {
  AffineBlock b;
  const size_t nd = shape.size();
  if (!m.affine || nd == 0 || shape[nd - 1] >= 16) return b;
  while (b.axes < static_cast<int>(nd) && b.size * shape[nd - 1 - b.axes] <= 1024) b.size *= shape[nd - 1 - b.axes++];
  if (b.axes == 0 || b.size == 0) return AffineBlock{};
  b.off.resize(static_cast<size_t>(b.size));
  std::vector<int64_t> c(static_cast<size_t>(b.axes), 0);
  for (int64_t j = 0; j < b.size; ++j) {
    int64_t o = 0;
    for (int k = 0; k < b.axes; ++k) o += c[k] * m.strides[nd - b.axes + k];
    b.off[j] = o;
    for (int k = b.axes; k-- > 0;) { if (++c[k] < shape[nd - b.axes + k]) break; c[k] = 0; }
  }
  b.pairs = b.size % 2 == 0;
  for (int64_t j = 0; b.pairs && j < b.size; j += 2) b.pairs = b.off[j + 1] == b.off[j] + 1;
  return b;
}

// Leaves broadcast along short rows (a softmax's row maximum or sum, a layernorm's mean, each
// read at every element of its row): constant over runs of r positions, r dividing kTile, run k
// reading element offset + k * step. A tile's runs are then filled from consecutive elements
// found from the tile's number, with no coordinates: copy_affine's divisions to unravel each
// tile's position were a third of this driver's time in the ONNX transformer.
struct RowFill {
  int64_t r = 0;     // positions per element read; 0: not such a leaf
  int64_t step = 0;  // elements between consecutive runs' elements
};

RowFill row_fill(const LeafMap& m, const Shape& shape) {
  if (!m.affine) return {};
  size_t k = shape.size();  // axes [k, nd) are the run's
  int64_t r = 1;
  while (k > 0 && (m.strides[k - 1] == 0 || shape[k - 1] == 1)) r *= shape[--k];
  // k == 0 reads one element everywhere (a scalar, filled once per kernel).
  if (k == 0 || r < 2 || r >= kTile || kTile % r != 0) return {};
  // The outer axes must step as one: each the next one's stride times its length.
  const int64_t step = m.strides[k - 1];
  int64_t expect = step * shape[k - 1];
  for (size_t d = k - 1; d-- > 0;) {
    if (shape[d] == 1) continue;
    if (m.strides[d] != expect) return {};
    expect *= shape[d];
  }
  return {r, step};
}

// Runs of a fixed length R (a 2x2 pool window's max, tie count and gradient, read once per
// window by its four positions), unrolled: std::fill per run of four cost about as much as
// the kernel's arithmetic. With step 1 the source is read in order, so the loop vectorizes.
template <class T, int R>
void fill_fixed_runs(const T* src, int64_t step, int n, T* dst) {
  const int full = n / R;
  if (step == 1) {
    for (int k = 0; k < full; ++k)
      for (int j = 0; j < R; ++j) dst[k * R + j] = src[k];
  } else {
    for (int k = 0; k < full; ++k)
      for (int j = 0; j < R; ++j) dst[k * R + j] = src[k * step];
  }
  for (int i = full * R; i < n; ++i) dst[i] = src[full * step];
}

template <class T>
void fill_runs_as(const T* src, int64_t step, int64_t r, int n, T* dst) {
  if (r == 2) return fill_fixed_runs<T, 2>(src, step, n, dst);
  if (r == 4) return fill_fixed_runs<T, 4>(src, step, n, dst);
  int64_t k = 0;
  for (int i = 0; i < n; i += static_cast<int>(r), ++k) std::fill(dst + i, dst + std::min<int64_t>(i + r, n), src[k * step]);
}

// n positions from a run's start: runs of r copies of src[0], src[step], src[2 * step], ...
void fill_runs(const uint8_t* src, size_t sz, int64_t step, int64_t r, int n, void* dst) {
  switch (sz) {
    case 1: return fill_runs_as(src, step, r, n, static_cast<uint8_t*>(dst));
    case 2: return fill_runs_as(reinterpret_cast<const uint16_t*>(src), step, r, n, static_cast<uint16_t*>(dst));
    case 4: return fill_runs_as(reinterpret_cast<const uint32_t*>(src), step, r, n, static_cast<uint32_t*>(dst));
    default: return fill_runs_as(reinterpret_cast<const uint64_t*>(src), step, r, n, static_cast<uint64_t*>(dst));
  }
}

// Positions [p0, p0 + n) of a leaf constant over runs of r positions (a per-channel mean or bias
// broadcast over a batch's planes: r = H * W, the product of the axes from k on, where the
// leaf's strides are 0) into dst: each run's element filled over its part, one or two runs a
// tile where r >= kTile, four for 8 x 8 planes. The first run's element is found from its outer
// coordinates (axes before k), each next one by stepping them (flat_indices per run was 1.2% of
// the CNN's step). RowFill does not take such a leaf (its outer axes do not step as one), and
// copy_affine walked the coordinates once per image row. bench/cpu/broadcast_bench.cpp,
// relu(x + y + b), one thread: (32, 64, 8, 8) 0.164 -> 0.118-0.121 ms, (64, 32, 20, 20) 0.87 -> 0.80
// ms; beautiful_mnist's fused step on one thread, its elementwise kernels 104 -> 91 ms
// (MAROON_PROFILE). Fills: the same elements, so the same bits.
constexpr int64_t kMinRunSegment = 64;  // shorter runs (36: a 6 x 6 plane) measured 7% slower this way

// Whether positions [p0, p0 + n) lie in one run (the cursor moved to the first).
bool in_one_run(RunCursor& rc, const LeafMap& m, const Shape& shape, const LeafRuns& lr, int64_t p0, int n) {
  seek_run(rc, m, shape, lr, p0);
  return p0 + n <= rc.end;
}

// Positions [p0, p0 + n) of the leaf into dst: each run's element filled over its part (one
// or two runs a tile where r >= kTile, four for 8 x 8 planes). The cursor is left at the run
// holding the last position. The same elements as copy_affine's, so the same bits.
void fill_run_segments(RunCursor& rc, const LeafMap& m, const Shape& shape, const LeafRuns& lr, int64_t p0, int n,
                       void* dst) {
  const size_t sz = itemsize(m.node->dtype);
  const uint8_t* src = m.node->buffer->bytes();
  seek_run(rc, m, shape, lr, p0);
  for (int64_t q = p0; q < p0 + n;) {
    const int64_t e = std::min<int64_t>(p0 + n, rc.end);
    copy_strided(src + rc.at * sz, sz, 0, static_cast<int>(e - q), static_cast<uint8_t*>(dst) + (q - p0) * sz);
    q = e;
    if (q < p0 + n) next_run(rc, m, shape, lr);
  }
}

template <class T>
void gather_block(const T* src, const int64_t* off, int n, T* dst) {
  for (int i = 0; i < n; ++i) dst[i] = src[off[i]];
}

// gather_block of 4-byte elements whose offsets come in adjacent pairs (AffineBlock::pairs), n
// even: a pair a copy of 8 bytes (max-pool's gradient reading its input through the 2x2
// windows: element by element this copy was most of that kernel). The same bytes either way.
void gather_pairs(const uint8_t* src, const int64_t* off, int n, uint8_t* dst) {
  for (int i = 0; i < n; i += 2) std::memcpy(dst + i * 4, src + off[i] * 4, 8);
}

// copy_affine() for a leaf with a block: whole blocks and the tile's partial ones at its ends.
void copy_block(const LeafMap& m, const AffineBlock& b, const Shape& shape, int64_t p0, int n, void* dst) {
  const size_t nd = shape.size(), no = nd - b.axes, sz = itemsize(m.node->dtype);
  const uint8_t* src = m.node->buffer->bytes();
  Coords c(nd);  // the outer axes' coordinates of the block holding p0 (the block's own are 0)
  int64_t q = p0 / b.size, j = p0 % b.size;
  for (size_t d = no; d-- > 0;) { c[d] = q % shape[d]; q /= shape[d]; }
  for (size_t d = no; d < nd; ++d) c[d] = 0;
  for (int i = 0; i < n;) {
    const int seg = static_cast<int>(std::min<int64_t>(n - i, b.size - j));
    const uint8_t* s = src + m.index(c.data()) * sz;
    uint8_t* o = static_cast<uint8_t*>(dst) + i * sz;
    switch (sz) {
      case 1: gather_block(s, b.off.data() + j, seg, o); break;
      case 2: gather_block(reinterpret_cast<const uint16_t*>(s), b.off.data() + j, seg, reinterpret_cast<uint16_t*>(o)); break;
      case 4:
        if (b.pairs && j % 2 == 0 && seg % 2 == 0) gather_pairs(s, b.off.data() + j, seg, o);
        else gather_block(reinterpret_cast<const uint32_t*>(s), b.off.data() + j, seg, reinterpret_cast<uint32_t*>(o));
        break;
      default: gather_block(reinterpret_cast<const uint64_t*>(s), b.off.data() + j, seg, reinterpret_cast<uint64_t*>(o)); break;
    }
    i += seg;
    j = 0;
    for (size_t d = no; d-- > 0;) { if (++c[d] < shape[d]) break; c[d] = 0; }
  }
}

// A leaf read through one view with a mask (a pad: the gradient of a chunk or a shrink) for
// flat positions p0.. of `shape` into dst: what gather() reads through flat_indices(), a row
// segment along the last axis at a time, copied where inside the mask and zero bits elsewhere.
void copy_masked(const View& v, const Buffer& b, const Shape& shape, int64_t p0, int n, void* dst) {
  const size_t nd = shape.size(), sz = itemsize(b.dtype);
  Coords c(nd);
  int64_t p = p0;
  for (size_t d = nd; d-- > 0;) { c[d] = shape[d] ? p % shape[d] : 0; p = shape[d] ? p / shape[d] : 0; }
  uint8_t* out = static_cast<uint8_t*>(dst);
  const int64_t lo = v.mask[nd - 1].first, hi = v.mask[nd - 1].second, last = v.strides[nd - 1];
  for (int i = 0; i < n;) {
    const int seg = static_cast<int>(std::min<int64_t>(n - i, shape[nd - 1] - c[nd - 1]));
    bool inside = true;
    int64_t base = v.offset;
    for (size_t d = 0; d + 1 < nd; ++d) {
      inside = inside && c[d] >= v.mask[d].first && c[d] < v.mask[d].second;
      base += c[d] * v.strides[d];
    }
    const int64_t a = std::max(c[nd - 1], lo), e = std::min(c[nd - 1] + seg, hi);
    std::memset(out + i * sz, 0, static_cast<size_t>(seg) * sz);
    if (inside && a < e)
      copy_strided(b.bytes() + (base + a * last) * sz, sz, last, static_cast<int>(e - a),
                   out + (i + a - c[nd - 1]) * sz);
    i += seg;
    c[nd - 1] = 0;  // carry into the outer axes
    for (size_t d = nd - 1; d-- > 0;) { if (++c[d] < shape[d]) break; c[d] = 0; }
  }
}

}  // namespace

namespace {

// An object this thread reuses from one task to the next, taken from and returned to a
// per-thread stack (a task nested on the same thread gets its own): its vectors keep their
// capacity, so a task allocates nothing in the steady state. Fresh kilobyte-sized vectors per
// task were most of a small op's malloc/free time (and their frees ran malloc_consolidate).
template <class T>
class Reused {
 public:
  Reused() {
    auto& free = pool();
    if (free.empty()) {
      obj_ = std::make_unique<T>();
    } else {
      obj_ = std::move(free.back());
      free.pop_back();
    }
  }
  ~Reused() { pool().push_back(std::move(obj_)); }
  Reused(const Reused&) = delete;
  Reused& operator=(const Reused&) = delete;
  T& operator*() { return *obj_; }

 private:
  static std::vector<std::unique_ptr<T>>& pool() {
    thread_local std::vector<std::unique_ptr<T>> p;
    return p;
  }
  std::unique_ptr<T> obj_;
};

}  // namespace

// Accumulator programs whose leaves are all read in place (contiguous) or broadcast (one element)
// run a task's tiles in one call instead of tile by tile: the leaves' pointers, the kernel's
// dispatch and its loop's start are then paid once per 8K elements instead of per 256. How many
// whole tiles from the start can (every contiguous leaf's SIMD slack inside its buffer, as for
// TileEval's direct reads); 0 if the program is not such a one. *steps gets the program's steps
// with the broadcast leaves' marked (broadcast_scalar_leaves): a copy, because a TinyJit replay
// keeps the program between runs (plan.cpp) and a leaf broadcast in one run may not be in the next. Only for kernels whose streams fit in the last-level cache:
// max(a*b + c, 0) over 16M float32 (256 MB of streams, from memory) ran at 25-26 GB/s this way
// against 28-29 GB/s tile by tile (bench/cpu/elementwise_bench.cpp, 3 alternating rounds), while
// Adam's kernels on a 784 x 512 parameter (6 MB) took ~0.7x the tile path's time (alone,
// bench/cpu/adam_step_bench.cpp).
constexpr int64_t kAccInPlaceMaxBytes = int64_t{32} << 20;
int64_t acc_in_place_tiles(const Program& prog, const std::vector<bool>& scalar, const std::vector<bool>& contiguous,
                           int64_t total, std::vector<AccStep>* steps) {
  if (prog.acc.empty()) return 0;
  int64_t limit = total, streams = 1 + static_cast<int64_t>(prog.outputs.size());
  for (size_t l = 0; l < prog.leaves.size(); ++l) {
    if (scalar[l]) continue;
    if (!contiguous[l]) return 0;
    limit = std::min(limit, prog.leaves[l]->buffer->count - kTilePad);
    ++streams;
  }
  if (streams * total * static_cast<int64_t>(itemsize(prog.dtype)) > kAccInPlaceMaxBytes) return 0;
  *steps = prog.acc;
  broadcast_scalar_leaves(*steps, scalar);
  return std::max<int64_t>(limit, 0) / kTile;
}

// Positions [p0, p0 + n) of such a program into dst, and of its other outputs into outs (each at
// its buffer's start; n whole tiles).
void acc_in_place(const Program& prog, const std::vector<AccStep>& steps, const std::vector<LeafMap>& maps,
                  const std::vector<bool>& scalar, int64_t p0, int n, uint8_t* dst,
                  const std::vector<std::shared_ptr<Buffer>>& outs) {
  count_acc_range_run();
  const size_t L = prog.leaves.size();
  const void* small[8];
  std::vector<const void*> big(L > 8 ? L : 0);
  const void** leaves = L > 8 ? big.data() : small;
  for (size_t l = 0; l < L; ++l) {
    const Node* leaf = prog.leaves[l];
    const size_t sz = itemsize(leaf->dtype);
    leaves[l] = leaf->buffer->bytes() + (scalar[l] ? maps[l].offset : p0) * static_cast<int64_t>(sz);
  }
  void* o_small[4];
  std::vector<void*> o_big(outs.size() > 4 ? outs.size() : 0);
  void** o_at = outs.size() > 4 ? o_big.data() : o_small;
  for (size_t k = 0; k < outs.size(); ++k) o_at[k] = outs[k]->bytes() + p0 * static_cast<int64_t>(itemsize(outs[k]->dtype));
  fast_acc(prog.dtype)(steps.data(), static_cast<int>(steps.size()), leaves, o_at, dst, n);
}

namespace {
std::atomic<int64_t> g_multi_output_runs{0};
std::atomic<int64_t> g_row_fill_tasks{0};
std::atomic<int64_t> g_run_segment_tasks{0};
}  // namespace

int64_t multi_output_runs() { return g_multi_output_runs.load(); }
int64_t row_fill_tasks() { return g_row_fill_tasks.load(); }
int64_t run_segment_tasks() { return g_run_segment_tasks.load(); }

void run_elementwise(Node& out, const Program* given, const std::vector<Node*>& also) {
  Program built;
  if (!given) built = build_program(&out, also);
  const Program& prog = given ? *given : built;
  // A padded view times 1: rows and borders (pad_copy.cpp), for a kernel of one output.
  if (also.empty() && try_pad_copy(out, prog)) return;
  // A stack's WHERE chain over its slots: each source copied into its slot (select_copy.cpp).
  if (also.empty() && try_select_copy(out, prog)) return;
  std::vector<LeafMap> maps;
  maps.reserve(prog.leaves.size());
  for (const Node* l : prog.leaves) maps.emplace_back(l);
  const int64_t total = numel(out.shape);
  std::vector<bool> contiguous, scalar;
  for (size_t l = 0; l < maps.size(); ++l) {
    contiguous.push_back(prog.leaves[l]->view.is_contiguous());
    bool all_zero = maps[l].affine;  // a broadcast scalar: every position reads one element
    for (int64_t st : maps[l].strides) all_zero = all_zero && st == 0;
    scalar.push_back(all_zero);
  }
  auto buf = std::make_shared<Buffer>(out.dtype, total);
  const size_t osz = itemsize(out.dtype);
  // The other outputs' buffers, each of out's positions in its own dtype.
  std::vector<std::shared_ptr<Buffer>> also_buf;
  also_buf.reserve(also.size());
  for (const Node* a : also) {
    assert(a->shape == out.shape);
    also_buf.push_back(std::make_shared<Buffer>(a->dtype, total));
  }
  if (!also.empty()) g_multi_output_runs.fetch_add(1, std::memory_order_relaxed);
  const int64_t tiles = (total + kTile - 1) / kTile;
  std::vector<AccStep> acc_steps;
  const int64_t acc_tiles = acc_in_place_tiles(prog, scalar, contiguous, total, &acc_steps);
  // Affine leaves constant over runs of `runs[l].r` flat positions, the product of the axes from
  // `runs[l].from` on (a per-channel bias broadcast over a plane: conv2d's bias add): a tile
  // inside one run reads one element, filled once per run; another tile is filled run by run
  // (fill_run_segments) where RowFill does not take the leaf. r is 0 below kMinRunSegment.
  std::vector<LeafRuns> runs(maps.size());
  std::vector<AffineBlock> block(maps.size());
  for (size_t l = 0; l < maps.size(); ++l) {
    if (scalar[l] || contiguous[l] || !maps[l].affine) continue;
    int64_t r = 1;
    size_t k = out.shape.size();
    for (; k > 0 && (maps[l].strides[k - 1] == 0 || out.shape[k - 1] == 1); --k) r *= out.shape[k - 1];
    if (r >= kMinRunSegment) runs[l] = {r, k};
    block[l] = affine_block(maps[l], out.shape);
  }
  // Every leaf in place, broadcast or constant over runs, the program an accumulator program:
  // run a run at a time (acc_runs.h) instead of tile by tile.
  std::vector<AccStep> run_steps;
  const bool by_runs = plan_acc_runs(prog, scalar, contiguous, runs, &run_steps);
  std::vector<RowFill> fills(maps.size());
  for (size_t l = 0; l < maps.size(); ++l)
    if (!scalar[l] && !contiguous[l] && runs[l].r < kTile) fills[l] = row_fill(maps[l], out.shape);
  // Leaves read through a stack of views (attention's query scaled as it is read through the
  // reshape into heads): copied as runs kept by the stack (view_runs.h) instead of walking the
  // views and gathering by index for every tile (4-8% of the ONNX transformer encoder).
  std::vector<std::shared_ptr<const ViewRuns>> kept(maps.size());
  for (size_t l = 0; l < maps.size(); ++l) {
    const Node* leaf = prog.leaves[l];
    if (!scalar[l] && !contiguous[l] && !maps[l].affine && leaf->view.views().size() > 1)
      kept[l] = elementwise_view_runs(leaf->view, out.shape);
  }
  // Broadcast scalars are expanded into a tile once, shared by every task (in tiles this
  // thread reuses: fresh ones per call were a small op's largest allocations).
  Reused<std::vector<std::vector<uint64_t>>> splat_tiles;
  std::vector<std::vector<uint64_t>>& splat = *splat_tiles;
  if (splat.size() < maps.size()) splat.resize(maps.size());
  for (size_t l = 0; l < maps.size(); ++l) {
    if (!scalar[l]) continue;
    splat[l].resize(kTile + kTilePad);
    const Buffer& b = *prog.leaves[l]->buffer;  // gather()'s element size: the buffer's
    copy_strided(b.bytes() + maps[l].offset * itemsize(b.dtype), itemsize(b.dtype), 0, kTile + kTilePad, splat[l].data());
  }
  // Tiles are grouped into fixed-size tasks: the split never depends on the thread count.
  constexpr int64_t kTilesPerTask = 32;
  parallel_for((tiles + kTilesPerTask - 1) / kTilesPerTask, [&](int64_t task) {
    if (by_runs)
      return run_acc_runs(prog, run_steps, maps, scalar, runs, out.shape, task * kTilesPerTask * kTile,
                          std::min(total, (task + 1) * kTilesPerTask * kTile), *buf, also_buf);
    TileEval ev(prog);
    // Index lists, for leaves read neither in place nor as a splat (kept per thread).
    thread_local std::vector<std::vector<int64_t>> idx;
    // Affine leaves' elements, copied row segment by row segment (kept per thread).
    thread_local std::vector<std::vector<uint64_t>> staged;
    // Leaves constant over the tile, filled once per run (kept per thread; filled_at says
    // which run this task's tile holds).
    thread_local std::vector<std::vector<uint64_t>> fill;
    if (idx.size() < maps.size()) idx.resize(maps.size());
    if (staged.size() < maps.size()) staged.resize(maps.size());
    if (fill.size() < maps.size()) fill.resize(maps.size());
    std::vector<const int64_t*> ptrs(maps.size());
    std::vector<const void*> direct(maps.size(), nullptr);
    std::vector<int64_t> filled_at(maps.size(), -1);
    std::vector<RunCursor> cursor(maps.size());  // leaves with runs[l].r: the run a tile is in
    std::vector<void*> outs(also.size());
    bool row_filled = false;  // a tile of this task filled a leaf by runs
    bool run_segment_tile = false;  // ... or by fill_run_segments
    int64_t t = task * kTilesPerTask;
    const int64_t t_end = std::min(tiles, (task + 1) * kTilesPerTask);
    if (t < acc_tiles) {  // the task's first tiles in one call, leaves read in place
      const int64_t e = std::min(t_end, acc_tiles);
      acc_in_place(prog, acc_steps, maps, scalar, t * kTile, static_cast<int>((e - t) * kTile), buf->bytes() + t * kTile * osz,
                   also_buf);
      t = e;
    }
    for (; t < t_end; ++t) {
      int64_t p0 = t * kTile;
      int n = static_cast<int>(std::min<int64_t>(kTile, total - p0));
      // Contiguous leaves are read in place when the SIMD slack past n stays inside the buffer.
      for (size_t l = 0; l < maps.size(); ++l) {
        const Node* leaf = prog.leaves[l];
        direct[l] = nullptr;
        if (scalar[l])
          direct[l] = splat[l].data();
        else if (contiguous[l] && p0 + n + kTilePad <= leaf->buffer->count)
          direct[l] = leaf->buffer->bytes() + p0 * itemsize(leaf->dtype);
        else if (runs[l].r >= kTile && in_one_run(cursor[l], maps[l], out.shape, runs[l], p0, n)) {
          const int64_t at = cursor[l].at;
          if (at != filled_at[l]) {  // a new run: fill the tile (and its SIMD slack) once
            fill[l].resize(kTile + kTilePad);  // an affine leaf has no padding: at >= 0
            const size_t sz = itemsize(leaf->dtype);
            copy_strided(leaf->buffer->bytes() + at * sz, sz, 0, kTile + kTilePad, fill[l].data());
            filled_at[l] = at;
          }
          direct[l] = fill[l].data();
        } else if (fills[l].r) {  // p0 starts a run (r divides kTile): run p0 / r first
          const RowFill& f = fills[l];
          const size_t sz = itemsize(leaf->dtype);
          staged[l].resize(kTile + kTilePad, 0);
          fill_runs(leaf->buffer->bytes() + (maps[l].offset + t * (kTile / f.r) * f.step) * static_cast<int64_t>(sz), sz,
                    f.step, f.r, n, staged[l].data());
          direct[l] = staged[l].data();
          row_filled = true;
        } else if (runs[l].r) {
          staged[l].resize(kTile + kTilePad, 0);
          fill_run_segments(cursor[l], maps[l], out.shape, runs[l], p0, n, staged[l].data());
          direct[l] = staged[l].data();
          run_segment_tile = true;
        } else if (maps[l].affine && !out.shape.empty()) {
          staged[l].resize(kTile + kTilePad, 0);
          if (block[l].axes) copy_block(maps[l], block[l], out.shape, p0, n, staged[l].data());
          else copy_affine(maps[l], out.shape, p0, n, staged[l].data());
          direct[l] = staged[l].data();
        } else if (leaf->view.views().size() == 1 && !out.shape.empty()) {  // one view, masked
          staged[l].resize(kTile + kTilePad, 0);
          copy_masked(leaf->view.views()[0], *leaf->buffer, out.shape, p0, n, staged[l].data());
          direct[l] = staged[l].data();
        } else if (kept[l]) {
          staged[l].resize(kTile + kTilePad, 0);
          copy_view_runs(*leaf->buffer, *kept[l], p0, n, staged[l].data());
          direct[l] = staged[l].data();
        } else {
          idx[l].resize(kTile);
          ptrs[l] = idx[l].data();
          flat_indices(maps[l], out.shape, p0, n, idx[l].data());
        }
      }
      // A full tile's result is written straight into the output (SIMD ops store whole
      // vectors, and kTile is a multiple of every vector length); a partial one is copied.
      void* dst = buf->bytes() + p0 * osz;
      for (size_t k = 0; k < also.size(); ++k) outs[k] = also_buf[k]->bytes() + p0 * itemsize(also[k]->dtype);
      const bool whole = n == kTile;
      const void* r = ev.eval(ptrs, n, &direct, whole ? dst : nullptr, whole && !also.empty() ? outs.data() : nullptr);
      if (r != dst) std::memcpy(dst, r, n * osz);
      for (size_t k = 0; k < also.size(); ++k) {
        const void* v = ev.at(prog.outputs[k]);
        if (v != outs[k]) std::memcpy(outs[k], v, n * itemsize(also[k]->dtype));
      }
    }
    if (row_filled) g_row_fill_tasks.fetch_add(1, std::memory_order_relaxed);
    if (run_segment_tile) g_run_segment_tasks.fetch_add(1, std::memory_order_relaxed);
  }, Round::NearestEven);
  out.buffer = buf;
  out.view.set_contiguous(out.shape);
  for (size_t k = 0; k < also.size(); ++k) {
    also[k]->buffer = std::move(also_buf[k]);
    also[k]->view.set_contiguous(also[k]->shape);
  }
}

// ---- reductions: a left fold per output, vectorised across outputs ----

namespace {

// What every task of one REDUCE shares. A task folds `to` consecutive outputs; each step
// evaluates the fused source at a chunk of `tr` reduce positions for all of them, stored
// r-major (position (r0 + j, o0 + t) at j * no + t) so the fold runs across outputs.
struct ReducePlan {
  Node& out;
  Program prog;
  std::vector<LeafMap> maps;
  Shape in_shape, inner;  // the source's shape; the reduced sub-space (kept axes are 1)
  size_t nd;
  int64_t O, R;           // outputs, reduce positions per output
  DType d;
  size_t sz;
  ReduceOp rop;
  int to, tr;
  FastReduceFn fast;
  bool hw_round;
  uint64_t identity;

  explicit ReducePlan(Node& o)
      : out(o), prog(build_program(o.src[0].get())), in_shape(o.src[0]->shape), nd(in_shape.size()),
        d(o.dtype), sz(itemsize(o.dtype)), rop(o.arg.reduce_op) {
    maps.reserve(prog.leaves.size());  // one block, not a regrowth (and LeafMap moves) per leaf
    for (const Node* l : prog.leaves) maps.emplace_back(l);
    inner.assign(nd, 1);
    for (int64_t ax : out.arg.ints) inner[ax] = in_shape[ax];
    O = numel(out.shape);
    R = numel(inner);
    to = static_cast<int>(std::min<int64_t>(O, kTile));
    // Few outputs over many terms (batchnorm's statistics: 32 channels of 204,800 terms) would
    // be one task, one thread's work: their tasks are halved, down to 16 outputs (a vector of
    // float32 on AVX-512), until there are 4. Each output is still one task's fold, in order:
    // the same bits; the split depends on the shape only.
    while ((to + 1) / 2 >= 16 && (O + to - 1) / to < 4 && to * R >= (int64_t{1} << 16)) to = (to + 1) / 2;
    tr = std::max(1, kTile / std::max(to, 1));
    fast = fast_reduce(rop, d);
    // The op table's ROUNDS column for the combining op: MAX never needs the hardware mode.
    hw_round = op_info(combiner(rop)).rounds && out.rnd != Round::NearestEven;
    identity = ref::reduce_identity(rop, d);
  }
};

// A ReduceTask's working memory. Sizes are set per task; contents past what a task writes are
// whatever an earlier task left (SIMD slack lanes, whose results are never read, as TileEval's).
struct ReduceScratch {
  std::vector<std::vector<int64_t>> idx;     // per leaf: buffer indices of the chunk's positions
  std::vector<const int64_t*> ptrs;
  std::vector<int64_t> oc;                   // output coordinates, no_ x nd
  std::vector<std::vector<int64_t>> base;    // affine leaves: index of each output
  std::vector<int64_t> ostride;              // ... and its step from one output to the next
  std::vector<char> staging;                 // per leaf: copied in by stage()
  std::vector<std::vector<uint64_t>> staged; // staged leaves' values
  std::vector<const void*> direct;           // staged tiles for TileEval, null for the rest
  std::vector<uint64_t> acc;
  std::vector<int64_t> rc, full, rcs;        // next reduce coordinate; scratch; the chunk's
};

// n vectors of at least `size` elements each (new elements zero, kept ones as they were).
template <class T>
void size_all(std::vector<std::vector<T>>& v, size_t n, size_t size) {
  if (v.size() < n) v.resize(n);
  for (size_t i = 0; i < n; ++i)
    if (v[i].size() < size) v[i].resize(size, 0);
}

class ReduceTask {
 public:
  ReduceTask(const ReducePlan& p, int64_t task)
      : p_(p), o0_(task * p.to), no_(static_cast<int>(std::min<int64_t>(p.to, p.O - o0_))), ev_(p.prog),
        s_(*scratch_) {
    const size_t L = p.maps.size();
    size_all(s_.idx, L, kTile);
    s_.ptrs.resize(L);
    for (size_t l = 0; l < L; ++l) s_.ptrs[l] = s_.idx[l].data();
    s_.direct.assign(L, nullptr);
    s_.rc.assign(p.nd, 0);
    s_.full.resize(p.nd);
    if (s_.acc.size() < kTile + kTilePad) s_.acc.resize(kTile + kTilePad, 0);
    output_coords();
    affine_bases();
    acc_ = reinterpret_cast<uint8_t*>(s_.acc.data());
    for (int t = 0; t < no_; ++t) std::memcpy(acc_ + t * p.sz, &p.identity, p.sz);
  }

  void run(Buffer& buf) {
    for (int64_t r0 = 0; r0 < p_.R; r0 += p_.tr) {
      const int nr = static_cast<int>(std::min<int64_t>(p_.tr, p_.R - r0));
      chunk_coords(nr);
      for (size_t l = 0; l < p_.maps.size(); ++l) {
        if (s_.staging[l]) stage(l, nr);
        else leaf_indices(l, nr);
      }
      fold(static_cast<const uint8_t*>(ev_.eval(s_.ptrs, nr * no_, &s_.direct)), nr);
    }
    std::memcpy(buf.bytes() + o0_ * p_.sz, acc_, no_ * p_.sz);
  }

 private:
  // Output coordinates of this task: the first by division, the rest counted up (a division
  // per axis per output cost more than the fold itself).
  void output_coords() {
    const size_t nd = p_.nd;
    std::vector<int64_t>& oc = s_.oc;
    oc.resize(static_cast<size_t>(no_) * nd);
    int64_t p = o0_;
    for (size_t k = nd; k-- > 0;) {
      oc[k] = p_.out.shape[k] ? p % p_.out.shape[k] : 0;
      p = p_.out.shape[k] ? p / p_.out.shape[k] : 0;
    }
    for (int t = 1; t < no_; ++t) {
      int64_t* c = &oc[t * nd];
      std::copy(c - nd, c, c);
      for (size_t k = nd; k-- > 0;) {
        if (++c[k] < p_.out.shape[k]) break;
        c[k] = 0;
      }
    }
  }

  // Affine leaves split their index into an output part (per task) and a reduce part. Where the
  // output parts step by a constant (the outputs are a row of the leaf: a sum over the batch
  // axes, or over a contiguous last axis), the leaf's values are copied in without an index
  // list (stage()).
  void affine_bases() {
    const size_t L = p_.maps.size();
    if (s_.base.size() < L) s_.base.resize(L);
    if (s_.staged.size() < L) s_.staged.resize(L);
    s_.ostride.assign(L, 0);
    s_.staging.assign(L, 0);
    for (size_t l = 0; l < L; ++l) {
      if (!p_.maps[l].affine) continue;
      std::vector<int64_t>& base = s_.base[l];
      base.resize(no_);
      for (int t = 0; t < no_; ++t) base[t] = p_.maps[l].index(&s_.oc[t * p_.nd]);
      bool arithmetic = true;
      s_.ostride[l] = no_ > 1 ? base[1] - base[0] : 0;
      for (int t = 1; t < no_ && arithmetic; ++t) arithmetic = base[t] - base[t - 1] == s_.ostride[l];
      if (arithmetic) {
        if (s_.staged[l].size() < kTile + kTilePad) s_.staged[l].resize(kTile + kTilePad, 0);
        s_.staging[l] = 1;
        s_.direct[l] = s_.staged[l].data();
      }
    }
  }

  // Leaf l's values at positions (r0 + j, o0 + t), at j * no + t of its staging tile.
  void stage(size_t l, int nr) {
    const size_t nd = p_.nd, sz = itemsize(p_.maps[l].node->dtype);
    const LeafMap& m = p_.maps[l];
    const uint8_t* src = m.node->buffer->bytes();
    uint8_t* dst = reinterpret_cast<uint8_t*>(s_.staged[l].data());
    for (int j = 0; j < nr; ++j) {
      int64_t rp = 0;
      for (size_t k = 0; k < nd; ++k) rp += s_.rcs[j * nd + k] * m.strides[k];
      copy_strided(src + (s_.base[l][0] + rp) * sz, sz, s_.ostride[l], no_, dst + j * no_ * sz);
    }
  }

  // Reduce coordinates of the chunk's nr positions, counted on from the last chunk.
  void chunk_coords(int nr) {
    const size_t nd = p_.nd;
    std::vector<int64_t>& rc = s_.rc;
    s_.rcs.resize(static_cast<size_t>(nr) * nd);
    for (int j = 0; j < nr; ++j) {
      std::copy(rc.begin(), rc.end(), s_.rcs.begin() + j * nd);
      for (size_t k = nd; k-- > 0;) { if (++rc[k] < p_.inner[k]) break; rc[k] = 0; }
    }
  }

  // Leaf l's buffer indices for positions (r0 + j, o0 + t) at j * no + t.
  void leaf_indices(size_t l, int nr) {
    const size_t nd = p_.nd;
    const LeafMap& m = p_.maps[l];
    int64_t* ix = s_.idx[l].data();
    const std::vector<int64_t>& rcs = s_.rcs;
    if (m.affine) {
      for (int j = 0; j < nr; ++j) {
        int64_t rp = 0;
        for (size_t k = 0; k < nd; ++k) rp += rcs[j * nd + k] * m.strides[k];
        for (int t = 0; t < no_; ++t) ix[j * no_ + t] = s_.base[l][t] + rp;
      }
      return;
    }
    // Several views: where the last axis is kept, consecutive outputs are a row of the source,
    // walked incrementally (pool's gradient reads through such stacks).
    const bool rows = nd > 0 && p_.inner[nd - 1] == 1;
    std::vector<int64_t>& full = s_.full;
    for (int j = 0; j < nr; ++j)
      for (int t = 0; t < no_;) {
        for (size_t k = 0; k < nd; ++k) full[k] = s_.oc[t * nd + k] + rcs[j * nd + k];
        if (!rows) { ix[j * no_ + t] = m.index(full.data()); ++t; continue; }
        const int len = static_cast<int>(std::min<int64_t>(no_ - t, p_.in_shape[nd - 1] - full[nd - 1]));
        m.row(full.data(), len, ix + j * no_ + t);
        t += len;
      }
  }

  // acc = acc op v[j] for each of the chunk's nr positions, in order: SIMD across outputs where
  // fastops has the fold, src/ref's scalar step otherwise.
  void fold(const uint8_t* v, int nr) {
    const size_t sz = p_.sz;
    if (p_.hw_round) set_hw_round(p_.out.rnd);
    for (int j = 0; j < nr; ++j) {
      if (p_.fast) {
        p_.fast(acc_, v + j * no_ * sz, no_);
        continue;
      }
      for (int t = 0; t < no_; ++t) {
        uint64_t a = 0, x = 0;
        std::memcpy(&a, acc_ + t * sz, sz);
        std::memcpy(&x, v + (j * no_ + t) * sz, sz);
        a = ref::reduce_step(p_.rop, p_.d, p_.out.rnd, a, x);
        std::memcpy(acc_ + t * sz, &a, sz);
      }
    }
    if (p_.hw_round) set_hw_round(Round::NearestEven);
  }

  const ReducePlan& p_;
  const int64_t o0_;
  const int no_;
  TileEval ev_;
  Reused<ReduceScratch> scratch_;
  ReduceScratch& s_;
  uint8_t* acc_ = nullptr;
};

}  // namespace

void run_reduce(Node& out) {
  if (try_view_fold(out) || try_run_major_reduce(out) || try_column_fold(out)) return;
  const ReducePlan plan(out);
  auto buf = std::make_shared<Buffer>(plan.d, plan.O);
  parallel_for(plan.O == 0 ? 0 : (plan.O + plan.to - 1) / plan.to, [&](int64_t task) {
    ReduceTask(plan, task).run(*buf);
  }, Round::NearestEven);
  out.buffer = buf;
  out.view.set_contiguous(out.shape);
}

}  // namespace maroon::cpu
