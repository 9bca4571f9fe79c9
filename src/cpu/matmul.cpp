// Recognises a matmul in the graph: REDUCE ADD over some axes of MUL(x, y), possibly through
// movement ops (conv2d's input gradient permutes the product before summing it), where x and y
// are views of realized buffers (matmul_plan.h says how they become a batched matmul).
#include <atomic>

#include "cpu/epilogue.h"
#include "cpu/gemm.h"
#include "cpu/gemm_direct.h"
#include "cpu/gemm_fused.h"
#include "cpu/gemm_local.h"
#include "cpu/gemm_longk.h"
#include "cpu/kernel.h"
#include "cpu/matmul_kept.h"
#include "cpu/matmul_plan.h"
#include "cpu/threads.h"
#include "ref/executor.h"

namespace maroon::cpu {

namespace {
std::atomic<int64_t> g_column_splits{0}, g_wide_row_blocks{0};
}  // namespace

int64_t matmul_column_splits() { return g_column_splits.load(); }
int64_t matmul_wide_row_blocks() { return g_wide_row_blocks.load(); }
namespace {
std::atomic<int64_t> g_narrow_transposes{0}, g_conv_rows{0}, g_row_block_packs{0};
}  // namespace
int64_t matmul_narrow_transposes() { return g_narrow_transposes.load(); }
int64_t matmul_conv_row_products() { return g_conv_rows.load(); }
int64_t matmul_row_block_packs() { return g_row_block_packs.load(); }

std::atomic<int64_t> g_transposed_b_panels{0};  // counted by pack_b_panels (gemm_pack.h)
int64_t gemm_transposed_b_panels() { return g_transposed_b_panels.load(); }
std::atomic<int64_t> g_register_transposed_panels{0};  // counted by gemm.cpp's PackBTransposed
int64_t gemm_register_transposed_panels() { return g_register_transposed_panels.load(); }
std::atomic<int64_t> g_register_a_panels{0};  // counted by gemm.cpp's PackAPanel
int64_t gemm_register_a_panels() { return g_register_a_panels.load(); }
std::atomic<int64_t> g_register_window_a_panels{0};  // counted by gemm.cpp's PackAPanel
int64_t gemm_register_window_a_panels() { return g_register_window_a_panels.load(); }
std::atomic<int64_t> g_row_a_panels{0};  // counted by pack_a_panel (gemm_pack.h)
int64_t gemm_row_a_panels() { return g_row_a_panels.load(); }

namespace {
// REDUCE_MULACC(x, y) over out.arg.ints: its sources are realized (the plan materializes a
// non-elementwise op's sources) and broadcast to one shape, as gemm_fused.h's kernel reads them.
// Planned as the unfused product's REDUCE over MUL would be, the same layout, tiles and
// epilogues, with FMA steps. Small products, and targets without an FMA instruction, are left to
// gemm_fused.h.
bool plan_fused_node(Node& out, MatmulPlan* planp, ProductForm form) {
  if (out.dtype != DType::Float32 && out.dtype != DType::Float64) return false;
  const Node& x = *out.src[0];
  const Node& y = *out.src[1];
  if (out.arg.ints.empty() || !x.realized || !y.realized || x.dtype != out.dtype || y.dtype != out.dtype) return false;
  if (!fused_native_fma()) return false;  // SSE4, scalar: gemm_fused.h's software steps
  Shape s(x.shape.size());
  for (size_t d = 0; d < s.size(); ++d) s[d] = std::max(x.shape[d], y.shape[d]);
  if (numel(s) < 4096) return false;
  const bool matrix = form == ProductForm::Matrix;
  if (matrix && find_kept_matmul(out, x, y, planp)) return true;
  const ShapeTracker xv = x.view.expand(s), yv = y.view.expand(s);
  if (!product_takes(split_axes(s, out.arg.ints, moving_axes(xv), moving_axes(yv)), form)) return false;
  MatmulPlan& plan = *planp;
  if (!plan_matmul(*x.buffer, xv, *y.buffer, yv, out.arg.ints, out.shape, &plan)) return false;
  plan.fused = true;
  if (matrix) keep_matmul(out, x, y, plan);
  return true;
}
}  // namespace

bool product_takes(const Split& sp, ProductForm form) {
  if (sp.K == 0) return false;
  if (form == ProductForm::Matrix) return sp.M * sp.N * sp.K >= 4096 && sp.M >= 2 && sp.N >= 2;
  // A vector's batches are its channels (depthwise conv2d): counted in its size.
  // k bounded: the kernel counts it in an int and copies a batch's column of k weights per task
  // (a sum over 2^31 broadcast terms would have wrapped).
  return sp.NB * sp.M * sp.N * sp.K >= 4096 && std::min(sp.M, sp.N) == 1 && std::max(sp.M, sp.N) >= 2 &&
         sp.K <= kVectorMaxK;
}

bool plan_matmul_node(Node& out, const std::vector<Node*>& chain, MatmulPlan* planp, ProductForm form) {
  if (out.op == Op::REDUCE_MULACC) return chain.empty() && plan_fused_node(out, planp, form);
  if (out.arg.reduce_op != ReduceOp::ADD || out.arg.ints.empty()) return false;
  const Node& mul = chain.empty() ? *out.src[0] : *chain.back()->src[0];
  if (mul.realized || mul.op != Op::MUL) return false;
  if (out.dtype != DType::Float32 && out.dtype != DType::Float64) return false;
  if (mul.rnd != out.rnd) return false;  // one hardware rounding mode for the whole kernel
  // Small products fold (below): decided before any view is moved, since a small sum (a
  // 16-element `(x * y).sum()` from Python) spent more here than in its kernel.
  if (numel(mul.shape) < 4096) return false;
  const Node& x = *mul.src[0];
  const Node& y = *mul.src[1];
  // Two realized factors read through their own views: the plan may be kept (matmul_kept.h).
  const bool keepable = form == ProductForm::Matrix && chain.empty() && x.realized && y.realized;
  if (keepable && find_kept_matmul(out, x, y, planp)) return true;
  const Shape& s = out.src[0]->shape;
  const std::vector<int64_t>& kaxes = out.arg.ints;  // sorted: k is row-major over them
  // Each factor's view as the reduction sees it: through the movement ops between the
  // reduction and the product (an elementwise op commutes with any view; a padded product is
  // 0 * 0 = +0, the pad value). An unrealized factor will be written out contiguously.
  // (Computing a factor below writes it contiguously, so its moved view is the same before and
  // after: each is found once, which is a measurable part of a small product's call.)
  // With no chain, a realized factor's own view is used in place (copying each tracker was
  // three malloc/free pairs per factor per call).
  ShapeTracker xs, ys;
  auto moved = [&](const Node& f, ShapeTracker* store) -> const ShapeTracker& {
    if (chain.empty() && f.realized) return f.view;
    ShapeTracker v = f.realized ? f.view : ShapeTracker::contiguous(f.shape);
    for (size_t i = chain.size(); i-- > 0;) v = ref::movement_view(*chain[i], v);
    *store = std::move(v);
    return *store;
  };
  const ShapeTracker& xv = moved(x, &xs);
  const ShapeTracker& yv = moved(y, &ys);
  {  // Small or not a matmul at all (pool gradients sum a product over batch-like axes only):
     // decide before any work.
    // A product with one row or one column (depthwise conv2d, a batch of dot products,
    // batchnorm's sum of squares) would waste most of a register tile: the vector form's
    // (matvec.h) or the reduction kernel's.
    if (!product_takes(split_axes(s, kaxes, moving_axes(xv), moving_axes(yv)), form)) return false;
  }
  // An operand still fused (say relu'(h) * grad in a backward pass) is computed into a buffer
  // first: a matmul over it is far faster than folding the whole expression per output.
  for (const NodePtr& s : mul.src) {
    if (s->realized) continue;
    // Not for a vector: its kernel reads each operand once, as the generic fold's fused
    // program computes it; written out, it is a pass and a buffer more (batchnorm's sums of
    // the output gradient times x-hat over the batch and the image, CpuRecompute).
    if (form == ProductForm::Vector) return false;
    OpKind k = op_info(s->op).kind;
    if (k == OpKind::Reduce || k == OpKind::Movement || k == OpKind::Source) return false;
    run_elementwise(*s);
    s->realized = true;
  }
  MatmulPlan& plan = *planp;
  if (!plan_matmul(*x.buffer, xv, *y.buffer, yv, kaxes, out.shape, &plan)) return false;
  // small: the generic fold will do
  if (!product_takes(plan.split, form)) return false;
  if (keepable) keep_matmul(out, x, y, plan);
  return true;
}

namespace {
constexpr int64_t kConvSpan = 192;

// Whether A's first 8 rows step by 1 or 2 (an output row of at least 8 positions, stride 1 or 2)
// and its first 16 lie in at most two groups, each ascending within 32 elements of its first
// (conv2d's stride-2 output rows, or two rows of an 8-wide image): computed transposed, B's
// vectors of such columns are packed by lane permutes (gemm.cpp's PackBSpan, AVX-512) and the
// output is written in whole rows. Not the weight gradient (rows along a window's runs of kw).
// A function of the layout only, never of the target: elsewhere those panels are packed element
// by element.
bool grouped_rows(std::span<const int64_t> rowA) {
  if (rowA.size() < 16) return false;
  const int64_t step = rowA[1] - rowA[0];
  if (step != 1 && step != 2) return false;
  for (size_t i = 2; i < 8; ++i)
    if (rowA[i] - rowA[i - 1] != step) return false;
  size_t groups = 0;
  for (size_t i = 0; i < 16; ++groups) {
    const int64_t first = rowA[i];
    for (++i; i < 16 && rowA[i] > rowA[i - 1] && rowA[i] - first < 32;) ++i;
  }
  return groups <= 2;
}

// The product (or the epilogue that took it over) now holds buf.
bool finish_matmul(Node& out, const Epilogue* epi, std::shared_ptr<Buffer> buf) {
  Node& result = epi ? epi->out() : out;
  result.buffer = std::move(buf);
  result.view.set_contiguous(result.shape);
  return true;
}
}  // namespace

// Rows of k per task when a single B panel is packed in parallel (a fixed size: the split
// depends on the shape only).
constexpr int64_t kPackRows = 4096;
// Row blocks of a product whose few B panels over a long k every task streams (try_matmul).
constexpr int64_t kLongKRowTasks = 4;

bool try_matmul(Node& out, const std::vector<Node*>& chain, const Epilogue* epi) {
  MatmulPlan plan;
  if (!plan_matmul_node(out, chain, &plan)) return false;
  // Output columns far apart and rows adjacent (conv2d: channels a plane apart, positions along
  // a width): computed transposed, the kernel writes whole output rows in place instead of
  // scattering every element. The transposed B is the old A, packed whole where the transposed
  // product has several row blocks, so then only when that is small; with one (at most kGemmMC
  // output channels) each task packs its own columns a k block at a time (gemm_local.cpp), and
  // the size does not matter. And only where A's rows come in runs long enough to copy whole (an
  // image at least 16 wide). Measured on conv2d 1->32 5x5 on 28x28, batch 64: 1.6 -> 1.15 ms;
  // on 8x8 images the transposed product was slower (0.19 -> 0.36 ms for 4->64 3x3). Past the
  // 32 MB that once applied to every case: beautiful_mnist's 32->32 5x5 on 24x24 (82 MB of
  // im2col at batch 64), one thread, fused products, 10.2 -> 8.0-8.6 ms (2 alternating rounds,
  // bench/cpu/conv_grad_bench.cpp); in `maroon train --model cnn --fused` at batch 512 that
  // layer's forward 82 -> 76 ms on one thread and 47 -> 40 ms on two (MAROON_PROFILE).
  bool conv_rows = false;  // computed transposed for whole output rows (conv2d)
  {
    auto run = [](std::span<const int64_t> v) {  // leading elements one apart
      size_t n = v.empty() ? 0 : 1;
      while (n < v.size() && v[n] == v[n - 1] + 1) ++n;
      return static_cast<int64_t>(n);
    };
    const bool cols_apart = plan.colC.size() > 1 && plan.colC[1] != plan.colC[0] + 1;
    const int64_t packed = plan.split.M * plan.split.K * static_cast<int64_t>(itemsize(out.dtype));
    if (cols_apart && run(plan.rowC) > 1 && (run(plan.rowA) >= 16 || grouped_rows(plan.rowA)) &&
        (packed <= (int64_t{32} << 20) || plan.split.N <= kGemmMC)) {
      plan.transpose();
      conv_rows = true;
      g_conv_rows.fetch_add(1, std::memory_order_relaxed);
    }
    // A long reduction onto few rows (conv2d's weight gradient: output channels by
    // (cin, kh, kw), summed over batch and positions) would pack all of B, the im2col matrix
    // (655 MB for beautiful_mnist's second layer at batch 512): transposed, B is the output
    // gradient, N/M times smaller, and the windows are packed a k block at a time per task.
    else if (plan.split.N > 4 * plan.split.M &&
             plan.split.N * plan.split.K * static_cast<int64_t>(itemsize(out.dtype)) > (int64_t{1} << 20))
      plan.transpose();
    // Fewer columns than a vector has lanes (a classifier's 10 outputs): a tile computed 32
    // columns for 10 and packed A by scalar loads; transposed, the few columns are rows (12
    // computed for 10) and A's rows are packed through registers. From 16 rows (64 until
    // session 32): the ONNX CNN's Gemm, 32 x 2048 @ 2048 x 10, fused, 47 -> 36 us alone and its
    // whole run 0.594 -> 0.569 ms on two threads (medians of 10 alternating rounds); every shape
    // tried from 16 to 63 rows (K 64 to 2048, 3 to 15 columns) as fast or faster transposed.
    else if (plan.split.N < 16 && plan.split.M >= 16 && !cols_apart) {
      plan.transpose();
      g_narrow_transposes.fetch_add(1, std::memory_order_relaxed);
    }
  }
  const int64_t M = plan.split.M, N = plan.split.N, NB = plan.split.NB, K = plan.split.K;

  auto buf = std::make_shared<Buffer>(out.dtype, numel(out.shape));
  // A long sum onto few outputs (the first conv layer's weight gradient: 32 channels by 25
  // positions, k = 295k at batch 512): one vector of one operand's rows a task, packed a k block
  // at a time (gemm_longk.cpp). The column split below made it two tasks of 13 columns, each
  // computing 36 x 32 sums for 32 x 13 and packing its columns for the whole k: fused, two
  // threads, 16.0-16.6 ms against 3.8-4.0.
  if (!epi && NB == 1) {
    const GemmArgs lk = plan.args(buf->bytes(), N);
    if (gemm_longk_fits(out.dtype, lk, NB)) {
      run_longk_tasks(out.dtype, lk, out.rnd);
      return finish_matmul(out, epi, std::move(buf));
    }
  }
  // A long sum onto one block of outputs that gemm_longk does not take (a first conv layer's
  // weight gradient with three input channels at batch 4: 32 x 75 outputs over k = 2,304, short
  // of its 4,096) would be one task, one thread's work: its columns are split in two tasks. A
  // column's sums are the same whichever task computes it; the split depends on the shape only.
  int64_t span = gemm_task_span(M, N);
  // conv2d's output rows (one row block): columns per task a multiple of 192, whole panels of
  // either wide tile (64 or 48 float32 columns on AVX-512, 16 elsewhere), so that the tile
  // chosen for a task's columns (8 x 3 for 32 or 64 channels) computes no padded column. The
  // split depends on the shape only and never changes a bit.
  if (conv_rows && M <= kGemmMC && span >= 2 * kConvSpan) span = span / kConvSpan * kConvSpan;
  if (M <= kGemmMC && N <= span && N >= 16 && M * N * K >= (int64_t{1} << 22)) {
    span = (N + 1) / 2;
    g_column_splits.fetch_add(1);
  }
  GemmArgs g = plan.args(buf->bytes(), span);
  const DType d = out.dtype;
  {  // Small: read in place, nothing packed (gemm_direct.cpp). One row block would be one task,
     // one thread's work: past 64^3 its columns are split in two tasks (by the shape alone; a
     // column's sums are the same whichever task computes it). Two threads ran 96^2 float64
     // products at 1.2 of OpenBLAS's speed with one task, 1.9 with two; at 64^3 the split cost
     // one thread 5% (narrower tiles) for less gain.
    const GemmArgs halves = plan.args(buf->bytes(), (N + 31) / 32 * 16);
    const GemmArgs& direct = M <= kGemmMC && N >= 64 && M * N * K > (int64_t{1} << 18) ? halves : g;
    if (gemm_direct_fits(d, direct)) {
      run_direct_tasks(d, direct, NB, out.rnd, epi);
      return finish_matmul(out, epi, std::move(buf));
    }
  }
  int64_t mr, nr;
  gemm_panel_sizes(d, M, N, &mr, &nr);
  const size_t sz = itemsize(d);
  const int64_t panels = (N + nr - 1) / nr;
  // A few B panels over a long k (conv2d's weight gradient computed transposed: the output
  // gradient, one panel of 26 MB for beautiful_mnist's second layer at batch 512) are packed whole
  // below and streamed from memory by every task, once per row block: rows in blocks of
  // kGemmMC read it 9 times for 800 rows. In kLongKRowTasks blocks (rows a multiple of the
  // tile's, a function of the shape), 4 times. Which task computes a row never changes a bit.
  const bool long_panels = panels <= 4 && K >= 2 * kPackRows;
  if (long_panels && g.tasks_m > kLongKRowTasks && !epi) {
    g.mc = ((M + kLongKRowTasks - 1) / kLongKRowTasks + mr - 1) / mr * mr;
    g.tasks_m = (M + g.mc - 1) / g.mc;
    g_wide_row_blocks.fetch_add(1, std::memory_order_relaxed);
  }
  const int64_t per_batch = g.tasks_m * g.tasks_n;
  // One row block, or two of a plain matmul: each B panel is read by one task only, which packs
  // it just before its row blocks read it (gemm_local.cpp).
  if (gemm_local_fits(g)) {
    run_local_tasks(d, g, NB, out.rnd, epi);
    return finish_matmul(out, epi, std::move(buf));
  }
  // Kept between calls: fresh pages cost more than packing them (a training loop repeats shapes).
  thread_local std::unique_ptr<uint64_t[]> bpack;
  thread_local size_t bcap = 0;
  // workers must not name the thread_local: each has its own
  void* const bp = scratch(&bpack, &bcap, static_cast<size_t>((N + nr - 1) / nr * nr * K) * sz);
  for (int64_t b = 0; b < NB; ++b) {
    // Panels are packed in parallel (copies: the split cannot change a bit).
    if (long_panels) {
      // A few panels over a long k (conv2d's weight gradient: the output gradient transposed,
      // one panel of 26 MB for beautiful_mnist's second layer at batch 512) were a task or a
      // few, one thread's copy while the other waited: each panel's rows are packed in blocks,
      // each block where the whole panel's packing puts it (panel p is [K][nr] at p * K * nr).
      g_row_block_packs.fetch_add(1, std::memory_order_relaxed);
      const int64_t blocks = (K + kPackRows - 1) / kPackRows;
      parallel_for(panels * blocks, [&](int64_t t) {
        const int64_t p = t / blocks, k0 = t % blocks * kPackRows;
        GemmArgs rows = g;  // k0's block of rows, packed as panel p of a product of rows.K rows
        rows.kB = g.kB + k0, rows.K = std::min(kPackRows, K - k0);
        // (M and N stay the product's: they choose the tile, so the panel's width.)
        char* const base = static_cast<char*>(bp) + static_cast<size_t>((p * (K - rows.K) + k0) * nr) * sz;
        gemm_pack_b(d, rows, b, base, p, p + 1);
      }, Round::NearestEven);
    } else {
      const int64_t per_task = std::max<int64_t>(1, (1 << 17) / (nr * K));
      parallel_for((panels + per_task - 1) / per_task, [&](int64_t t) {
        gemm_pack_b(d, g, b, bp, t * per_task, std::min(panels, (t + 1) * per_task));
      }, Round::NearestEven);
    }
    parallel_for(per_batch, [&](int64_t t) {
      if (out.rnd != Round::NearestEven) set_hw_round(out.rnd);
      gemm_task(d, g, bp, b * per_batch + t);
      if (out.rnd != Round::NearestEven) set_hw_round(Round::NearestEven);
      // The task's block is final and still in cache: the consumer chain runs on it now.
      if (epi) epi->apply(g, b * per_batch + t);
    }, Round::NearestEven);
  }
  return finish_matmul(out, epi, std::move(buf));
}

}  // namespace maroon::cpu
