// stack_all (api/concat.cpp) selects each slot with a WHERE over padded sources and a padded true
// mask, which keeps every bit (tinygrad's sum of zero paddings would turn -0 into +0). Through the
// tile interpreter every element staged all n sources through their masked views (zeros for all
// but one) and evaluated the n - 1 WHEREs: stack or cat of four (1024,1024) float32 took 7.5 ms on
// one thread, PyTorch's cat 0.8. Each slot is a plain copy of its source's elements, bit for bit
// (the reference's WHERE returns its operand's bits; a NaN keeps its payload), so that is what
// this kernel writes; being a kernel, it also runs in JIT replays.
#include "cpu/select_copy.h"

#include <algorithm>
#include <atomic>
#include <vector>

#include "cpu/threads.h"

namespace maroon::cpu {

namespace {

std::atomic<int64_t> g_select_copies{0};

// The leaf's single view, if it has data at slot `i` of axis 0 only (every other axis whole).
const View* slot_view(const Node& leaf, const Shape& shape, int64_t i) {
  if (leaf.view.views().size() != 1 || leaf.view.shape() != shape) return nullptr;
  const View& v = leaf.view.views()[0];
  if (!v.has_mask() || v.mask[0].first != i || v.mask[0].second != i + 1) return nullptr;
  for (size_t d = 1; d < shape.size(); ++d)
    if (v.mask[d].first > 0 || v.mask[d].second < shape[d]) return nullptr;
  return &v;
}

// A bool leaf true exactly at slot i of axis 0 (and the same element everywhere there).
bool slot_mask(const Node& leaf, const Shape& shape, int64_t i) {
  if (leaf.dtype != DType::Bool || leaf.buffer->dtype != DType::Bool) return false;
  const View* v = slot_view(leaf, shape, i);
  if (!v) return false;
  for (size_t d = 1; d < shape.size(); ++d)
    if (v->strides[d] != 0) return false;
  const int64_t at = v->offset + i * v->strides[0];
  return at >= 0 && at < leaf.buffer->count && leaf.buffer->bytes()[at] != 0;
}

// Axes 1.. of view v as (extent, stride) pairs, outermost first, with the axes of extent 1
// dropped and each axis merged into the next one in where it steps over it exactly (a sort's
// stacks have eight axes of two elements, mostly one run): longer rows, fewer of them.
std::vector<std::pair<int64_t, int64_t>> merged_axes(const View& v) {
  std::vector<std::pair<int64_t, int64_t>> ax;
  for (size_t d = 1; d < v.shape.size(); ++d) {
    if (v.shape[d] == 1) continue;
    if (!ax.empty() && ax.back().second == v.strides[d] * v.shape[d]) {
      ax.back() = {ax.back().first * v.shape[d], v.strides[d]};
      continue;
    }
    ax.push_back({v.shape[d], v.strides[d]});
  }
  if (ax.empty()) ax.push_back({1, 0});
  return ax;
}

template <class T>
void gather_block(const T* s, const int64_t* off, int64_t n, T* o) {
  for (int64_t j = 0; j < n; ++j) o[j] = s[off[j]];
}

// Rows shorter than kShortRow (the sort's stacks: flipped halves, whose axes do not merge, rows
// of two to sixteen) copied a block of trailing axes at a time instead, up to kBlock elements,
// through a table of their offsets made once: a row's call and the carry through eight axes
// were ~2 ns an element. False where the trailing axes hold no more than a row (nothing done).
constexpr int64_t kShortRow = 64, kBlock = 4096;
bool copy_blocks(const std::vector<std::pair<int64_t, int64_t>>& ax, int64_t base, const uint8_t* src, size_t sz,
                 uint8_t* dst) {
  const size_t na = ax.size();
  size_t nb = 0;  // trailing axes in a block
  int64_t bsize = 1;
  while (nb < na && bsize * ax[na - 1 - nb].first <= kBlock) bsize *= ax[na - 1 - nb++].first;
  if (nb < 2) return false;
  std::vector<int64_t> off(static_cast<size_t>(bsize));
  std::vector<int64_t> c(nb, 0);
  for (int64_t j = 0, at = 0; j < bsize; ++j) {  // counted up over the block's axes
    off[static_cast<size_t>(j)] = at;
    for (size_t d = nb; d-- > 0;) {
      const auto& [e, st] = ax[na - nb + d];
      at += st;
      if (++c[d] < e) break;
      at -= st * e;
      c[d] = 0;
    }
  }
  int64_t blocks = 1;
  for (size_t d = 0; d + nb < na; ++d) blocks *= ax[d].first;
  const int64_t per_task = std::max<int64_t>(1, (int64_t{1} << 16) / bsize);
  parallel_for((blocks + per_task - 1) / per_task, [&](int64_t t) {
    for (int64_t q = t * per_task; q < std::min(blocks, (t + 1) * per_task); ++q) {
      int64_t at = base;  // block q's first element
      for (int64_t r = q, d = static_cast<int64_t>(na - nb) - 1; d >= 0; --d) {
        at += r % ax[static_cast<size_t>(d)].first * ax[static_cast<size_t>(d)].second;
        r /= ax[static_cast<size_t>(d)].first;
      }
      const uint8_t* s = src + at * static_cast<int64_t>(sz);
      uint8_t* o = dst + static_cast<size_t>(q * bsize) * sz;
      if (sz == 4) gather_block(reinterpret_cast<const uint32_t*>(s), off.data(), bsize, reinterpret_cast<uint32_t*>(o));
      else if (sz == 8) gather_block(reinterpret_cast<const uint64_t*>(s), off.data(), bsize, reinterpret_cast<uint64_t*>(o));
      else if (sz == 2) gather_block(reinterpret_cast<const uint16_t*>(s), off.data(), bsize, reinterpret_cast<uint16_t*>(o));
      else gather_block(s, off.data(), bsize, o);
    }
  }, Round::NearestEven);
  return true;
}

// Slot i's elements of view v (unmasked there) row-major into dst: rows along the last merged
// axis, each one memcpy where the source is contiguous along it. Tasks of whole rows, or of
// pieces of a long row (a contiguous source is one row), fixed in size (a copy: the split cannot
// change a bit).
void copy_slot(const View& v, int64_t i, const uint8_t* src, size_t sz, uint8_t* dst) {
  const std::vector<std::pair<int64_t, int64_t>> ax = merged_axes(v);
  const size_t na = ax.size();
  const int64_t row = ax.back().first, step = ax.back().second;
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < na; ++d) rows *= ax[d].first;
  if (row == 0 || rows == 0) return;
  const int64_t base = v.offset + i * v.strides[0];
  constexpr int64_t kTaskElements = int64_t{1} << 16;
  auto row_at = [&](int64_t r) {  // row r's first element
    int64_t at = base;
    for (int64_t q = r, d = static_cast<int64_t>(na) - 2; d >= 0; --d) {
      at += q % ax[static_cast<size_t>(d)].first * ax[static_cast<size_t>(d)].second;
      q /= ax[static_cast<size_t>(d)].first;
    }
    return at;
  };
  // A row (at most kTaskElements elements) through the kernels' strided copier (kernel.h).
  auto copy_row = [&](const uint8_t* s, int64_t n, uint8_t* o) { copy_strided(s, sz, step, static_cast<int>(n), o); };
  if (row < kShortRow && na > 1 && copy_blocks(ax, base, src, sz, dst)) return;
  if (row > kTaskElements) {  // long rows (a contiguous source is one): pieces of them a task
    const int64_t pieces = (row + kTaskElements - 1) / kTaskElements;
    parallel_for(rows * pieces, [&](int64_t u) {
      const int64_t r = u / pieces, j0 = u % pieces * kTaskElements, n = std::min(kTaskElements, row - j0);
      copy_row(src + (row_at(r) + j0 * step) * static_cast<int64_t>(sz), n,
               dst + static_cast<size_t>(r * row + j0) * sz);
    }, Round::NearestEven);
    return;
  }
  const int64_t per_task = std::max<int64_t>(1, kTaskElements / row);
  parallel_for((rows + per_task - 1) / per_task, [&](int64_t t) {
    const int64_t r0 = t * per_task, r1 = std::min(rows, r0 + per_task);
    std::vector<int64_t> c(na, 0);  // row r0's coordinates along the outer axes, then counted up
    int64_t at = base;              // and its first element
    for (int64_t q = r0, d = static_cast<int64_t>(na) - 2; d >= 0; --d) {
      const size_t k = static_cast<size_t>(d);
      c[k] = q % ax[k].first;
      q /= ax[k].first;
      at += c[k] * ax[k].second;
    }
    for (int64_t r = r0; r < r1; ++r) {
      copy_row(src + at * static_cast<int64_t>(sz), row, dst + static_cast<size_t>(r * row) * sz);
      for (int64_t d = static_cast<int64_t>(na) - 2; d >= 0; --d) {  // the next row
        const size_t k = static_cast<size_t>(d);
        at += ax[k].second;
        if (++c[k] < ax[k].first) break;
        at -= ax[k].second * ax[k].first;
        c[k] = 0;
      }
    }
  }, Round::NearestEven);
}

}  // namespace

bool try_select_copy(Node& out, const Program& prog) {
  const Shape& shape = out.shape;
  const int L = static_cast<int>(prog.leaves.size());
  const int64_t n = static_cast<int64_t>(prog.code.size()) + 1;
  if (shape.empty() || shape[0] != n || n < 2 || !prog.outputs.empty() || prog.result != L + n - 2) return false;
  std::vector<const View*> slots(static_cast<size_t>(n));
  std::vector<const Node*> sources(static_cast<size_t>(n));
  auto slot = [&](int id, int64_t i) {  // value id `id` is a source leaf for slot i
    if (id < 0 || id >= L) return false;
    const Node& leaf = *prog.leaves[static_cast<size_t>(id)];
    if (leaf.dtype != out.dtype || leaf.buffer->dtype != out.dtype) return false;
    slots[static_cast<size_t>(i)] = slot_view(leaf, shape, i);
    sources[static_cast<size_t>(i)] = &leaf;
    return slots[static_cast<size_t>(i)] != nullptr;
  };
  for (int64_t j = 0; j + 1 < n; ++j) {  // code[j] = WHERE(m[j + 1], s[j + 1], previous)
    const Instr& ins = prog.code[static_cast<size_t>(j)];
    if (ins.op != Op::WHERE || ins.nsrc != 3 || ins.in != out.dtype || ins.out != out.dtype) return false;
    const int prev = j == 0 ? ins.src[2] : L + static_cast<int>(j) - 1;
    if (ins.src[2] != prev || (j == 0 && !slot(ins.src[2], 0))) return false;
    if (ins.src[0] < 0 || ins.src[0] >= L || !slot_mask(*prog.leaves[static_cast<size_t>(ins.src[0])], shape, j + 1))
      return false;
    if (!slot(ins.src[1], j + 1)) return false;
  }
  const size_t sz = itemsize(out.dtype);
  const int64_t per_slot = numel(shape) / n;
  auto buf = std::make_shared<Buffer>(out.dtype, numel(shape));
  for (int64_t i = 0; i < n; ++i)
    copy_slot(*slots[static_cast<size_t>(i)], i, sources[static_cast<size_t>(i)]->buffer->bytes(), sz,
              buf->bytes() + static_cast<size_t>(i * per_slot) * sz);
  out.buffer = buf;
  out.view.set_contiguous(shape);
  g_select_copies.fetch_add(1, std::memory_order_relaxed);
  return true;
}

int64_t select_copies() { return g_select_copies.load(std::memory_order_relaxed); }

}  // namespace maroon::cpu
