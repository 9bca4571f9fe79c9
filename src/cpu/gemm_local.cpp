// A product with one row block (conv2d: output channels by positions, B the im2col matrix) reads
// each B panel in one task only. Packed whole up front, B (9 times the image for a 3x3 conv, 19 MB
// for the ResNet's first stage at batch 32) was written to memory and read back from it; here a
// task packs its own columns (about 1 MB) just before its kernel reads them from cache. Packing
// copies; the task computes its columns as a product of their own, through the same kernel, with
// the same sums in the same order, so not a bit changes (the tile chosen for a task's columns may
// differ from the whole product's: the tile never changes a bit either). A plain matmul of two
// row blocks (an MLP's batch of 128 rows) runs the same way, each task computing its columns for
// both row blocks: its B panels (up to 256 columns) are read from cache by both.
#include "cpu/gemm_local.h"

#include <atomic>
#include <cassert>
#include <memory>

#include "cpu/threads.h"

namespace maroon::cpu {

namespace {
std::atomic<int64_t> g_local_runs{0};
std::atomic<int64_t> g_shared_a{0};

// A packed once for all tasks (GemmArgs::apacked) up to this size: conv2d's weights, at most
// 64 x 576 floats (147 KB) in the ONNX ResNet, each task packed them again for its image.
constexpr int64_t kSharedABytes = int64_t{1} << 20;

// Whether every task of g reads the same A (the same rows for every batch) and more than one
// task would pack it.
bool shares_a(const GemmArgs& g, int64_t NB, size_t sz) {
  if (g.tasks_m != 1 || NB * g.tasks_n < 2 || g.K > (int64_t{1} << 30) ||
      g.M * g.K * static_cast<int64_t>(sz) > kSharedABytes)
    return false;
  for (int64_t b = 1; b < NB; ++b)
    if (g.batchA[b] != g.batchA[0]) return false;
  return true;
}
}  // namespace

int64_t gemm_local_runs() { return g_local_runs.load(); }
int64_t gemm_shared_a_products() { return g_shared_a.load(); }

// Whether k steps through B by one stride (a plain matmul's rows) or not (im2col: k runs over
// (channel, kh, kw), a plane, a row and an element apart).
bool k_affine(const int64_t* kB, int64_t K) {
  for (int64_t k = 2; k < K; ++k)
    if (kB[k] - kB[k - 1] != kB[1] - kB[0]) return false;
  return true;
}

bool gemm_local_fits(const GemmArgs& g) {
  return g.tasks_m == 1 || (g.tasks_m <= kGemmLocalRowBlocks && k_affine(g.kB, g.K));
}

void run_local_tasks(DType d, const GemmArgs& g, int64_t NB, Round rnd, const Epilogue* epi) {
  assert(gemm_local_fits(g));
  const size_t sz = itemsize(d);
  const bool affine = k_affine(g.kB, g.K);
  // conv2d's weights computed transposed: packed once, in the tile of the first task's columns
  // (a narrower last task may choose another tile and packs its own). A copy either way.
  GemmArgs whole = g;
  if (shares_a(g, NB, sz)) {
    int64_t mr, nr;
    gemm_panel_sizes(d, g.M, std::min(g.span, g.N), &mr, &nr);
    const int64_t panels = (g.M + mr - 1) / mr;
    thread_local std::unique_ptr<uint64_t[]> amem;  // the caller's; workers read it through whole
    thread_local size_t acap = 0;
    void* const ap = scratch(&amem, &acap, static_cast<size_t>(panels * mr * g.K) * sz);
    parallel_for(panels, [&](int64_t p) { gemm_pack_a(d, g, mr, p, p + 1, ap); }, Round::NearestEven);
    whole.apacked = ap;
    whole.apacked_mr = mr;
    g_shared_a.fetch_add(1, std::memory_order_relaxed);
  }
  parallel_for(NB * g.tasks_n, [&](int64_t t) {  // batch b, column block jn: every row block
    const int64_t b = t / g.tasks_n, jn = t % g.tasks_n;
    const GemmTaskBox box = gemm_task_box(g, b * g.tasks_m * g.tasks_n + jn);
    GemmArgs sub = whole;  // the task's columns [j0, j0 + nc), one task of one row block
    sub.colB = g.colB + box.j0;
    sub.colC = g.colC + box.j0;
    sub.N = box.nc;
    sub.span = box.nc;
    sub.tasks_n = 1;
    // Only an im2col B is read in place (packing copied each image element into K / channels of
    // its rows, nine for a 3x3 conv); a plain matmul's B keeps the packed path, unmeasured here.
    sub.direct_b = !affine;
    // B panels of columns in groups (stride 2, 8-wide images) are packed by the task a k block
    // at a time, into L1 (GemmArgs::span_in_block).
    sub.span_in_block = !affine;
    int64_t mr, nr;
    gemm_panel_sizes(d, sub.M, sub.N, &mr, &nr);
    const int64_t panels = (sub.N + nr - 1) / nr;
    // Kept by each thread between calls (fresh pages cost more than packing them).
    thread_local std::unique_ptr<uint64_t[]> mem;
    thread_local size_t cap = 0;
    void* const bp = scratch(&mem, &cap, static_cast<size_t>(panels * nr * g.K) * sz);
    gemm_pack_b(d, sub, box.b, bp, 0, panels);
    for (int64_t im = 0; im < g.tasks_m; ++im) {
      if (rnd != Round::NearestEven) set_hw_round(rnd);
      gemm_task(d, sub, bp, box.b * g.tasks_m + im);  // sub has one task per row block
      if (rnd != Round::NearestEven) set_hw_round(Round::NearestEven);
      // The block is final and still in cache.
      if (epi) epi->apply(g, (box.b * g.tasks_m + im) * g.tasks_n + jn);
    }
  }, Round::NearestEven);
  g_local_runs.fetch_add(1);
}

}  // namespace maroon::cpu
