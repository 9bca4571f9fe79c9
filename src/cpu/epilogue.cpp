// The matmul's epilogue (epilogue.h): after a task of the packed kernel has written its block of
// the output, the block is rewritten, a run of adjacent elements at a time, by the elementwise
// chain that consumes the product. Each element of the run is read back as the kernel stored it
// (rounded, NaN canonical), the chain's other leaves are read through their views at the same
// positions, and the chain's program is evaluated by TileEval as the fused kernel would: same
// instructions, same order, same rounding modes, so the same bits.
#include "cpu/epilogue.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <optional>

#include "cpu/threads.h"
#include "cpu/vector_product.h"

namespace maroon::cpu {

namespace {

std::atomic<int64_t> g_runs{0}, g_fold_runs{0}, g_vector_runs{0};
std::atomic<int64_t> g_rows_in_place{0};
std::atomic<int64_t> g_rows_by_column{0};
thread_local bool t_row_in_place = false;  // a tile of this thread's task read a row in place
thread_local bool t_row_by_column = false;  // ... found from p's column alone

// The coordinates of flat position p of shape s.
void unravel(const Shape& s, int64_t p, int64_t* c) {
  for (size_t d = s.size(); d-- > 0;) {
    c[d] = s[d] ? p % s[d] : 0;
    p = s[d] ? p / s[d] : 0;
  }
}

// Calls f(coords, i, seg) for each piece of positions [p, p + n) of shape s that lies along one
// row of its last axis (i: the piece's first position, counted from p).
template <class F>
void for_row_pieces(const Shape& s, int64_t p, int n, int64_t* c, F&& f) {
  unravel(s, p, c);
  if (s.empty()) return f(c, 0, n);
  const size_t nd = s.size();
  for (int i = 0; i < n;) {
    const int seg = static_cast<int>(std::min<int64_t>(n - i, s[nd - 1] - c[nd - 1]));
    f(c, i, seg);
    i += seg;
    c[nd - 1] = 0;  // carry into the outer axes
    for (size_t d = nd - 1; d-- > 0;) { if (++c[d] < s[d]) break; c[d] = 0; }
  }
}

}  // namespace

Epilogue::Epilogue(Node& out, Node* leaf, std::unique_ptr<Program>* kept) : out_(out) {
  // A kept program is the one built below on the last run: the same graph, and the same nodes
  // realized when the plan reaches this kernel (a leaf found unrealized rebuilds it).
  bool valid = kept && *kept;
  if (valid)
    for (const Node* l : (*kept)->leaves) valid = valid && (l == leaf || l->realized);
  if (valid) {
    prog_ = kept->get();
  } else {
    // The program is built as the fused kernel's would be, with the product's node as a leaf.
    const bool was = leaf->realized;
    leaf->realized = true;
    own_ = build_program(&out);
    leaf->realized = was;
    if (kept) {
      *kept = std::make_unique<Program>(std::move(own_));
      prog_ = kept->get();
    }
  }
  const size_t L = prog_->leaves.size();
  maps_.resize(L);
  contiguous_.assign(L, false);
  run_.assign(L, 0);
  lead_.assign(L, 0);
  splat_.resize(L);
  size_.resize(L);
  along_row_.assign(L, false);
  for (size_t l = 0; l < L; ++l) {
    const Node* n = prog_->leaves[l];
    size_[l] = itemsize(n->dtype);
    if (n == leaf) { self_ = static_cast<int>(l); continue; }
    maps_[l] = std::make_unique<LeafMap>(n);
    const LeafMap& m = *maps_[l];
    contiguous_[l] = n->view.is_contiguous();
    if (!m.affine || contiguous_[l]) continue;
    // A bias along the rows: position p reads element offset + p % row (no coordinates).
    bool row_only = !out.shape.empty() && m.strides.back() == 1;
    for (size_t d = 0; d + 1 < out.shape.size(); ++d) row_only = row_only && (m.strides[d] == 0 || out.shape[d] == 1);
    along_row_[l] = row_only;
    // Positions per element read: the trailing axes along which the leaf does not move (a
    // bias broadcast over a row or a plane). A run of them is a fill.
    int64_t r = 1;
    size_t d = out.shape.size();
    for (; d > 0 && (m.strides[d - 1] == 0 || out.shape[d - 1] == 1); --d) r *= out.shape[d - 1];
    run_[l] = r;
    lead_[l] = d;
    if (r == numel(out.shape)) {  // one element everywhere: a tile filled once
      splat_[l].resize(kTile + kTilePad);
      copy_strided(n->buffer->bytes() + m.offset * itemsize(n->dtype), itemsize(n->dtype), 0, kTile + kTilePad,
                   splat_[l].data());
    }
  }
  // Adds and a ReLU (conv2d's bias, a residual): a run at a time in registers (epilogue_rows.h).
  std::vector<LeafRead> reads(L, LeafRead::kOther);
  std::vector<const void*> scalar(L, nullptr);
  for (size_t l = 0; l < L; ++l) {
    if (static_cast<int>(l) == self_) reads[l] = LeafRead::kSelf;
    else if (!splat_[l].empty()) reads[l] = LeafRead::kScalar, scalar[l] = splat_[l].data();
    else if (contiguous_[l]) reads[l] = LeafRead::kStream;
    else if (run_[l] > 1) reads[l] = LeafRead::kRunScalar;
    else if (along_row_[l]) reads[l] = LeafRead::kRowStream;
  }
  has_rows_ = match_row_epilogue(*prog_, reads, scalar, &rows_);
}

Epilogue::~Epilogue() = default;

// Positions [p, p + n) of the output, n <= kTile: the chain evaluated there, written over C.
void Epilogue::tile(uint8_t* C, int64_t p, int n, TileEval& ev) const {
  const size_t L = prog_->leaves.size(), osz = itemsize(out_.dtype);
  // Per thread: one staging tile per leaf and coordinates (a task runs many tiles).
  thread_local std::vector<std::vector<uint64_t>> staged;
  thread_local std::vector<int64_t> coords, idx;
  thread_local std::vector<const void*> direct;
  thread_local std::vector<const int64_t*> idx_ptrs;
  if (staged.size() < L) staged.resize(L);
  coords.resize(out_.shape.size() + 1);
  // Every leaf's branch below sets direct[l], and nothing writes idx_ptrs (all stay null): sized,
  // not refilled, per tile (two memset calls a tile were 2% of the ONNX CNN).
  direct.resize(L);
  if (idx_ptrs.size() != L) idx_ptrs.assign(L, nullptr);
  // A run of whole vectors of every target (kTilePad elements: SIMD loops read and write
  // nothing past it) is read and written in place; otherwise it is staged, since reading past
  // it would read elements that another task may be writing.
  const bool whole = n % kTilePad == 0;
  int64_t col = -1;  // p's column in its row, found once when a leaf needs it
  for (size_t l = 0; l < L; ++l) {
    std::vector<uint64_t>& st = staged[l];
    if (static_cast<int>(l) == self_) {  // the product itself, as the kernel stored it
      if (whole) {
        direct[l] = C + p * osz;
        continue;
      }
      st.resize(kTile + kTilePad);
      std::memcpy(st.data(), C + p * osz, static_cast<size_t>(n) * osz);
      direct[l] = st.data();
      continue;
    }
    if (!splat_[l].empty()) {
      direct[l] = splat_[l].data();
      continue;
    }
    const Node* leaf = prog_->leaves[l];
    const LeafMap& m = *maps_[l];
    const size_t sz = size_[l];
    const uint8_t* src = leaf->buffer->bytes();
    const int64_t row = out_.shape.empty() ? 1 : out_.shape.back();
    if (contiguous_[l] && p + n + kTilePad <= leaf->buffer->count) {
      direct[l] = src + p * sz;  // read in place, SIMD slack inside the buffer
    } else if (m.affine && whole && !out_.shape.empty() && m.strides.back() == 1 &&
               (col < 0 ? col = p % row : col) + n <= row) {
      // A run of adjacent elements (a bias along the output's rows: the same 256 elements were
      // copied for every tile of a row), whole vectors: read in place, nothing past it. A leaf
      // moving only along the rows is read at its column, without unravelling p (the 64-bit
      // divisions were a quarter of this function's time in the ONNX transformer).
      if (along_row_[l]) {
        direct[l] = row_element(static_cast<int>(l), col);
        t_row_by_column = true;
      } else {
        unravel(out_.shape, p, coords.data());
        direct[l] = src + m.index(coords.data()) * static_cast<int64_t>(sz);
      }
      t_row_in_place = true;
    } else if (m.affine) {
      st.resize(kTile + kTilePad);
      if (run_[l] > 1 && p / run_[l] == (p + n - 1) / run_[l]) {  // one element for the whole tile
        unravel(out_.shape, p, coords.data());
        copy_strided(src + m.index(coords.data()) * sz, sz, 0, n, st.data());
      } else {
        const int64_t last = out_.shape.empty() ? 0 : m.strides.back();
        for_row_pieces(out_.shape, p, n, coords.data(), [&](const int64_t* c, int i, int seg) {
          copy_strided(src + m.index(c) * sz, sz, last, seg, reinterpret_cast<uint8_t*>(st.data()) + i * sz);
        });
      }
      direct[l] = st.data();
    } else {  // several views or a mask: indices, then a gather (-1 reads zero bits)
      idx.resize(kTile);
      for_row_pieces(out_.shape, p, n, coords.data(), [&](const int64_t* c, int i, int seg) {
        if (out_.shape.empty()) idx[i] = m.index(c);
        else m.row(c, seg, idx.data() + i);
      });
      st.resize(kTile + kTilePad);
      gather(*leaf->buffer, idx.data(), n, st.data());
      direct[l] = st.data();
    }
  }
  // In place: each instruction reads an element before it writes that element, and only the
  // last one writes the output.
  const void* r = ev.eval(idx_ptrs, n, &direct, whole ? C + p * osz : nullptr);
  if (r != C + p * osz) std::memcpy(C + p * osz, r, static_cast<size_t>(n) * osz);
}

bool Epilogue::run_rows(uint8_t* C, int64_t p, int64_t n) const {
  const void* src[kRowSlots] = {};
  bool stream[kRowSlots] = {};
  // Leaf l's elements for [p, p + n) at src[s]: n of them, or one (false: not this way).
  auto locate = [&](int l, int s) {
    const Node* leaf = prog_->leaves[l];
    const size_t sz = size_[l];
    stream[s] = contiguous_[l] && splat_[l].empty();
    if (!splat_[l].empty()) {
      src[s] = splat_[l].data();
    } else if (stream[s]) {
      src[s] = leaf->buffer->bytes() + p * static_cast<int64_t>(sz);
    } else if (along_row_[l]) {  // a bias along the rows: adjacent elements from p's column
      const int64_t row = out_.shape.back(), col = p % row;
      if (col + n > row) return false;
      src[s] = row_element(l, col);
      stream[s] = true;
    } else {  // one element along [p, p + n), or not this way
      const int64_t q = p / run_[l];
      if (p + n > (q + 1) * run_[l]) return false;
      src[s] = leaf->buffer->bytes() + run_index(l, q) * static_cast<int64_t>(sz);
    }
    return true;
  };
  for (int a = 0; a < rows_.adds; ++a) {
    if (!locate(rows_.leaf[a], 2 * a)) return false;
    if (rows_.leaf2[a] >= 0 && !locate(rows_.leaf2[a], 2 * a + 1)) return false;
  }
  if (rows_.mask >= 0 && (!locate(rows_.mask, kMaskSlot) || !stream[kMaskSlot])) return false;
  const void* z = rows_.relu ? splat_[rows_.zero].data() : nullptr;
  run_row_epilogue(rows_, C + p * static_cast<int64_t>(itemsize(out_.dtype)), n, src, stream, z);
  return true;
}

const uint8_t* Epilogue::row_element(int l, int64_t col) const {
  return prog_->leaves[l]->buffer->bytes() + (maps_[l]->offset + col) * static_cast<int64_t>(size_[l]);
}

// Leaf l's index for the positions [q * run_[l], (q + 1) * run_[l]): q holds the coordinates of
// the axes before the run (the leaf is affine and does not move along the run's axes). The
// first axis's coordinate is what is left of q: one division fewer than unravel for conv2d's
// (batch, channel), and none for the run's axes (run_rows is called once per row of a task,
// and unravel's divisions were most of its time in `perf`).
int64_t Epilogue::run_index(int l, int64_t q) const {
  const LeafMap& m = *maps_[l];
  int64_t idx = m.offset;
  for (size_t d = lead_[l]; d-- > 1;) {
    const int64_t s = out_.shape[d];
    idx += (q % s) * m.strides[d];
    q /= s;
  }
  return lead_[l] > 0 ? idx + q * m.strides[0] : idx;
}

void Epilogue::run(uint8_t* C, int64_t p, int64_t n, TileEval& ev) const {
  for (int64_t i = 0; i < n; i += kTile) tile(C, p + i, static_cast<int>(std::min<int64_t>(kTile, n - i)), ev);
}

void Epilogue::apply(const GemmArgs& g, int64_t task) const {
  const GemmTaskBox t = gemm_task_box(g, task);
  if (t.mc <= 0 || t.nc <= 0) return;
  uint8_t* C = static_cast<uint8_t*>(g.C);
  const int64_t* rowC = g.rowC + t.i0;
  const int64_t* colC = g.colC + t.j0;
  const int64_t base = g.batchC[t.b];  // positions are the output's, for the other leaves
  std::optional<TileEval> ev;  // built only if a run needs the tile interpreter
  bool rows = false;
  // Runs of positions adjacent in the output: along each row when the columns are adjacent (a
  // row-major product, or conv2d's planes computed transposed), else along each column when
  // the rows are (conv2d's positions by channels).
  t_row_in_place = t_row_by_column = false;
  const bool cols_adjacent = t.nc > 1 && colC[1] == colC[0] + 1;
  const bool rows_adjacent = t.mc > 1 && rowC[1] == rowC[0] + 1;
  const bool along_rows = cols_adjacent || !rows_adjacent;
  // The runs are the same in every row (column): found once per task, as (first, length).
  const int64_t* along = along_rows ? colC : rowC;
  const int64_t len = along_rows ? t.nc : t.mc, across = along_rows ? t.mc : t.nc;
  thread_local std::vector<int64_t> runs;
  runs.clear();
  for (int64_t a = 0, e; a < len; a = e) {
    for (e = a + 1; e < len && along[e] == along[e - 1] + 1;) ++e;
    runs.push_back(a);
    runs.push_back(e - a);
  }
  const int64_t* other = along_rows ? rowC : colC;
  for (int64_t i = 0; i < across; ++i)
    for (size_t k = 0; k < runs.size(); k += 2) {
      const int64_t p = base + other[i] + along[runs[k]], n = runs[k + 1];
      rows |= run_any(C, p, n, &ev);
      if (pool_) pool_->fold(C, p, n);  // the run is final and in L1
    }
  if (rows) count_row_epilogue_task();
  if (t_row_in_place) g_rows_in_place.fetch_add(1, std::memory_order_relaxed);
  if (t_row_by_column) g_rows_by_column.fetch_add(1, std::memory_order_relaxed);
}

bool Epilogue::run_any(uint8_t* C, int64_t p, int64_t n, std::optional<TileEval>* ev) const {
  if (has_rows_ && run_rows(C, p, n)) return true;
  if (!*ev) ev->emplace(*prog_);
  run(C, p, n, **ev);
  return false;
}

void Epilogue::apply_runs(uint8_t* C, const int64_t* starts, size_t count, int64_t n) const {
  std::optional<TileEval> ev;  // built only if a run needs the tile interpreter
  bool rows = false;
  t_row_in_place = t_row_by_column = false;
  for (size_t i = 0; i < count; ++i) rows |= run_any(C, starts[i], n, &ev);
  if (rows) count_row_epilogue_task();
}

bool try_matmul_fold_epilogue(Node& reduce, const std::vector<Node*>& chain, Node& mm,
                              const std::vector<Node*>& mm_chain, Node& out, Node* leaf,
                              std::unique_ptr<Program>* kept) {
  if (out.dtype != reduce.dtype) return false;
  Epilogue epi(out, leaf, kept);
  if (!try_matmul_fold(reduce, chain, mm, mm_chain, &epi)) return false;
  ++g_fold_runs;
  return true;
}

bool try_matmul_epilogue(Node& reduce, const std::vector<Node*>& chain, Node& out, Node* leaf,
                         std::unique_ptr<Program>* kept, const EpiloguePoolSite* pool) {
  if (out.dtype != reduce.dtype) return false;
  Epilogue epi(out, leaf, kept);
  std::optional<EpiloguePool> ep;
  if (pool && ep.emplace().match(out, *pool)) epi.set_pool(&*ep);
  else ep.reset();
  if (!try_matmul(reduce, chain, &epi)) return false;
  ++g_runs;
  if (ep) {
    ep->finish();
    *pool->pooled = true;
  }
  return true;
}

bool try_vector_product_epilogue(Node& reduce, const std::vector<Node*>& chain, Node& out, Node* leaf,
                                 std::unique_ptr<Program>* kept) {
  if (out.dtype != reduce.dtype) return false;
  Epilogue epi(out, leaf, kept);
  if (!try_vector_product(reduce, chain, &epi)) return false;
  g_vector_runs.fetch_add(1, std::memory_order_relaxed);
  return true;
}

int64_t matmul_epilogue_runs() { return g_runs.load(); }
int64_t vector_epilogue_runs() { return g_vector_runs.load(); }
int64_t fold_epilogue_runs() { return g_fold_runs.load(); }
int64_t epilogue_rows_in_place() { return g_rows_in_place.load(); }
int64_t epilogue_rows_by_column() { return g_rows_by_column.load(); }

}  // namespace maroon::cpu
