#include "cpu/view_runs.h"

#include <algorithm>

#include "cpu/gemm_pack.h"
#include "cpu/keyed_store.h"

namespace maroon::cpu {

namespace {

// The leaves an elementwise kernel reads through a view stack are few per model (attention's
// scaled query, its heads joined back); stacks whose rows are not runs are kept too (as an
// empty entry), so a model's later runs do not walk them twice. At most 2^17 runs (1 MiB) each.
constexpr size_t kLeafEntries = 32;
constexpr int64_t kMaxLeafRuns = int64_t{1} << 17;

KeyedStore<ViewRuns>& leaf_store() {
  static auto* s = new KeyedStore<ViewRuns>(kLeafEntries);  // never destroyed (see matmul_layouts.cpp)
  return *s;
}

// The length of the runs a row is cut into: the longest arithmetic start of the first row,
// lowered to a divisor of the row (a head of 16 elements in a row of 64: attention's output
// read back through the reshape that joins its heads).
int64_t first_run_length(const int64_t* idx, int64_t n) {
  int64_t len = std::min<int64_t>(n, 2);
  while (len < n && idx[len] - idx[len - 1] == idx[1] - idx[0]) ++len;
  while (n % len != 0) --len;
  return len;
}

template <class T>
void copy_runs_from(const T* src, const ViewRuns& r, int64_t p0, int n, T* dst) {
  int64_t k = p0 / r.row, o = p0 % r.row;
  for (int i = 0; i < n; ++k, o = 0) {
    const int len = static_cast<int>(std::min<int64_t>(r.row - o, n - i));
    const T* s = src + r.starts[k] + o * r.step;
    if (r.step == 1) copy_run(dst + i, s, len);  // inline pieces: runs are short (a head's 16)
    else
      for (int j = 0; j < len; ++j) dst[i + j] = s[j * r.step];
    i += len;
  }
}

}  // namespace

bool extend_view_runs(const int64_t* idx, int64_t n, bool first, ViewRuns* r) {
  if (first) {
    r->row = first_run_length(idx, n);
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

void view_runs_key(const ShapeTracker& view, const Shape& shape, std::vector<int64_t>* key) {
  key->clear();
  auto list = [&](const std::vector<int64_t>& v) {
    key->push_back(static_cast<int64_t>(v.size()));
    key->insert(key->end(), v.begin(), v.end());
  };
  list(shape);
  for (const View& v : view.views()) {
    list(v.shape);
    list(v.strides);
    key->push_back(v.offset);
    key->push_back(static_cast<int64_t>(v.mask.size()));
    for (const auto& [lo, hi] : v.mask) key->insert(key->end(), {lo, hi});
  }
}

std::shared_ptr<const ViewRuns> elementwise_view_runs(const ShapeTracker& view, const Shape& shape) {
  if (shape.empty() || view.shape() != shape || numel(shape) == 0) return nullptr;
  thread_local std::vector<int64_t> key;
  view_runs_key(view, shape, &key);
  if (auto found = leaf_store().find(key)) return found->row ? found : nullptr;
  // Row by row along the last axis (row_indices walks the view stack without divisions).
  const int64_t row = shape.back(), n = numel(shape);
  auto runs = std::make_shared<ViewRuns>();
  bool uniform = row > 0;
  std::vector<int64_t> c(shape.size(), 0), idx(static_cast<size_t>(std::max<int64_t>(row, 1)));
  for (int64_t p0 = 0; p0 < n && uniform; p0 += row) {
    view.row_indices(c.data(), row, idx.data());
    uniform = extend_view_runs(idx.data(), row, p0 == 0, runs.get()) &&
              static_cast<int64_t>(runs->starts.size()) <= kMaxLeafRuns;
    for (size_t d = shape.size() - 1; d-- > 0;) {
      if (++c[d] < shape[d]) break;
      c[d] = 0;
    }
  }
  if (!uniform) runs = std::make_shared<ViewRuns>();  // row 0: not runs, remembered as such
  leaf_store().put(key, runs);
  return uniform ? runs : nullptr;
}

void copy_view_runs(const Buffer& buffer, const ViewRuns& r, int64_t p0, int n, void* dst) {
  const uint8_t* src = buffer.bytes();
  switch (itemsize(buffer.dtype)) {
    case 1: return copy_runs_from(src, r, p0, n, static_cast<uint8_t*>(dst));
    case 2: return copy_runs_from(reinterpret_cast<const uint16_t*>(src), r, p0, n, static_cast<uint16_t*>(dst));
    case 4: return copy_runs_from(reinterpret_cast<const uint32_t*>(src), r, p0, n, static_cast<uint32_t*>(dst));
    default: return copy_runs_from(reinterpret_cast<const uint64_t*>(src), r, p0, n, static_cast<uint64_t*>(dst));
  }
}

int64_t elementwise_view_runs_hits() { return leaf_store().hits(); }

}  // namespace maroon::cpu
