// A sum over a small trailing window of a compare cast to float: REDUCE ADD of
// CAST(CMPxx(a, b)) to float32 or float64, a and b realized unmasked strided views. max-pool's
// gradient is one: its mask (x == max).cast(float) is summed per window for the count of maxima
// (core/gradient.cpp, tinygrad's rule), and the plan recomputes the mask in each reader instead
// of writing it out (plan.cpp: cheap_pair). The generic fold would evaluate the program a tile at
// a time through every view; here each output counts its true compares.
//
// Why the bits are the fold's: each term is +0 or 1, and each partial sum of a left fold from +0
// is then a whole number of at most kMaxWindow, exact in float32 and float64 in every rounding
// mode (+0 + +0 is +0 in every mode too). So the fold's result is the count of true compares,
// converted exactly; no NaN can arise. The compares are IEEE's, as the reference's (sf::eq,
// sf::lt: NaN unordered, -0 == +0), on the values as stored (the kernel's FP state keeps
// subnormals: no DAZ).
#include <algorithm>
#include <atomic>
#include <vector>

#include "cpu/kernel.h"
#include "cpu/threads.h"

namespace maroon::cpu {

namespace {

constexpr int64_t kMaxWindow = 64;
constexpr int64_t kOutputsPerTask = 4096;  // a function of the shape only
std::atomic<int64_t> g_count_runs{0};

struct CountReduce {
  Op cmp;
  const Node *a, *b;
  LeafMap ma, mb;
  Shape outer;                       // the kept axes
  std::vector<int64_t> wa, wb;       // window offsets of a and b, in fold order
  CountReduce(Op op, const Node* x, const Node* y) : cmp(op), a(x), b(y), ma(x), mb(y) {}
};

// The window's offsets in a leaf with these strides, row-major over the reduced axes.
std::vector<int64_t> window_offsets(const Shape& s, const std::vector<int64_t>& strides, size_t first) {
  std::vector<int64_t> w(1, 0);
  for (size_t d = first; d < s.size(); ++d) {
    std::vector<int64_t> next;
    for (int64_t o : w)
      for (int64_t c = 0; c < s[d]; ++c) next.push_back(o + c * strides[d]);
    w.swap(next);
  }
  return w;
}

template <class S>
bool compare(Op op, S x, S y) {
  switch (op) {
    case Op::CMPEQ: return x == y;
    case Op::CMPNE: return !(x == y);
    default: return x < y;  // CMPLT
  }
}

// out[o] for o in [o0, o1): the count over the window, as T. Outer coordinates counted up.
// NW: the window's size when known at compile time (4: a 2x2 pool, the loop unrolled, its
// offsets in registers; a loop of four through the offset tables was most of the kernel), else 0.
template <class S, class T, Op op, int NW>
void count_range(const CountReduce& c, int64_t o0, int64_t o1, T* out) {
  const size_t nd = c.outer.size();
  std::vector<int64_t> coord(nd, 0);
  int64_t p = o0, ia = c.ma.offset, ib = c.mb.offset;
  for (size_t d = nd; d-- > 0;) {
    coord[d] = p % c.outer[d];
    p /= c.outer[d];
    ia += coord[d] * c.ma.strides[d];
    ib += coord[d] * c.mb.strides[d];
  }
  const S* A = reinterpret_cast<const S*>(c.a->buffer->bytes());
  const S* B = reinterpret_cast<const S*>(c.b->buffer->bytes());
  const int nw = NW ? NW : static_cast<int>(c.wa.size());  // at most kMaxWindow
  int64_t wa[kMaxWindow], wb[kMaxWindow];  // local: out's stores cannot alias them
  std::copy(c.wa.begin(), c.wa.begin() + nw, wa);
  std::copy(c.wb.begin(), c.wb.begin() + nw, wb);
  const int64_t last = nd ? c.outer[nd - 1] : 1;
  const int64_t sa = nd ? c.ma.strides[nd - 1] : 0, sb = nd ? c.mb.strides[nd - 1] : 0;
  for (int64_t o = o0; o < o1;) {
    // A run along the last kept axis: the leaves' bases step by that axis's strides.
    const int64_t len = std::min(o1 - o, last - (nd ? coord[nd - 1] : 0));
    for (int64_t t = 0; t < len; ++t) {
      const S* pa = A + ia + t * sa;
      const S* pb = B + ib + t * sb;
      int n = 0;
      for (int k = 0; k < nw; ++k) n += compare<S>(op, pa[wa[k]], pb[wb[k]]) ? 1 : 0;
      out[o + t] = static_cast<T>(n);  // +0 for none: the fold's first sum
    }
    o += len;
    if (nd == 0) break;
    ia += (len - 1) * sa + sa;
    ib += (len - 1) * sb + sb;
    coord[nd - 1] += len;
    // Carry: the last axis back to 0, the axes before it counted up.
    for (size_t d = nd; d-- > 1 && coord[d] == c.outer[d];) {
      ia -= coord[d] * c.ma.strides[d];
      ib -= coord[d] * c.mb.strides[d];
      coord[d] = 0;
      ++coord[d - 1];
      ia += c.ma.strides[d - 1];
      ib += c.mb.strides[d - 1];
    }
  }
}

template <class S, class T, Op op>
void count_range(const CountReduce& c, int64_t o0, int64_t o1, T* out) {
  if (c.wa.size() == 4) return count_range<S, T, op, 4>(c, o0, o1, out);
  return count_range<S, T, op, 0>(c, o0, o1, out);
}

template <class S, class T>
void count_range(const CountReduce& c, int64_t o0, int64_t o1, T* out) {
  switch (c.cmp) {
    case Op::CMPEQ: return count_range<S, T, Op::CMPEQ>(c, o0, o1, out);
    case Op::CMPNE: return count_range<S, T, Op::CMPNE>(c, o0, o1, out);
    default: return count_range<S, T, Op::CMPLT>(c, o0, o1, out);
  }
}

template <class T>
void count_all(const CountReduce& c, DType sd, int64_t O, T* out) {
  parallel_for((O + kOutputsPerTask - 1) / kOutputsPerTask, [&](int64_t task) {
    const int64_t o0 = task * kOutputsPerTask, o1 = std::min(O, o0 + kOutputsPerTask);
    if (sd == DType::Float32) count_range<float, T>(c, o0, o1, out);
    else count_range<double, T>(c, o0, o1, out);
  }, Round::NearestEven);
}

}  // namespace

bool try_count_reduce(Node& out) {
  if (out.op != Op::REDUCE || out.arg.reduce_op != ReduceOp::ADD) return false;
  if (out.dtype != DType::Float32 && out.dtype != DType::Float64) return false;
  const Node& cast = *out.src[0];
  if (cast.realized || cast.op != Op::CAST || cast.dtype != out.dtype) return false;
  const Node& cmp = *cast.src[0];
  if (cmp.realized || cmp.dtype != DType::Bool ||
      (cmp.op != Op::CMPEQ && cmp.op != Op::CMPNE && cmp.op != Op::CMPLT))
    return false;
  const Node* a = cmp.src[0].get();
  const Node* b = cmp.src[1].get();
  const DType sd = a->dtype;
  if (!a->realized || !b->realized || !a->buffer || !b->buffer || b->dtype != sd ||
      (sd != DType::Float32 && sd != DType::Float64))
    return false;
  const Shape& s = cast.shape;
  const size_t nd = s.size(), nr = out.arg.ints.size();
  if (nr == 0 || nr > nd) return false;
  for (size_t i = 0; i < nr; ++i)
    if (out.arg.ints[i] != static_cast<int64_t>(nd - nr + i)) return false;
  int64_t r = 1;
  for (size_t d = nd - nr; d < nd; ++d) r *= s[d];
  if (r < 1 || r > kMaxWindow) return false;
  CountReduce c(cmp.op, a, b);
  if (!c.ma.affine || !c.mb.affine) return false;
  c.outer.assign(s.begin(), s.begin() + static_cast<int64_t>(nd - nr));
  c.wa = window_offsets(s, c.ma.strides, nd - nr);
  c.wb = window_offsets(s, c.mb.strides, nd - nr);
  const int64_t O = numel(out.shape);
  auto buf = std::make_shared<Buffer>(out.dtype, O);
  if (out.dtype == DType::Float32) count_all(c, sd, O, reinterpret_cast<float*>(buf->bytes()));
  else count_all(c, sd, O, reinterpret_cast<double*>(buf->bytes()));
  out.buffer = buf;
  out.view.set_contiguous(out.shape);
  g_count_runs.fetch_add(1, std::memory_order_relaxed);
  return true;
}

int64_t count_reduce_runs() { return g_count_runs.load(std::memory_order_relaxed); }

}  // namespace maroon::cpu
