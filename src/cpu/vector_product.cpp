// Products with one column (vector_product.h): planned as a matmul (matmul_plan.h: the same
// operands, padded copies and offsets), then folded a vector of rows at a time. Rows come in runs
// along which A's offset moves by one step and C's by one (an output row of a depthwise conv2d:
// A one element or `stride` apart); each run is one kernel call per task it crosses. Tasks are
// fixed blocks of rows of one batch, a function of the shape alone; each output is folded whole
// by one task, so the split could not change a bit anyway.
#include "cpu/vector_product.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <span>

#include "cpu/epilogue.h"
#include "cpu/gemm_fused.h"
#include "cpu/matmul_plan.h"
#include "cpu/threads.h"

namespace maroon::cpu {

namespace {

std::atomic<int64_t> g_runs{0}, g_gathered{0};

// Rows per task: a few planes of a depthwise conv2d's channel (900 for 30x30 outputs).
constexpr int64_t kRowsPerTask = 4096;
// Runs shorter than this on average (a channel's 3x3 window positions as rows: runs of 3; rows
// scattered one by one) are gathered a vector of rows at a time (vector_rows) instead.
constexpr int64_t kMinMeanRun = 4;
// A run's step times a vector's lanes must fit the gather's 32-bit indices (64 lanes at most).
constexpr int64_t kMaxStep = (int64_t{1} << 31) / 64;

struct RowRun {
  int64_t first, length, step;  // rows [first, first + length), A's offsets `step` apart
};

// rowA and rowC cut into runs along which A moves by a constant step and C by one.
std::vector<RowRun> row_runs(std::span<const int64_t> rowA, std::span<const int64_t> rowC) {
  std::vector<RowRun> runs;
  const int64_t M = static_cast<int64_t>(rowA.size());
  for (int64_t i = 0; i < M;) {
    RowRun r{i, 1, 0};
    if (i + 1 < M && rowC[i + 1] == rowC[i] + 1 && std::abs(rowA[i + 1] - rowA[i]) <= kMaxStep) {
      r.step = rowA[i + 1] - rowA[i];
      while (i + r.length < M && rowC[i + r.length] == rowC[i + r.length - 1] + 1 &&
             rowA[i + r.length] - rowA[i + r.length - 1] == r.step)
        ++r.length;
    }
    runs.push_back(r);
    i += r.length;
  }
  return runs;
}

// Rows in runs of adjacent outputs (the epilogue's runs: an image plane of a channel), each run as
// (first row, length).
std::vector<std::pair<int64_t, int64_t>> output_runs(std::span<const int64_t> rowC) {
  std::vector<std::pair<int64_t, int64_t>> out;
  const int64_t M = static_cast<int64_t>(rowC.size());
  for (int64_t i = 0; i < M;) {
    int64_t n = 1;
    while (i + n < M && rowC[i + n] == rowC[i + n - 1] + 1) ++n;
    out.emplace_back(i, n);
    i += n;
  }
  return out;
}

// The epilogue over rows [r0, r1) of batch b, final in C: its runs of adjacent outputs, those of
// one length in one call (a call per run, each an output row, cost more than the epilogue's work).
void epilogue_rows(const Epilogue& epi, const MatmulPlan& plan, const std::vector<std::pair<int64_t, int64_t>>& runs,
                   int64_t b, int64_t r0, int64_t r1, uint8_t* C) {
  const int64_t base = plan.batchC[b] + plan.colC[0];
  thread_local std::vector<int64_t> starts;
  starts.clear();
  int64_t len = 0;
  auto it = std::upper_bound(runs.begin(), runs.end(), r0,
                             [](int64_t r, const std::pair<int64_t, int64_t>& x) { return r < x.first; });
  for (--it; it != runs.end() && it->first < r1; ++it) {
    const int64_t i0 = std::max(r0, it->first), n = std::min(r1, it->first + it->second) - i0;
    if (n != len && !starts.empty()) epi.apply_runs(C, starts.data(), starts.size(), len), starts.clear();
    len = n;
    starts.push_back(base + plan.rowC[i0]);
  }
  if (!starts.empty()) epi.apply_runs(C, starts.data(), starts.size(), len);
}

}  // namespace

bool try_vector_product(Node& out, const std::vector<Node*>& chain, const Epilogue* epi) {
  const bool fused = out.op == Op::REDUCE_MULACC;
  if (fused && !fused_native_fma()) return false;  // gemm_fused.h's exact software steps
  MatmulPlan plan;
  if (!plan_matmul_node(out, chain, &plan, ProductForm::Vector)) return false;
  if (plan.split.M == 1) plan.transpose();  // the long side as rows, one column
  const int64_t M = plan.split.M, NB = plan.split.NB, K = plan.split.K;
  const std::vector<RowRun> runs = row_runs(plan.rowA, plan.rowC);
  const auto out_runs = epi ? output_runs(plan.rowC) : std::vector<std::pair<int64_t, int64_t>>{};
  // Rows in short runs, or too few for a vector: gathered a vector of rows at a time.
  const bool scattered = static_cast<int64_t>(runs.size()) * kMinMeanRun > M;
  if (scattered) {
    const auto [lo, hi] = std::minmax_element(plan.rowA.begin(), plan.rowA.end());
    if (*hi - *lo >= (int64_t{1} << 31)) return false;  // the gather's 32-bit indices
  }
  // Plain values: clang 14 (the CI's sanitizer builds) cannot capture a structured binding.
  const int64_t kmin = *std::min_element(plan.kA.begin(), plan.kA.end());
  const int64_t kmax = *std::max_element(plan.kA.begin(), plan.kA.end());
  const DType d = out.dtype;
  const size_t sz = itemsize(d);
  auto buf = std::make_shared<Buffer>(d, numel(out.shape));
  const int64_t per_batch = (M + kRowsPerTask - 1) / kRowsPerTask;
  parallel_for(NB * per_batch, [&](int64_t task) {
    const int64_t b = task / per_batch, r0 = task % per_batch * kRowsPerTask, r1 = std::min(M, r0 + kRowsPerTask);
    thread_local std::vector<uint64_t> w;  // batch b's column of B, contiguous
    w.resize(static_cast<size_t>(K));
    const int64_t b0 = plan.batchB[b] + plan.colB[0];
    gather_offsets(sz, static_cast<const uint8_t*>(plan.y.data) + b0 * static_cast<int64_t>(sz), plan.kB.data(), K, w.data());
    if (scattered) {
      VectorRows v{plan.x.data, plan.batchA[b], plan.x.count, plan.rowA.data() + r0, plan.kA.data(), kmin, kmax,
                   static_cast<int>(K),
                   w.data(), static_cast<int>(r1 - r0), buf->bytes() + (plan.batchC[b] + plan.colC[0]) * static_cast<int64_t>(sz),
                   plan.rowC.data() + r0};
      vector_rows(d, fused, v);
      if (epi) epilogue_rows(*epi, plan, out_runs, b, r0, r1, buf->bytes());
      return;
    }
    // The first run that reaches r0.
    auto it = std::upper_bound(runs.begin(), runs.end(), r0, [](int64_t r, const RowRun& x) { return r < x.first; });
    thread_local std::vector<VectorRun> vr;
    vr.clear();
    for (--it; it != runs.end() && it->first < r1; ++it) {
      const int64_t i0 = std::max(r0, it->first), i1 = std::min(r1, it->first + it->length);
      vr.push_back(VectorRun{plan.x.data, plan.batchA[b] + plan.rowA[i0], it->step, plan.x.count, plan.kA.data(),
                  kmin, kmax, static_cast<int>(K), w.data(), static_cast<int>(i1 - i0),
                  buf->bytes() + (plan.batchC[b] + plan.colC[0] + plan.rowC[i0]) * static_cast<int64_t>(sz)});
    }
    vector_runs(d, fused, vr.data(), static_cast<int>(vr.size()));
    if (epi) epilogue_rows(*epi, plan, out_runs, b, r0, r1, buf->bytes());
  }, out.rnd);
  Node& result = epi ? epi->out() : out;
  result.buffer = buf;
  result.view.set_contiguous(result.shape);
  g_runs.fetch_add(1, std::memory_order_relaxed);
  if (scattered) g_gathered.fetch_add(1, std::memory_order_relaxed);
  return true;
}

namespace {
template <class T>
void gather_typed(const T* base, const int64_t* off, int64_t n, T* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = base[off[i]];
}
}  // namespace

void gather_offsets(size_t sz, const void* base, const int64_t* off, int64_t n, void* out) {
  if (sz == 4) gather_typed(static_cast<const uint32_t*>(base), off, n, static_cast<uint32_t*>(out));
  else gather_typed(static_cast<const uint64_t*>(base), off, n, static_cast<uint64_t*>(out));
}

int64_t vector_product_runs() { return g_runs.load(std::memory_order_relaxed); }
int64_t vector_product_gathered_rows() { return g_gathered.load(std::memory_order_relaxed); }

}  // namespace maroon::cpu
