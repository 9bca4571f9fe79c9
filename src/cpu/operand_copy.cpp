#include "cpu/operand_copy.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

#include "cpu/gemm_pack.h"
#include "cpu/kernel.h"
#include "cpu/keyed_store.h"
#include "cpu/threads.h"
#include "cpu/view_runs.h"

namespace maroon::cpu {

namespace {

// A model's operands that need a copy are few (attention's heads: four per layer); a list of
// more than 2^17 runs (1 MiB) is not kept.
constexpr size_t kRunEntries = 32;
constexpr int64_t kMaxRuns = int64_t{1} << 17;

KeyedStore<ViewRuns>& run_store() {
  static auto* s = new KeyedStore<ViewRuns>(kRunEntries);  // never destroyed (see matmul_layouts.cpp)
  return *s;
}

// Elements per task of a copy of kept runs: a task is tens of microseconds at least (a region
// costs a few), and attention's operands (128 heads by 64 positions by 16, 131k elements at batch
// 32) are several tasks. The split depends on the runs alone, and a copy cannot change a bit.
constexpr int64_t kCopyTaskElements = int64_t{1} << 14;
std::atomic<int64_t> g_split_copies{0};

// How many runs ahead copy_typed_runs prefetches a run's first element (a hint: no bit changes).
constexpr int64_t kPrefetchRuns = 16;

// Runs [r0, r1) of r.
template <class T>
void copy_typed_runs(const T* src, const ViewRuns& r, int64_t r0, int64_t r1, T* dst) {
  dst += r0 * r.row;
  for (int64_t k = r0; k < r1; ++k) {
    // The runs lie far apart in the source (attention's heads: a 64-byte run every 24 KiB, past
    // what the hardware prefetchers follow), so each was a demand miss the loop waited on (half
    // of copy_runs_range's samples on one load): the run kPrefetchRuns ahead is asked for now.
    if (k + kPrefetchRuns < r1) __builtin_prefetch(src + r.starts[static_cast<size_t>(k + kPrefetchRuns)]);
    const T* p = src + r.starts[static_cast<size_t>(k)];
    if (r.step == 1) copy_run(dst, p, r.row);  // inline pieces: runs are short (a head's 16)
    else
      for (int64_t i = 0; i < r.row; ++i) dst[i] = p[i * r.step];
    dst += r.row;
  }
}

void copy_runs_range(const Buffer& buffer, const ViewRuns& r, int64_t r0, int64_t r1, uint8_t* dst) {
  const uint8_t* src = buffer.bytes();
  switch (itemsize(buffer.dtype)) {
    case 1: return copy_typed_runs(src, r, r0, r1, dst);
    case 2: return copy_typed_runs(reinterpret_cast<const uint16_t*>(src), r, r0, r1, reinterpret_cast<uint16_t*>(dst));
    case 4: return copy_typed_runs(reinterpret_cast<const uint32_t*>(src), r, r0, r1, reinterpret_cast<uint32_t*>(dst));
    default:
      return copy_typed_runs(reinterpret_cast<const uint64_t*>(src), r, r0, r1, reinterpret_cast<uint64_t*>(dst));
  }
}

// Was one thread's work while the other waited (4% of the caller's time on the ONNX transformer
// at 2 threads, perf): now cut into tasks of whole runs.
void copy_runs(const Buffer& buffer, const ViewRuns& r, uint8_t* dst) {
  const int64_t n = static_cast<int64_t>(r.starts.size());
  const int64_t per_task = std::max<int64_t>(1, kCopyTaskElements / std::max<int64_t>(r.row, 1));
  const int64_t tasks = (n + per_task - 1) / per_task;
  if (tasks <= 1) return copy_runs_range(buffer, r, 0, n, dst);
  g_split_copies.fetch_add(1, std::memory_order_relaxed);
  parallel_for(tasks, [&](int64_t t) {
    copy_runs_range(buffer, r, t * per_task, std::min(n, (t + 1) * per_task), dst);
  }, Round::NearestEven);
}

}  // namespace

void copy_dense(const Buffer& buffer, const ShapeTracker& view, const Shape& dense_shape, uint8_t* dst) {
  thread_local std::vector<int64_t> key;  // reused: no allocation per call once grown
  view_runs_key(view, dense_shape, &key);
  if (auto runs = run_store().find(key)) return copy_runs(buffer, *runs, dst);
  const Shape& s = view.shape();
  const int64_t n = numel(dense_shape);
  const size_t sz = itemsize(buffer.dtype);
  // Row by row along the last axis (row_indices walks the view stack without divisions).
  const int64_t row = dense_shape.empty() ? 1 : dense_shape.back();
  auto runs = std::make_shared<ViewRuns>();
  bool uniform = row > 0;
  std::vector<int64_t> c(s.size(), 0), idx(static_cast<size_t>(std::max<int64_t>(row, 1)));
  for (int64_t p0 = 0; p0 < n && row > 0; p0 += row) {
    if (s.empty()) idx[0] = view.index(c.data());
    else view.row_indices(c.data(), row, idx.data());
    gather(buffer, idx.data(), static_cast<int>(row), dst + p0 * static_cast<int64_t>(sz));
    uniform = uniform && extend_view_runs(idx.data(), row, p0 == 0, runs.get()) &&
              static_cast<int64_t>(runs->starts.size()) <= kMaxRuns;
    for (size_t d = s.size() - (s.empty() ? 0 : 1); d-- > 0;) {
      if (++c[d] < dense_shape[d]) break;
      c[d] = 0;
    }
  }
  if (uniform && n > 0) run_store().put(key, std::move(runs));
}

int64_t dense_copy_hits() { return run_store().hits(); }

int64_t dense_copy_splits() { return g_split_copies.load(); }

}  // namespace maroon::cpu
