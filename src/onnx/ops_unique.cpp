// Unique: the input read on the host (data-dependent output size, as Compress and NonZero), its
// elements (or, with `axis`, its slices along the axis) compared by value: floats as IEEE values
// (−0 equals +0, NaN equals NaN and sorts last, as numpy's unique), integers exactly. Y is a
// gather of the first occurrence of each, so it holds the input's own bits; nothing is computed.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "onnx/graph.h"

namespace maroon::onnx {

namespace {

// -1, 0, 1 for a < b, a == b, a > b; NaN equal to NaN and above everything.
template <class T>
int cmp(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) == std::isnan(b) ? 0 : (std::isnan(a) ? 1 : -1);
  }
  return a < b ? -1 : (b < a ? 1 : 0);
}

// rows: n slices of `len` values each. Returns, per unique slice in output order, its first
// occurrence; and per input slice, its unique's position.
template <class T>
void unique_rows(const std::vector<T>& v, int64_t n, int64_t len, bool sorted, std::vector<int64_t>& first,
                 std::vector<int64_t>& inverse) {
  auto row_cmp = [&](int64_t i, int64_t j) {
    for (int64_t k = 0; k < len; ++k)
      if (int r = cmp(v[static_cast<size_t>(i * len + k)], v[static_cast<size_t>(j * len + k)])) return r;
    return 0;
  };
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return row_cmp(i, j) < 0; });
  std::vector<int64_t> group(static_cast<size_t>(n));  // sorted group of each row
  std::vector<int64_t> group_first;
  for (size_t p = 0; p < order.size(); ++p) {
    if (p == 0 || row_cmp(order[p - 1], order[p]) != 0) group_first.push_back(order[p]);
    group[static_cast<size_t>(order[p])] = static_cast<int64_t>(group_first.size()) - 1;
  }
  std::vector<int64_t> pos(group_first.size());  // output position of each group
  std::iota(pos.begin(), pos.end(), 0);
  if (!sorted)
    std::sort(pos.begin(), pos.end(), [&](int64_t a, int64_t b) { return group_first[a] < group_first[b]; });
  std::vector<int64_t> rank(pos.size());
  for (size_t i = 0; i < pos.size(); ++i) rank[static_cast<size_t>(pos[i])] = static_cast<int64_t>(i);
  first.clear();
  for (int64_t g : pos) first.push_back(group_first[static_cast<size_t>(g)]);
  inverse.clear();
  for (int64_t i = 0; i < n; ++i) inverse.push_back(rank[static_cast<size_t>(group[static_cast<size_t>(i)])]);
}

std::vector<Tensor> unique(const OpCtx& c) {
  const Tensor& x = c.input(0);
  if (x.dtype() == DType::UInt64) c.fail("uint64 input is refused");
  const bool sorted = c.attr_i("sorted", 1) != 0;
  const bool by_axis = c.has_attr("axis");
  const int64_t axis = by_axis ? c.axis(c.attr_i("axis", 0), x.ndim()) : 0;
  // (n, len): the slices along the axis, each flattened; or every element alone.
  Tensor rows = by_axis ? x.transpose(0, axis) : x.reshape({-1});
  const int64_t n = by_axis ? x.shape()[axis] : x.numel();
  const int64_t len = n == 0 ? 0 : rows.numel() / n;
  std::vector<int64_t> first, inverse;
  if (is_float(x.dtype())) unique_rows(rows.cast(DType::Float64).to_vector<double>(), n, len, sorted, first, inverse);
  else unique_rows(rows.cast(DType::Int64).to_vector<int64_t>(), n, len, sorted, first, inverse);
  const int64_t k = static_cast<int64_t>(first.size());
  Tensor idx = Tensor::from_vector(first, {k});
  auto slices = [&] {  // the first occurrences' slices, back in x's axis order
    Shape s = rows.shape(), is(static_cast<size_t>(x.ndim()), 1);
    s[0] = is[0] = k;
    return rows.gather(0, idx.reshape(is).expand(s)).transpose(0, axis);
  };
  Tensor y = by_axis ? slices() : x.reshape({-1}).gather(0, idx);
  std::vector<int64_t> counts(static_cast<size_t>(k), 0);
  for (int64_t g : inverse) ++counts[static_cast<size_t>(g)];
  return {y, idx, Tensor::from_vector(inverse, {n}), Tensor::from_vector(counts, {k})};
}

}  // namespace

void add_unique_ops(OpTable& t) { t["Unique"] = unique; }

}  // namespace maroon::onnx
