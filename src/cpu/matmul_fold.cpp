// conv2d's input gradient without its window tensor. tinygrad's gradient of conv2d's input is a
// matmul (the output gradient times the weights, summed over output channels) whose result, the
// window tensor (batch, cin, oy, ox, ky, kx), is then summed back onto the image through pool's
// view stack: each input pixel folds the windows that cover it in the view's order, a padded
// term reading +0. At batch 512 the window tensor of beautiful_mnist's second layer is 655 MB,
// written once and read back scattered. Here the product is computed a tile at a time, the
// rows and columns of a few batch-like slabs of it (an image's positions times some input
// channels' (ky, kx)), and each output then folds its terms from the tile: the same terms (each
// the matmul's own fold over k, in order: the same kernel computes it), in the same order, from
// the same +0, so the same bits (padding skipped, NaNs canonical: cpu/fold_segs.h).
#include <algorithm>
#include <atomic>
#include <cstring>

#include "cpu/epilogue.h"
#include "cpu/fold_segs.h"
#include "cpu/gemm.h"
#include "cpu/gemm_fused.h"
#include "cpu/kernel.h"
#include "cpu/matmul_plan.h"
#include "cpu/threads.h"
#include "cpu/vector_product.h"
#include "ref/executor.h"

namespace maroon::cpu {

namespace {

std::atomic<int64_t> g_fold_runs{0}, g_planned_runs{0};

// How the sum reads the product: units are the coordinates of the view's leading batch axes,
// each one slab of the product (Mi rows by Ni columns), and every unit folds the same terms at
// the same places of its slab. Units are grouped into tasks, gr row units by gc column units,
// whose slabs share one tile.
struct FoldPlan {
  std::vector<int64_t> row_ext, row_ostr, col_ext, col_ostr;  // unit axes: extent, output stride
  // The product's batch axes (a depthwise conv2d's channels), every one a unit axis: each unit
  // lies in one batch, whose tile is computed on its own.
  std::vector<int64_t> batch_ext, batch_ostr;
  int64_t Mi = 1, Ni = 1, row_units = 1, col_units = 1, gr = 1, gc = 1;
  FoldSegs terms;                   // a unit's outputs' terms, as offsets into its slab
  bool cols_fastest = true;         // tile layout: [row][column] (else [column][row])
  int64_t ld = 0;                   // the tile's leading dimension
  // Where unit (h, g) of a task (h-th row unit, g-th column unit) starts in the tile.
  int64_t shift(int64_t h, int64_t g) const {
    return cols_fastest ? h * Mi * ld + g * Ni : g * Ni * ld + h * Mi;
  }
};

// Unit axes: the view's leading batch axes, each matched to an axis of the product's output
// that is a leading row or column axis of the plan. False if one is neither.
bool unit_axes(const Shape& s2, int nb, const std::vector<int64_t>& bstr, const Shape& out_shape,
               const Shape& mm_shape, const MatmulPlan& plan, FoldPlan* f, std::vector<int64_t>* unit_dims) {
  const Shape cstr = contiguous_strides(mm_shape), ostr = contiguous_strides(out_shape);
  std::vector<std::pair<int64_t, int64_t>> rows, cols, batches;  // (product axis, output stride)
  for (int a = 0; a < nb; ++a) {
    if (s2[a] == 1) continue;
    int64_t d = -1;
    for (size_t e = 0; e < mm_shape.size(); ++e)
      if (mm_shape[e] == s2[a] && cstr[e] == bstr[a]) d = static_cast<int64_t>(e);
    if (d < 0) return false;
    const auto in = [d](const std::vector<int64_t>& v) { return std::find(v.begin(), v.end(), d) != v.end(); };
    if (in(plan.split.rows)) rows.push_back({d, ostr[a]});
    else if (in(plan.split.cols)) cols.push_back({d, ostr[a]});
    else if (in(plan.split.batch)) batches.push_back({d, ostr[a]});
    else return false;
    unit_dims->push_back(d);
  }
  // The unit axes must be the plan's outermost rows and columns, so that a unit's rows (and
  // columns) are consecutive: row i = unit * Mi + local row.
  auto prefix = [&](std::vector<std::pair<int64_t, int64_t>>& u, const std::vector<int64_t>& axes,
                    std::vector<int64_t>* ext, std::vector<int64_t>* os, int64_t* units) {
    if (u.size() > axes.size()) return false;
    for (size_t i = 0; i < u.size(); ++i) {
      auto it = std::find_if(u.begin(), u.end(), [&](const auto& p) { return p.first == axes[i]; });
      if (it == u.end()) return false;
      ext->push_back(mm_shape[axes[i]]);
      os->push_back(it->second);
      *units *= mm_shape[axes[i]];
    }
    return true;
  };
  int64_t batch_units = 1;  // every batch axis a unit axis, in the plan's order (its batch offsets')
  if (batches.size() != plan.split.batch.size() ||
      !prefix(batches, plan.split.batch, &f->batch_ext, &f->batch_ostr, &batch_units) ||
      !prefix(rows, plan.split.rows, &f->row_ext, &f->row_ostr, &f->row_units) ||
      !prefix(cols, plan.split.cols, &f->col_ext, &f->col_ostr, &f->col_units))
    return false;
  f->Mi = plan.split.M / f->row_units;
  f->Ni = plan.split.N / f->col_units;
  return true;  // no unit axis longer than 1: one unit, the whole product (if it fits a tile)
}

// The tile offset (for unit (0, 0)) of the product's output element t, which must lie in unit
// (0, 0)'s slab; -1 if it does not.
struct SlabIndex {
  Shape mm_shape, cstr;
  std::vector<int64_t> unit_dims, inner_rows, inner_cols;  // product axes
  int64_t index(int64_t t, int64_t* ii, int64_t* jj) const {
    if (t < 0 || t >= numel(mm_shape)) return -1;
    for (int64_t d : unit_dims)
      if ((t / cstr[d]) % mm_shape[d] != 0) return -1;
    *ii = 0;
    *jj = 0;
    for (int64_t d : inner_rows) *ii = *ii * mm_shape[d] + (t / cstr[d]) % mm_shape[d];
    for (int64_t d : inner_cols) *jj = *jj * mm_shape[d] + (t / cstr[d]) % mm_shape[d];
    return 0;
  }
};

// Every output's terms as tile offsets of unit (0, 0), cut into runs along each output row.
bool fold_terms(const Shape& s2, int nb, const ShapeTracker& inner, const std::vector<int64_t>& kaxes,
                const SlabIndex& slab, FoldPlan* f) {
  std::vector<int64_t> kept, red;
  for (size_t a = nb; a < s2.size(); ++a)
    (std::binary_search(kaxes.begin(), kaxes.end(), static_cast<int64_t>(a)) ? red : kept).push_back(a - nb);
  FoldSegs& fs = f->terms;
  for (int64_t a : kept) fs.P *= s2[a + nb];
  for (int64_t a : red) fs.R *= s2[a + nb];
  fs.width = kept.empty() ? 1 : s2[kept.back() + nb];
  if (fs.P * fs.R > (int64_t{1} << 22) || fs.P == 0 || fs.R == 0) return false;
  std::vector<int64_t> ti(static_cast<size_t>(fs.P * fs.R)), c(s2.size() - nb, 0);
  int adjacent_rows = 0, adjacent_cols = 0;
  std::vector<int64_t> ii(ti.size()), jj(ti.size());
  for (int64_t p = 0, n = 0; p < fs.P; ++p)
    for (int64_t r = 0; r < fs.R; ++r, ++n) {
      int64_t q = p, rr = r;
      for (size_t k = kept.size(); k-- > 0; q /= s2[kept[k] + nb]) c[kept[k]] = q % s2[kept[k] + nb];
      for (size_t k = red.size(); k-- > 0; rr /= s2[red[k] + nb]) c[red[k]] = rr % s2[red[k] + nb];
      const int64_t t = inner.index(c.data());
      ti[n] = t < 0 ? -1 : slab.index(t, &ii[n], &jj[n]);
      if (t >= 0 && ti[n] < 0) return false;  // reads outside its unit's slab
      if (t >= 0) ti[n] = 0;
      if (p % fs.width && ti[n] == 0 && ti[n - fs.R] == 0) {
        adjacent_rows += ii[n] == ii[n - fs.R] + 1 && jj[n] == jj[n - fs.R];
        adjacent_cols += jj[n] == jj[n - fs.R] + 1 && ii[n] == ii[n - fs.R];
      }
    }
  // The tile is laid out so that the terms of neighbouring outputs are neighbours in it.
  f->cols_fastest = adjacent_cols >= adjacent_rows;
  f->ld = f->cols_fastest ? f->gc * f->Ni : f->gr * f->Mi;
  fs.build([&](int64_t n) {
    if (ti[n] < 0) return int64_t{-1};
    return f->cols_fastest ? ii[n] * f->ld + jj[n] : jj[n] * f->ld + ii[n];
  });
  return true;
}

// mm as a product with no sum (k of one): a MUL, or a REDUCE_MULACC over no axes (a depthwise
// conv2d's input gradient: output channels are input channels, so the window tensor is a product
// of the output gradient and the weights with nothing summed). The tiles compute fma(a, b, +0),
// exactly the REDUCE_MULACC's element, or +0 + round(a * b), the MUL's element except that a -0
// becomes +0 where the mode is not rounding down. The sum reading it (`out`) cannot tell those
// apart when it rounds in the same mode: its running value starts at +0 and can only become -0
// by rounding down (fold_segs.h), and x + -0 = x + +0 for every other x.
bool plan_outer_product(Node& mm, const Node& out, MatmulPlan* plan) {
  const bool fused = mm.op == Op::REDUCE_MULACC && mm.arg.ints.empty();
  if ((mm.op != Op::MUL || mm.rnd != out.rnd) && !fused) return false;
  if (mm.dtype != DType::Float32 && mm.dtype != DType::Float64) return false;
  if (fused && !fused_native_fma()) return false;
  // Its factors realized already (a depthwise conv2d's output gradient feeds the weight gradient
  // too, so it is written out): one still fused is left to the generic fold, which computes it
  // in its program. Written out here first, then declined by the fold's checks, it was a buffer
  // more: the MNIST CNN's peak RSS grew 32 MB.
  for (const NodePtr& s : mm.src)
    if (s->dtype != mm.dtype || !s->realized) return false;
  const Node& x = *mm.src[0];
  const Node& y = *mm.src[1];
  if (!plan_matmul(*x.buffer, x.view.expand(mm.shape), *y.buffer, y.view.expand(mm.shape), {}, mm.shape, plan))
    return false;
  plan->fused = fused;
  return plan->split.M >= 2 && plan->split.N >= 2;
}

// Rows i0.. (m) by columns j0.. (n) of batch b of a product with k of one (plan_outer_product)
// into the tile ([row][column] at ld, or [column][row]): each tile row is one element of one
// factor times the other's elements along the tile's fast axis (outer_row), the element that the
// packed kernels' single step computes (+0 + round(a * b), or fma(a, b, +0)). The packed kernels
// packed both factors and ran their edge tiles for it: a third of the depthwise input gradient.
void outer_tile(DType d, const MatmulPlan& p, int64_t b, int64_t i0, int64_t m, int64_t j0, int64_t n,
                bool cols_fastest, int64_t ld, uint8_t* tile) {
  const size_t sz = itemsize(d);
  const uint8_t* A = static_cast<const uint8_t*>(p.x.data) + (p.batchA[b] + p.kA[0]) * static_cast<int64_t>(sz);
  const uint8_t* B = static_cast<const uint8_t*>(p.y.data) + (p.batchB[b] + p.kB[0]) * static_cast<int64_t>(sz);
  const uint8_t* fast = cols_fastest ? B : A;  // the factor along a tile row, gathered once
  const uint8_t* slow = cols_fastest ? A : B;
  const int64_t* foff = cols_fastest ? p.colB.data() + j0 : p.rowA.data() + i0;
  const int64_t* soff = cols_fastest ? p.rowA.data() + i0 : p.colB.data() + j0;
  const int64_t nf = cols_fastest ? n : m, ns = cols_fastest ? m : n;
  thread_local std::vector<uint64_t> v;
  v.resize(static_cast<size_t>(nf));
  gather_offsets(sz, fast, foff, nf, v.data());
  for (int64_t r = 0; r < ns; ++r)
    outer_row(d, p.fused, slow + soff[r] * static_cast<int64_t>(sz), v.data(), nf, tile + r * ld * static_cast<int64_t>(sz));
}

}  // namespace

bool try_matmul_fold(Node& out, const std::vector<Node*>& chain, Node& mm, const std::vector<Node*>& mm_chain,
                     const Epilogue* epi) {
  if (out.arg.reduce_op != ReduceOp::ADD || out.dtype != mm.dtype || chain.empty()) return false;
  // The view through which the sum reads the product's (contiguous) result, and its batch axes.
  ShapeTracker v = ShapeTracker::contiguous(mm.shape);
  for (size_t i = chain.size(); i-- > 0;) v = ref::movement_view(*chain[i], v);
  std::vector<int64_t> bstr;
  ShapeTracker inner = v;
  const int nb = v.batch_axes(&bstr, &inner);
  const std::vector<int64_t>& kaxes = out.arg.ints;
  if (nb == 0 || kaxes.empty() || kaxes.front() < nb || numel(out.shape) == 0) return false;
  MatmulPlan plan;
  if (!plan_matmul_node(mm, mm_chain, &plan) && !(mm_chain.empty() && plan_outer_product(mm, out, &plan)))
    return false;
  FoldPlan f;
  SlabIndex slab{mm.shape, contiguous_strides(mm.shape), {}, {}, {}};
  if (!unit_axes(v.shape(), nb, bstr, out.shape, mm.shape, plan, &f, &slab.unit_dims)) return false;
  slab.inner_rows.assign(plan.split.rows.begin() + f.row_ext.size(), plan.split.rows.end());
  slab.inner_cols.assign(plan.split.cols.begin() + f.col_ext.size(), plan.split.cols.end());
  // A task's tile: about 128 rows by 256 columns of the product (a few hundred KB, in cache
  // while its outputs are folded); a function of the shape only, like every split.
  f.gr = std::clamp<int64_t>((128 + f.Mi - 1) / f.Mi, 1, f.row_units);
  f.gc = std::clamp<int64_t>((256 + f.Ni - 1) / f.Ni, 1, f.col_units);
  const size_t sz = itemsize(out.dtype);
  if (f.gr * f.Mi * f.gc * f.Ni * static_cast<int64_t>(sz) > (int64_t{16} << 20)) return false;
  if (!fold_terms(v.shape(), nb, inner, kaxes, slab, &f)) return false;
  plan_fold_vec(out.dtype, &f.terms);
  std::atomic<bool> all_planned{true};

  auto buf = std::make_shared<Buffer>(out.dtype, numel(out.shape));
  const int64_t tasks_r = (f.row_units + f.gr - 1) / f.gr, tasks_c = (f.col_units + f.gc - 1) / f.gc;
  const int64_t per_batch = tasks_r * tasks_c;
  const DType d = out.dtype;
  parallel_for(plan.split.NB * per_batch, [&](int64_t task) {
    const int64_t b = task / per_batch, tr = task % per_batch / tasks_c, tc = task % tasks_c;
    const int64_t h1 = std::min(f.gr, f.row_units - tr * f.gr), g1 = std::min(f.gc, f.col_units - tc * f.gc);
    const int64_t i0 = tr * f.gr * f.Mi, j0 = tc * f.gc * f.Ni, m = h1 * f.Mi, n = g1 * f.Ni;
    // The tile's rows and columns: the plan's, at their place in the tile.
    thread_local std::vector<int64_t> rowT, colT;
    thread_local std::unique_ptr<uint64_t[]> tile_mem, bpack_mem;
    thread_local size_t tile_cap = 0, bpack_cap = 0;
    rowT.resize(static_cast<size_t>(m));
    colT.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < m; ++i) rowT[i] = f.cols_fastest ? i * f.ld : i;
    for (int64_t j = 0; j < n; ++j) colT[j] = f.cols_fastest ? j : j * f.ld;
    // The tile, with slack on both sides for fold_segs_vec's loads (zeroed: never added, but
    // never left unwritten either).
    const size_t tile_bytes = static_cast<size_t>(f.gr * f.Mi * f.gc * f.Ni) * sz;
    uint8_t* const mem = static_cast<uint8_t*>(scratch(&tile_mem, &tile_cap, tile_bytes + 2 * kFoldSlackBytes));
    std::memset(mem, 0, kFoldSlackBytes);
    std::memset(mem + kFoldSlackBytes + tile_bytes, 0, kFoldSlackBytes);
    void* const tile = mem + kFoldSlackBytes;
    static const int64_t zero = 0;
    if (mm.rnd != Round::NearestEven) set_hw_round(mm.rnd);
    if (plan.split.K == 1) {
      outer_tile(d, plan, b, i0, m, j0, n, f.cols_fastest, f.ld, static_cast<uint8_t*>(tile));
    } else {
      // Rows adjacent in the tile are computed as the product's columns (y times x: the same
      // products summed in the same order), so the kernel writes whole tile rows in place.
      const bool t = !f.cols_fastest;
      GemmArgs g{t ? plan.y.data : plan.x.data, t ? plan.x.data : plan.y.data, tile,
                 t ? n : m, t ? m : n, plan.split.K,
                 t ? plan.kB.data() : plan.kA.data(), t ? plan.kA.data() : plan.kB.data(),
                 t ? plan.colB.data() + j0 : plan.rowA.data() + i0, t ? plan.rowA.data() + i0 : plan.colB.data() + j0,
                 t ? colT.data() : rowT.data(), t ? rowT.data() : colT.data(),
                 (t ? plan.batchB.data() : plan.batchA.data()) + b, (t ? plan.batchA.data() : plan.batchB.data()) + b,
                 &zero, 0, 1, 0, false};
      g.fused = plan.fused;  // a REDUCE_MULACC's product (plan_fused_node): the FMA tiles
      g.tasks_m = (g.M + kGemmMC - 1) / kGemmMC;
      g.span = g.N;
      int64_t mr, nr;
      gemm_panel_sizes(d, g.M, g.N, &mr, &nr);
      const int64_t panels = (g.N + nr - 1) / nr;
      void* const bpack = scratch(&bpack_mem, &bpack_cap, static_cast<size_t>(panels * nr * g.K) * sz);
      gemm_pack_b(d, g, 0, bpack, 0, panels);
      for (int64_t k = 0; k < g.tasks_m; ++k) gemm_task(d, g, bpack, k);
    }
    if (mm.rnd != out.rnd) set_hw_round(out.rnd);
    thread_local std::vector<int64_t> starts;  // each unit's outputs: a run at its place
    starts.clear();
    int64_t ob = 0;  // batch b's place in the output: its coordinates along the batch unit axes
    for (int64_t a = static_cast<int64_t>(f.batch_ext.size()), ub = b; a-- > 0; ub /= f.batch_ext[a])
      ob += (ub % f.batch_ext[a]) * f.batch_ostr[a];
    for (int64_t h = 0; h < h1; ++h)
      for (int64_t gi = 0; gi < g1; ++gi) {
        // The unit's place in the output: its coordinates along the row and column unit axes.
        int64_t o = ob, ur = tr * f.gr + h, uc = tc * f.gc + gi;
        for (size_t a = f.row_ext.size(); a-- > 0; ur /= f.row_ext[a]) o += (ur % f.row_ext[a]) * f.row_ostr[a];
        for (size_t a = f.col_ext.size(); a-- > 0; uc /= f.col_ext[a]) o += (uc % f.col_ext[a]) * f.col_ostr[a];
        if (fold_segs_vec(d, f.terms, static_cast<const uint8_t*>(tile) + f.shift(h, gi) * sz, buf->bytes() + o * sz) !=
            FoldVecPath::Planned)
          all_planned.store(false, std::memory_order_relaxed);
        if (epi) starts.push_back(o);
      }
    if (out.rnd != Round::NearestEven) set_hw_round(Round::NearestEven);
    // A unit's outputs are the trailing (kept) axes of a contiguous output at its coordinates
    // along the leading (unit) ones: one run of f.terms.P, final once folded, still in cache.
    if (epi) epi->apply_runs(buf->bytes(), starts.data(), starts.size(), f.terms.P);
  }, Round::NearestEven);
  Node& result = epi ? epi->out() : out;  // with an epilogue, its node holds the result
  result.buffer = buf;
  result.view.set_contiguous(result.shape);
  ++g_fold_runs;
  if (all_planned.load()) ++g_planned_runs;
  return true;
}

int64_t matmul_fold_runs() { return g_fold_runs.load(); }
int64_t matmul_fold_planned_runs() { return g_planned_runs.load(); }

}  // namespace maroon::cpu
