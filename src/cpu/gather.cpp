// GATHER as copies. The output is cut into rows: one per position of the axes up to and
// including `axis`, each as long as the axes after it (`inner`). Where x reads each row
// contiguously and the index is the same along a row (X[idx] and Embedding: an index broadcast
// over the row), a row is one index load and one memcpy; otherwise each element is found through
// the views. Tasks are fixed blocks of rows, whatever the thread count.
#include "cpu/gather.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>

#include "core/gather.h"
#include "cpu/threads.h"

namespace maroon::cpu {

namespace {

// Bytes of output per task: big enough to amortize a task, small enough to spread 60000 rows.
constexpr int64_t kTaskBytes = 64 * 1024;
std::atomic<int64_t> g_remaps{0};

// One unmasked view whose axes after `axis` (those of size > 1) are row-major with unit step, so
// a row is contiguous in the buffer.
bool contiguous_rows(const ShapeTracker& t, size_t axis) {
  if (t.views().size() != 1 || t.views()[0].has_mask()) return false;
  const View& v = t.views()[0];
  int64_t want = 1;
  for (size_t d = v.shape.size(); d-- > axis + 1;) {
    if (v.shape[d] == 1) continue;
    if (v.strides[d] != want) return false;
    want *= v.shape[d];
  }
  return true;
}

// One unmasked view that does not move along the axes after `axis` (the index is one per row).
bool constant_rows(const ShapeTracker& t, size_t axis) {
  if (t.views().size() != 1 || t.views()[0].has_mask()) return false;
  const View& v = t.views()[0];
  for (size_t d = axis + 1; d < v.shape.size(); ++d)
    if (v.shape[d] != 1 && v.strides[d] != 0) return false;
  return true;
}

// Row r's coordinates on the axes up to `axis` (the rest are 0).
void row_coords(int64_t r, const Shape& s, size_t axis, std::vector<int64_t>& c) {
  for (size_t d = axis + 1; d-- > 0;) {
    c[d] = r % s[d];
    r /= s[d];
  }
}

struct Rows {
  const Node& x;
  const Node& ix;
  size_t axis;
  int64_t rows, inner;
  size_t item;
};

// Element i of a buffer of `sz`-byte elements, zero-extended (Buffer::load without its call).
inline uint64_t load_bits(const uint8_t* p, int64_t i, size_t sz) {
  switch (sz) {
    case 1: return p[i];
    case 2: { uint16_t v; std::memcpy(&v, p + 2 * i, 2); return v; }
    case 4: { uint32_t v; std::memcpy(&v, p + 4 * i, 4); return v; }
    default: { uint64_t v; std::memcpy(&v, p + 8 * i, 8); return v; }
  }
}

// The fast case: each row is one index and one contiguous run of x. The rows' coordinates are
// counted up a row at a time and both views' row starts kept as running sums: a row's
// coordinates by division and a memcpy call per element were most of a gather along the last
// axis (a row of one element: interpolate's), 28 ms for 2M elements.
void copy_rows(const Rows& g, Node& n, int64_t r0, int64_t r1) {
  const View& vx = g.x.view.views()[0];
  const View& vi = g.ix.view.views()[0];
  const size_t A = g.axis;
  std::vector<int64_t> c(n.shape.size(), 0);
  row_coords(r0, n.shape, A, c);
  int64_t bx = vx.offset, bi = vi.offset;  // x's start without the axis's term; the index's
  for (size_t d = 0; d < A; ++d) bx += c[d] * vx.strides[d], bi += c[d] * vi.strides[d];
  bi += c[A] * vi.strides[A];
  uint8_t* out = n.buffer->bytes();
  const uint8_t* src = g.x.buffer->bytes();
  const uint8_t* idx = g.ix.buffer->bytes();
  const size_t isz = itemsize(g.ix.dtype);
  const size_t row_bytes = static_cast<size_t>(g.inner) * g.item;
  const int64_t size = g.x.shape[A];
  // gather_position's rule with the dtype's facts read once (itemsize and is_unsigned are calls).
  const bool uns = is_unsigned(g.ix.dtype);
  const unsigned shift = 64 - 8 * static_cast<unsigned>(isz);
  auto position = [&](uint64_t bits) -> int64_t {
    if (uns) return bits < static_cast<uint64_t>(size) ? static_cast<int64_t>(bits) : -1;
    const int64_t v = static_cast<int64_t>(bits << shift) >> shift;
    return v >= 0 && v < size ? v : -1;
  };
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t pos = position(load_bits(idx, bi, isz));
    uint8_t* dst = out + static_cast<size_t>(r) * row_bytes;
    if (pos < 0) {
      std::memset(dst, 0, row_bytes);
    } else {
      const uint8_t* from = src + static_cast<size_t>(bx + pos * vx.strides[A]) * g.item;
      if (row_bytes == 4) std::memcpy(dst, from, 4);  // a size the compiler knows: a move
      else if (row_bytes == 8) std::memcpy(dst, from, 8);
      else std::memcpy(dst, from, row_bytes);
    }
    // The next row: the axis counted up, carried into the axes before it.
    bi += vi.strides[A];
    if (++c[A] < n.shape[A]) continue;
    bi -= c[A] * vi.strides[A];
    c[A] = 0;
    for (size_t d = A; d-- > 0;) {
      bx += vx.strides[d], bi += vi.strides[d];
      if (++c[d] < n.shape[d]) break;
      bx -= c[d] * vx.strides[d], bi -= c[d] * vi.strides[d];
      c[d] = 0;
    }
  }
}

// Any layout: every element's index and source through the views.
void copy_elements(const Rows& g, Node& n, int64_t r0, int64_t r1) {
  std::vector<int64_t> c(n.shape.size(), 0);
  const size_t last = n.shape.size() - 1;
  for (int64_t r = r0; r < r1; ++r) {
    std::fill(c.begin(), c.end(), 0);
    row_coords(r, n.shape, g.axis, c);
    const int64_t k = c[g.axis];
    for (int64_t j = 0; j < g.inner; ++j) {
      if (g.axis < last) {  // the inner coordinates of element j of the row
        int64_t t = j;
        for (size_t d = last; d > g.axis; --d) {
          c[d] = t % n.shape[d];
          t /= n.shape[d];
        }
      }
      c[g.axis] = k;
      const int64_t ii = g.ix.view.index(c.data());  // padding reads as zero bits, index 0
      const int64_t pos = gather_position(ii < 0 ? 0 : g.ix.buffer->load(ii), g.ix.dtype, g.x.shape[g.axis]);
      uint64_t bits = 0;
      if (pos >= 0) {
        c[g.axis] = pos;
        const int64_t xi = g.x.view.index(c.data());
        bits = xi < 0 ? 0 : g.x.buffer->load(xi);
      }
      n.buffer->store(r * g.inner + j, bits);
    }
  }
}

// Rows of one element (a gather along the last axis of size > 1) whose index depends on the
// position along the axis alone (interpolate's along an image's width): the axis's source
// offsets found once, then each row of the axes before it a table-driven copy. copy_rows spent
// ~2.4 ns an element there (an index load, its range check and the running sums per element):
// 2.4 ms of each of the four gathers of a bilinear (32,16,32,32) to 64x64. Same elements, same
// zeros for an index out of range.
constexpr int64_t kNoElement = INT64_MIN;  // an index out of range (a negative stride makes offsets negative)
template <class T>
void remap_rows(const T* src, const int64_t* off, int64_t len, const std::vector<int64_t>& base, int64_t q0,
                int64_t q1, T* out) {
  for (int64_t q = q0; q < q1; ++q) {
    const T* s = src + base[static_cast<size_t>(q)];
    T* o = out + q * len;
    for (int64_t j = 0; j < len; ++j) o[j] = off[j] == kNoElement ? T(0) : s[off[j]];
  }
}

bool remap_last_axis(const Rows& g, Node& n) {
  const size_t A = g.axis;
  if (g.inner != 1 || g.x.view.views().size() != 1 || g.x.view.views()[0].has_mask() ||
      g.ix.view.views().size() != 1 || g.ix.view.views()[0].has_mask())
    return false;
  const View& vx = g.x.view.views()[0];
  const View& vi = g.ix.view.views()[0];
  for (size_t d = 0; d < A; ++d)
    if (n.shape[d] != 1 && vi.strides[d] != 0) return false;  // the index varies with the row
  const int64_t len = n.shape[A], size = g.x.shape[A];
  const int64_t rows = g.rows / len;  // rows of the axes before A
  // The table pays where rows share it; a gather of one long row (a 1-D x[idx]) keeps copy_rows,
  // which streams it in parallel tasks without a table as large as its index.
  if (rows < 2 || len > kTaskBytes) return false;
  std::vector<int64_t> off(static_cast<size_t>(len));
  const uint8_t* idx = g.ix.buffer->bytes();
  for (int64_t j = 0; j < len; ++j) {
    const int64_t pos = gather_position(load_bits(idx, vi.offset + j * vi.strides[A], itemsize(g.ix.dtype)), g.ix.dtype, size);
    off[static_cast<size_t>(j)] = pos < 0 ? kNoElement : pos * vx.strides[A];
  }
  std::vector<int64_t> base(static_cast<size_t>(rows));
  std::vector<int64_t> c(n.shape.size(), 0);
  for (int64_t q = 0; q < rows; ++q) {  // each row's first element of x, by counting up
    int64_t b = vx.offset;
    for (size_t d = 0; d < A; ++d) b += c[d] * vx.strides[d];
    base[static_cast<size_t>(q)] = b;
    for (size_t d = A; d-- > 0;) {
      if (++c[d] < n.shape[d]) break;
      c[d] = 0;
    }
  }
  const int64_t per_task = std::max<int64_t>(1, kTaskBytes / std::max<int64_t>(1, len * static_cast<int64_t>(g.item)));
  const uint8_t* src = g.x.buffer->bytes();
  uint8_t* out = n.buffer->bytes();
  parallel_for((rows + per_task - 1) / per_task, [&](int64_t t) {
    const int64_t q0 = t * per_task, q1 = std::min(rows, q0 + per_task);
    switch (g.item) {
      case 1: return remap_rows(src, off.data(), len, base, q0, q1, out);
      case 2: return remap_rows(reinterpret_cast<const uint16_t*>(src), off.data(), len, base, q0, q1, reinterpret_cast<uint16_t*>(out));
      case 4: return remap_rows(reinterpret_cast<const uint32_t*>(src), off.data(), len, base, q0, q1, reinterpret_cast<uint32_t*>(out));
      default: return remap_rows(reinterpret_cast<const uint64_t*>(src), off.data(), len, base, q0, q1, reinterpret_cast<uint64_t*>(out));
    }
  }, n.rnd);
  g_remaps.fetch_add(1, std::memory_order_relaxed);
  return true;
}

}  // namespace

int64_t gather_last_axis_remaps() { return g_remaps.load(std::memory_order_relaxed); }

void run_gather(Node& n) {
  Rows g{*n.src[0], *n.src[1], static_cast<size_t>(n.arg.ints[0]), 1, 1, itemsize(n.dtype)};
  for (size_t d = 0; d < n.shape.size(); ++d) (d <= g.axis ? g.rows : g.inner) *= n.shape[d];
  n.buffer = std::make_shared<Buffer>(n.dtype, numel(n.shape));
  n.view.set_contiguous(n.shape);
  if (g.rows == 0 || g.inner == 0) return;
  if (remap_last_axis(g, n)) return;
  const bool fast = contiguous_rows(g.x.view, g.axis) && constant_rows(g.ix.view, g.axis);
  const int64_t per_task = std::max<int64_t>(1, kTaskBytes / std::max<int64_t>(1, g.inner * static_cast<int64_t>(g.item)));
  parallel_for((g.rows + per_task - 1) / per_task, [&](int64_t t) {
    const int64_t r0 = t * per_task, r1 = std::min(g.rows, r0 + per_task);
    fast ? copy_rows(g, n, r0, r1) : copy_elements(g, n, r0, r1);
  }, n.rnd);
}

}  // namespace maroon::cpu
