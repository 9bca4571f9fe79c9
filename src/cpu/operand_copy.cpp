#include "cpu/operand_copy.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "cpu/gemm_pack.h"
#include "cpu/kernel.h"
#include "cpu/keyed_store.h"

namespace maroon::cpu {

namespace {

// A copy cut into runs: run r is the `row` elements starts[r] + i * step of the buffer.
struct Runs {
  int64_t row = 0, step = 0;
  std::vector<int64_t> starts;
};

// A model's operands that need a copy are few (attention's heads: four per layer); a list of
// more than 2^17 runs (1 MiB) is not kept.
constexpr size_t kEntries = 32;
constexpr int64_t kMaxRuns = int64_t{1} << 17;

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
void copy_typed_runs(const T* src, const Runs& r, T* dst) {
  for (int64_t s : r.starts) {
    const T* p = src + s;
    if (r.step == 1) copy_run(dst, p, r.row);  // inline pieces: runs are short (a head's 16)
    else
      for (int64_t i = 0; i < r.row; ++i) dst[i] = p[i * r.step];
    dst += r.row;
  }
}

void copy_runs(const Buffer& buffer, const Runs& r, uint8_t* dst) {
  const uint8_t* src = buffer.bytes();
  switch (itemsize(buffer.dtype)) {
    case 1: return copy_typed_runs(src, r, dst);
    case 2: return copy_typed_runs(reinterpret_cast<const uint16_t*>(src), r, reinterpret_cast<uint16_t*>(dst));
    case 4: return copy_typed_runs(reinterpret_cast<const uint32_t*>(src), r, reinterpret_cast<uint32_t*>(dst));
    default: return copy_typed_runs(reinterpret_cast<const uint64_t*>(src), r, reinterpret_cast<uint64_t*>(dst));
  }
}

// The length of the runs a copy is cut into: the longest arithmetic start of the first row,
// lowered to a divisor of the row (a head of 16 elements in a row of 64: attention's output
// read back through the reshape that joins its heads).
int64_t run_length(const int64_t* idx, int64_t n) {
  int64_t len = std::min<int64_t>(n, 2);
  while (len < n && idx[len] - idx[len - 1] == idx[1] - idx[0]) ++len;
  while (n % len != 0) --len;
  return len;
}

// Whether the row idx[0, n) is runs of r->row elements, each start + i * step with no padding,
// the step the same as the earlier rows' (the first row sets the run length and step).
bool extends_runs(const int64_t* idx, int64_t n, bool first, Runs* r) {
  if (first) {
    r->row = run_length(idx, n);
    r->step = r->row > 1 ? idx[1] - idx[0] : 0;
  }
  for (int64_t at = 0; at < n; at += r->row) {
    const int64_t* run = idx + at;
    for (int64_t i = 0; i < r->row; ++i)
      if (run[i] < 0 || run[i] != run[0] + i * r->step) return false;
    r->starts.push_back(run[0]);
  }
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
  bool uniform = row > 0;
  std::vector<int64_t> c(s.size(), 0), idx(static_cast<size_t>(std::max<int64_t>(row, 1)));
  for (int64_t p0 = 0; p0 < n && row > 0; p0 += row) {
    if (s.empty()) idx[0] = view.index(c.data());
    else view.row_indices(c.data(), row, idx.data());
    gather(buffer, idx.data(), static_cast<int>(row), dst + p0 * static_cast<int64_t>(sz));
    uniform = uniform && extends_runs(idx.data(), row, p0 == 0, runs.get()) &&
              static_cast<int64_t>(runs->starts.size()) <= kMaxRuns;
    for (size_t d = s.size() - (s.empty() ? 0 : 1); d-- > 0;) {
      if (++c[d] < dense_shape[d]) break;
      c[d] = 0;
    }
  }
  if (uniform && n > 0) store().put(key, std::move(runs));
}

int64_t dense_copy_hits() { return store().hits(); }

}  // namespace maroon::cpu
