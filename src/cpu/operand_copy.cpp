#include "cpu/operand_copy.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "cpu/kernel.h"
#include "cpu/keyed_store.h"

namespace maroon::cpu {

namespace {

// A copy's rows as runs: row r is the `row` elements starts[r] + i * step of the buffer.
struct Runs {
  int64_t row = 0, step = 0;
  std::vector<int64_t> starts;
};

// A model's operands that need a copy are few (attention's heads: four per layer), and a run
// list is an eighth of the indices it replaces at most; longer lists are not kept.
constexpr size_t kEntries = 32;
constexpr int64_t kMaxRows = int64_t{1} << 17;

KeyedStore<Runs>& store() {
  static auto* s = new KeyedStore<Runs>(kEntries);  // never destroyed (see matmul_layouts.cpp)
  return *s;
}

// Every input the indices depend on: the dense shape and each view's shape, strides, offset and
// mask, each list preceded by its length so that no two different stacks give the same words.
void key_of(const ShapeTracker& view, const Shape& dense_shape, std::vector<int64_t>* key) {
  key->clear();
  auto list = [&](const std::vector<int64_t>& v) {
    key->push_back(static_cast<int64_t>(v.size()));
    key->insert(key->end(), v.begin(), v.end());
  };
  list(dense_shape);
  for (const View& v : view.views()) {
    list(v.shape);
    list(v.strides);
    key->push_back(v.offset);
    key->push_back(static_cast<int64_t>(v.mask.size()));
    for (const auto& [lo, hi] : v.mask) key->insert(key->end(), {lo, hi});
  }
}

template <class T>
void copy_strided_runs(const T* src, const Runs& r, T* dst) {
  for (int64_t s : r.starts) {
    const T* p = src + s;
    for (int64_t i = 0; i < r.row; ++i) dst[i] = p[i * r.step];
    dst += r.row;
  }
}

void copy_runs(const Buffer& buffer, const Runs& r, uint8_t* dst) {
  const size_t sz = itemsize(buffer.dtype);
  const uint8_t* src = buffer.bytes();
  if (r.step == 1 || r.row == 1) {
    const size_t bytes = static_cast<size_t>(r.row) * sz;
    for (int64_t s : r.starts) std::memcpy(dst, src + s * static_cast<int64_t>(sz), bytes), dst += bytes;
    return;
  }
  switch (sz) {
    case 1: return copy_strided_runs(src, r, dst);
    case 2: return copy_strided_runs(reinterpret_cast<const uint16_t*>(src), r, reinterpret_cast<uint16_t*>(dst));
    case 4: return copy_strided_runs(reinterpret_cast<const uint32_t*>(src), r, reinterpret_cast<uint32_t*>(dst));
    default: return copy_strided_runs(reinterpret_cast<const uint64_t*>(src), r, reinterpret_cast<uint64_t*>(dst));
  }
}

// Whether the row idx[0, n) is idx[0] + i * step with no padding, the step the same as the
// earlier rows' (the first row sets it).
bool extends_runs(const int64_t* idx, int64_t n, bool first, Runs* r) {
  const int64_t step = n > 1 ? idx[1] - idx[0] : 0;
  if (!first && n > 1 && step != r->step) return false;
  if (first) r->step = step;
  for (int64_t i = 0; i < n; ++i)
    if (idx[i] < 0 || idx[i] != idx[0] + i * step) return false;
  r->starts.push_back(idx[0]);
  return true;
}

}  // namespace

void copy_dense(const Buffer& buffer, const ShapeTracker& view, const Shape& dense_shape, uint8_t* dst) {
  thread_local std::vector<int64_t> key;  // reused: no allocation per call once grown
  key_of(view, dense_shape, &key);
  if (auto runs = store().find(key)) return copy_runs(buffer, *runs, dst);
  const Shape& s = view.shape();
  const int64_t n = numel(dense_shape);
  const size_t sz = itemsize(buffer.dtype);
  // Row by row along the last axis (row_indices walks the view stack without divisions).
  const int64_t row = dense_shape.empty() ? 1 : dense_shape.back();
  auto runs = std::make_shared<Runs>();
  runs->row = row;
  bool uniform = row > 0 && n / row <= kMaxRows;
  std::vector<int64_t> c(s.size(), 0), idx(static_cast<size_t>(std::max<int64_t>(row, 1)));
  for (int64_t p0 = 0; p0 < n && row > 0; p0 += row) {
    if (s.empty()) idx[0] = view.index(c.data());
    else view.row_indices(c.data(), row, idx.data());
    gather(buffer, idx.data(), static_cast<int>(row), dst + p0 * static_cast<int64_t>(sz));
    uniform = uniform && extends_runs(idx.data(), row, p0 == 0, runs.get());
    for (size_t d = s.size() - (s.empty() ? 0 : 1); d-- > 0;) {
      if (++c[d] < dense_shape[d]) break;
      c[d] = 0;
    }
  }
  if (uniform && n > 0) store().put(key, std::move(runs));
}

int64_t dense_copy_hits() { return store().hits(); }

}  // namespace maroon::cpu
