#include "cpu/operand_copy.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "cpu/gemm_pack.h"
#include "cpu/kernel.h"
#include "cpu/keyed_store.h"
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

template <class T>
void copy_typed_runs(const T* src, const ViewRuns& r, T* dst) {
  for (int64_t s : r.starts) {
    const T* p = src + s;
    if (r.step == 1) copy_run(dst, p, r.row);  // inline pieces: runs are short (a head's 16)
    else
      for (int64_t i = 0; i < r.row; ++i) dst[i] = p[i * r.step];
    dst += r.row;
  }
}

void copy_runs(const Buffer& buffer, const ViewRuns& r, uint8_t* dst) {
  const uint8_t* src = buffer.bytes();
  switch (itemsize(buffer.dtype)) {
    case 1: return copy_typed_runs(src, r, dst);
    case 2: return copy_typed_runs(reinterpret_cast<const uint16_t*>(src), r, reinterpret_cast<uint16_t*>(dst));
    case 4: return copy_typed_runs(reinterpret_cast<const uint32_t*>(src), r, reinterpret_cast<uint32_t*>(dst));
    default: return copy_typed_runs(reinterpret_cast<const uint64_t*>(src), r, reinterpret_cast<uint64_t*>(dst));
  }
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

}  // namespace maroon::cpu
