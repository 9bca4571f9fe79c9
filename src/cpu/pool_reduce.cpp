// Reductions over a few trailing axes of a strided view of a buffer: the pools' windows
// (MaxPool and AveragePool over (N, C, out..., kernel...), a reshape and permute of the input,
// src/onnx/ops_pool.cpp) and global pooling over small planes. Each output is the same left fold
// from the same identity over the same positions in the same order as interp.cpp's run_reduce,
// with the same SIMD fold across outputs (fastops' FastReduceFn), so the bits are the same; what
// changes is the bookkeeping: run_reduce computes each output's coordinates and leaf index
// anew per task, which cost the ONNX CNN's 2x2 max-pools more than the maxima themselves.
#include "cpu/pool_reduce.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cpu/fastops.h"
#include "cpu/kernel.h"
#include "cpu/threads.h"
#include "cpu/window_gather.h"
#include "ref/scalar.h"

namespace maroon::cpu {

namespace {

// Outputs per task: fixed, so the split never depends on the thread count (it could not change
// a bit anyway: each output is folded by one task).
constexpr int kOutputsPerTask = kTile;
// The 2 x 2 pools' kernel needs no tile: 2048 outputs a task, so the CNN's first pool is 64
// tasks, not 512 (each task's setup and the pool's hand-out were a third of the pool's time).
constexpr int kPool2x2OutputsPerTask = 2048;
// Longest window taken here; longer folds go to run_reduce.
constexpr int64_t kMaxWindow = 64;

std::atomic<int64_t> g_runs{0}, g_gather_runs{0}, g_pool2x2_runs{0};

struct WindowReduce {
  const Buffer* src;
  int64_t offset = 0;
  Shape outer;                   // the kept axes (leading)
  std::vector<int64_t> ostride;  // their strides in the source
  std::vector<int64_t> window;   // offsets of the reduced positions, in fold order
};

// The reduction as a fold over a window of offsets, or false: the source is not one strided view
// of a realized buffer, or the reduced axes are not the trailing ones, or the window is long.
bool describe(const Node& out, WindowReduce* w) {
  const Node& s = *out.src[0];
  if (!s.realized || !s.buffer || s.view.views().size() != 1 || s.view.views()[0].has_mask()) return false;
  const View& v = s.view.views()[0];
  const size_t nd = s.shape.size(), nr = out.arg.ints.size();
  if (nr == 0 || nr > nd) return false;
  for (size_t i = 0; i < nr; ++i)
    if (out.arg.ints[i] != static_cast<int64_t>(nd - nr + i)) return false;
  int64_t r = 1;
  for (size_t d = nd - nr; d < nd; ++d) r *= s.shape[d];
  if (r < 1 || r > kMaxWindow) return false;
  w->src = s.buffer.get();
  w->offset = v.offset;
  w->outer.assign(s.shape.begin(), s.shape.begin() + static_cast<int64_t>(nd - nr));
  w->ostride.assign(v.strides.begin(), v.strides.begin() + static_cast<int64_t>(nd - nr));
  w->window.assign(1, 0);  // row-major over the reduced axes, the last fastest: run_reduce's order
  for (size_t d = nd - nr; d < nd; ++d) {
    std::vector<int64_t> next;
    for (int64_t o : w->window)
      for (int64_t c = 0; c < s.shape[d]; ++c) next.push_back(o + c * v.strides[d]);
    w->window.swap(next);
  }
  return true;
}

// Outputs [o0, o0 + n) as runs along the last kept axis: run r is outputs [at[r], at[r + 1])
// whose source offsets are start[r] + t * step (step: that axis's stride). The first output by
// division, the rest counted up a run at a time (an odometer step per output was 45% of the
// CNN's pooling).
struct OutputRuns {
  int64_t step = 0;
  std::vector<int64_t> start;
  std::vector<int> at;
  int count = 0;  // runs: start[0, count), at[0, count]; the vectors only grow (no fill per task)
};
void output_runs(const WindowReduce& w, int64_t o0, int n, OutputRuns* runs) {
  // At most n runs: the vectors grown once to that and filled through plain pointers (a
  // push_back per run, its capacity test and the thread-local vector's address loaded again,
  // was 3% of the CNN; a resize per task zero-filled them).
  if (runs->start.size() < static_cast<size_t>(n)) runs->start.resize(static_cast<size_t>(n));
  if (runs->at.size() < static_cast<size_t>(n) + 1) runs->at.resize(static_cast<size_t>(n) + 1);
  int64_t* start = runs->start.data();
  int* at = runs->at.data();
  at[0] = 0;
  const size_t nd = w.outer.size();
  if (nd == 0) {  // one output
    runs->step = 0;
    start[0] = w.offset;
    at[1] = n;
    runs->count = 1;
    return;
  }
  std::vector<int64_t> c(nd, 0);
  int64_t p = o0, b = w.offset;
  for (size_t d = nd; d-- > 0;) {
    c[d] = p % w.outer[d];
    p /= w.outer[d];
    b += c[d] * w.ostride[d];
  }
  const int64_t last = w.outer[nd - 1];
  runs->step = w.ostride[nd - 1];
  int r = 0;
  for (int t = 0; t < n; ++r) {
    const int len = static_cast<int>(std::min<int64_t>(n - t, last - c[nd - 1]));
    start[r] = b;
    t += len;
    at[r + 1] = t;
    // Carry: the last axis back to 0, the axes before it counted up.
    b -= c[nd - 1] * w.ostride[nd - 1];
    c[nd - 1] = 0;
    for (size_t d = nd - 1; d-- > 0;) {
      b += w.ostride[d];
      if (++c[d] < w.outer[d]) break;
      b -= c[d] * w.ostride[d];
      c[d] = 0;
    }
  }
  runs->count = r;
}

// dst[t] = element start + t * step of src for t < n: one window position for a run of outputs.
// The views here are unmasked (describe), so there is no padding to mask: typed loads, without
// gather()'s index array and padding mask. Steps 1 and 2 (global pooling; 2x2 windows at stride 2)
// are written with the step a constant, so the compiler vectorises them.
template <class T>
void load_run(const uint8_t* src, int64_t start, int64_t step, int n, T* d) {
  const T* s = reinterpret_cast<const T*>(src) + start;
  if (step == 1) {
    std::memcpy(d, s, n * sizeof(T));
  } else if (step == 2) {
    for (int t = 0; t < n; ++t) d[t] = s[2 * t];
  } else {
    for (int t = 0; t < n; ++t) d[t] = s[t * step];
  }
}
template <class T>
void load_window(const uint8_t* src, const OutputRuns& runs, int64_t off, void* dst) {
  T* d = static_cast<T*>(dst);
  for (int r = 0; r < runs.count; ++r)
    load_run<T>(src, runs.start[r] + off, runs.step, runs.at[r + 1] - runs.at[r], d + runs.at[r]);
}
void load_window(const Buffer& b, const OutputRuns& runs, int64_t off, void* dst) {
  switch (itemsize(b.dtype)) {
    case 1: load_window<uint8_t>(b.bytes(), runs, off, dst); break;
    case 2: load_window<uint16_t>(b.bytes(), runs, off, dst); break;
    case 4: load_window<uint32_t>(b.bytes(), runs, off, dst); break;
    default: load_window<uint64_t>(b.bytes(), runs, off, dst); break;
  }
}

// a[0, n) = the fold's identity, typed so each store is one move (a memcpy of a size known only
// at run time was a libc call per output: 5% of the CNN).
template <class T>
void fill_identity(uint8_t* a, uint64_t identity, int n) {
  T v;
  std::memcpy(&v, &identity, sizeof(T));  // the low bytes, as the fold reads them
  for (int t = 0; t < n; ++t) std::memcpy(a + t * sizeof(T), &v, sizeof(T));
}
void fill_identity(uint8_t* a, uint64_t identity, size_t sz, int n) {
  switch (sz) {
    case 1: fill_identity<uint8_t>(a, identity, n); break;
    case 2: fill_identity<uint16_t>(a, identity, n); break;
    case 4: fill_identity<uint32_t>(a, identity, n); break;
    default: fill_identity<uint64_t>(a, identity, n); break;
  }
}

}  // namespace

bool try_window_reduce(Node& out) {
  if (out.op != Op::REDUCE || out.src[0]->dtype != out.dtype) return false;
  const FastReduceFn fold = fast_reduce(out.arg.reduce_op, out.dtype);
  if (!fold) return false;
  WindowReduce w;
  if (!describe(out, &w)) return false;
  const int64_t O = numel(out.shape);
  const size_t sz = itemsize(out.dtype);
  const uint64_t identity = ref::reduce_identity(out.arg.reduce_op, out.dtype);
  // The op table's ROUNDS column for the combining op: MAX never needs the hardware mode.
  const bool rounds = op_info(combiner(out.arg.reduce_op)).rounds;
  // Outputs 2 apart (2 x k pools) or farther (softmax's rows) along the last kept axis, float32
  // or float64: folded a vector of outputs at a time in registers (window_gather.cpp) instead of
  // strided passes over the tile.
  const int64_t step = w.outer.empty() ? 0 : w.ostride.back();
  WindowGatherFn gather = window_gather(out.arg.reduce_op, out.dtype);
  if (step != 2 && (std::abs(step) <= 2 || std::abs(step) >= (int64_t{1} << 31) / 64)) gather = nullptr;
  // 2 x 2 windows at stride 2: a task's runs in one call (window_gather.h).
  const Pool2x2RunsFn pool2x2 =
      gather && step == 2 && is_pool2x2(w.window.data(), static_cast<int>(w.window.size()))
          ? pool2x2_runs(out.arg.reduce_op, out.dtype)
          : nullptr;
  auto buf = std::make_shared<Buffer>(out.dtype, O);
  const int per_task = pool2x2 ? kPool2x2OutputsPerTask : kOutputsPerTask;
  parallel_for((O + per_task - 1) / per_task, [&](int64_t task) {
    const int64_t o0 = task * per_task;
    const int n = static_cast<int>(std::min<int64_t>(per_task, O - o0));
    // Tiles with the SIMD slack the fold may read and write past n.
    thread_local std::vector<uint64_t> acc, val;
    thread_local OutputRuns runs;
    acc.resize(kTile + kTilePad);
    val.resize(kTile + kTilePad);
    output_runs(w, o0, n, &runs);
    uint8_t* a = reinterpret_cast<uint8_t*>(acc.data());
    if (pool2x2) {
      pool2x2(w.src->bytes(), w.window.data(), runs.start.data(), runs.at.data(), runs.count,
              identity, buf->bytes() + o0 * static_cast<int64_t>(sz));
      return;
    }
    if (gather) {
      for (int r = 0; r < runs.count; ++r)
        gather(w.src->bytes() + runs.start[r] * static_cast<int64_t>(sz), step, w.window.data(),
               static_cast<int>(w.window.size()), runs.at[r + 1] - runs.at[r], identity,
               buf->bytes() + (o0 + runs.at[r]) * static_cast<int64_t>(sz));
      return;
    }
    fill_identity(a, identity, sz, n);
    for (int64_t off : w.window) {
      load_window(*w.src, runs, off, val.data());
      fold(a, val.data(), n);
    }
    std::memcpy(buf->bytes() + o0 * sz, a, n * sz);
  }, rounds ? out.rnd : Round::NearestEven);
  out.buffer = buf;
  out.view.set_contiguous(out.shape);
  g_runs.fetch_add(1, std::memory_order_relaxed);
  if (gather) g_gather_runs.fetch_add(1, std::memory_order_relaxed);
  if (pool2x2) g_pool2x2_runs.fetch_add(1, std::memory_order_relaxed);
  return true;
}

int64_t window_reduce_runs() { return g_runs.load(std::memory_order_relaxed); }
int64_t window_gather_runs() { return g_gather_runs.load(std::memory_order_relaxed); }
int64_t pool2x2_reductions() { return g_pool2x2_runs.load(std::memory_order_relaxed); }

}  // namespace maroon::cpu
