// A reduction over leading axes of one realized buffer whose outputs are adjacent in it: a column
// sum (`x.sum(0)` of a (4096, 1024) matrix, a bias gradient summed over the batch), or a max or
// product the same way. The generic fold (interp.cpp, ReduceTask) evaluates tiles of 256 outputs
// by one position, so every row of every output block went through a staging copy, the tile
// interpreter and the fold kernel, with a tile's setup per 256 elements: 1.3 ms for the
// (4096, 1024) sum against PyTorch's 0.87 (one thread). Here each output block folds the rows in
// place: acc[t] = op(acc[t], x[r][o0 + t]) for every reduce position r in index order, from the
// identity, by the same fold kernel (fastops.h's fast_reduce, which makes a NaN canonical at
// every step as the generic fold's kernel does), with the hardware rounding mode the generic fold
// sets. Each output is the same left fold of the same terms, so the same bits; which outputs a
// task holds is a function of the shape alone.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include "core/ops.h"
#include "cpu/fastops.h"
#include "cpu/kernel.h"
#include "cpu/threads.h"
#include "ref/scalar.h"

namespace maroon::cpu {

namespace {

std::atomic<int64_t> g_column_folds{0};

// Outputs a task folds at least (and at most kMaxBlock), a multiple of kVec: four tasks where
// there are enough, so that two threads share the work (a split by the shape only). The fold
// kernel reads and writes whole vectors, so a row's last n mod kVec outputs go through a padded
// scratch; on a multiple of kVec it stops exactly at n where its vectors' lanes divide kVec
// (every x86 and NEON target, SVE of a power-of-two length), which fold_exact checks, so nothing
// is read past a row of the source (whose buffer may be a caller's array without slack) nor
// written past a task's outputs.
constexpr int64_t kVec = 64, kMinBlock = 256, kMaxBlock = 4096;

// Whether `fold` over kVec elements touches nothing past them (a sentinel after them stays).
bool fold_exact(FastReduceFn fold, size_t sz) {
  alignas(64) uint8_t acc[2 * kVec * 8] = {}, x[2 * kVec * 8] = {};
  std::memset(acc + kVec * sz, 0x5A, kVec * sz);
  fold(acc, x, static_cast<int>(kVec));
  for (size_t i = kVec * sz; i < 2 * kVec * sz; ++i)
    if (acc[i] != 0x5A) return false;
  return true;
}

struct Columns {
  int64_t O = 1, R = 1;              // outputs (adjacent in the buffer), reduce positions
  int64_t first = 0;                 // buffer index of output 0 at reduce position 0
  std::vector<int64_t> rshape, rstride;  // the reduced axes (size > 1), outermost first
};

// The source's single unmasked view: its kept axes run through the outputs one apart (their
// strides those of a row-major block ending in stride 1), in the outputs' order; the reduced axes
// may lie anywhere, and the fold visits their coordinates in row-major order, as the generic fold
// does. Read from the view itself: a LeafMap of a stack would build its index table here for
// nothing (the generic fold builds its own).
bool plan_columns(const Node& out, const ShapeTracker& view, Columns* c) {
  const Shape& in = out.src[0]->shape;
  if (view.views().size() != 1 || view.views()[0].has_mask()) return false;
  const View& v = view.views()[0];
  if (v.strides.size() != in.size()) return false;
  std::vector<bool> red(in.size(), false);
  for (int64_t a : out.arg.ints) red[static_cast<size_t>(a)] = true;
  int64_t expect = 1;
  for (size_t a = in.size(); a-- > 0;) {
    if (in[a] == 1) continue;
    if (!red[a]) {
      if (v.strides[a] != expect) return false;
      expect *= in[a];
      c->O *= in[a];
    } else {
      c->rshape.insert(c->rshape.begin(), in[a]);
      c->rstride.insert(c->rstride.begin(), v.strides[a]);
      c->R *= in[a];
    }
  }
  c->first = v.offset;
  return c->O >= kVec && c->R >= 2;
}

}  // namespace

bool try_column_fold(Node& out) {
  if (out.op != Op::REDUCE || out.src.empty()) return false;
  const Node& src = *out.src[0];
  if (!src.realized || !src.buffer || src.dtype != out.dtype || numel(out.shape) < kVec) return false;
  const FastReduceFn fold = fast_reduce(out.arg.reduce_op, out.dtype);
  Columns c;
  const size_t sz = itemsize(out.dtype);
  if (!fold || !plan_columns(out, src.view, &c) || !fold_exact(fold, sz)) return false;
  const int64_t block = std::min(kMaxBlock, std::max(kMinBlock, ((c.O + 3) / 4 + kVec - 1) / kVec * kVec));
  const uint64_t identity = ref::reduce_identity(out.arg.reduce_op, out.dtype);
  const bool hw_round = op_info(combiner(out.arg.reduce_op)).rounds && out.rnd != Round::NearestEven;
  auto buf = std::make_shared<Buffer>(out.dtype, c.O);
  const uint8_t* x = src.buffer->bytes();
  uint8_t* o = buf->bytes();
  const int64_t isz = static_cast<int64_t>(sz);
  parallel_for((c.O + block - 1) / block, [&](int64_t task) {
    const int64_t o0 = task * block, n = std::min(block, c.O - o0), whole = n / kVec * kVec, tail = n - whole;
    uint8_t* acc = o + o0 * isz;
    alignas(64) uint64_t tail_acc[2 * kVec], tail_x[2 * kVec];  // kVec elements and a vector's slack
    uint8_t* tacc = reinterpret_cast<uint8_t*>(tail_acc);
    for (int64_t t = 0; t < n; ++t) std::memcpy(acc + t * isz, &identity, sz);
    std::memcpy(tacc, acc + whole * isz, static_cast<size_t>(tail * isz));
    if (hw_round) set_hw_round(out.rnd);
    std::vector<int64_t> rc(c.rshape.size(), 0);  // the reduce coordinates, counted up
    int64_t at = c.first + o0;
    for (int64_t r = 0; r < c.R; ++r) {
      const uint8_t* row = x + at * isz;
      if (whole) fold(acc, row, static_cast<int>(whole));
      if (tail) {
        std::memcpy(tail_x, row + whole * isz, static_cast<size_t>(tail * isz));
        fold(tacc, tail_x, static_cast<int>(tail));
      }
      for (size_t k = rc.size(); k-- > 0;) {
        at += c.rstride[k];
        if (++rc[k] < c.rshape[k]) break;
        at -= c.rstride[k] * c.rshape[k];
        rc[k] = 0;
      }
    }
    if (hw_round) set_hw_round(Round::NearestEven);
    std::memcpy(acc + whole * isz, tacc, static_cast<size_t>(tail * isz));
  }, Round::NearestEven);
  out.buffer = std::move(buf);
  out.view.set_contiguous(out.shape);
  g_column_folds.fetch_add(1, std::memory_order_relaxed);
  return true;
}

int64_t column_fold_runs() { return g_column_folds.load(std::memory_order_relaxed); }

}  // namespace maroon::cpu
