// Helpers shared by the Tensor API sources (not part of the public interface).
#pragma once
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "core/view.h"
#include "maroon/tensor.h"

namespace maroon::api {

// The product of a shape's dimensions, checked (ShapeError when it does not fit in int64).
inline int64_t prod(const Shape& s) { return maroon::numel(s); }
// A double as "%.17g" writes it (nan, inf, 1e-300): for error messages.
std::string number_str(double v);
inline int64_t ceildiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// tinygrad's _resolve_dim: Python-style negative axes; `extra` allows one past the end.
int64_t resolve_dim(const char* op, int64_t dim, int64_t ndim, bool extra = false);
// The axes an Axis argument names, resolved and sorted (all axes when none given).
std::vector<int64_t> resolve_axes(const char* op, const Axis& axis, int64_t ndim);
// The least float dtype a value of `d` computes in (tinygrad's least_upper_float).
DType least_upper_float(DType d);
// A constant of `dtype` broadcast to `shape`, built as a view of one element.
Tensor filled(const Shape& shape, Scalar v, DType dtype);
// tinygrad's dtype.min / dtype.max as scalars (floats: -inf / +inf).
Scalar dtype_min(DType d);
Scalar dtype_max(DType d);
std::string dt(DType d);
// Constant padding by (before, after) pairs that may be negative (shrinks), with a fill value.
Tensor pad_constant(const Tensor& t, const Pairs& p, Scalar value);
// Whether a matmul or convolution runs as REDUCE_MULACC: `fused` if given, else FusedScope's
// setting; never for integer results (src/api/linalg.cpp).
bool use_fused(std::optional<bool> fused, DType out);
// Reductions that dropped their axes through reduce.cpp's directly made nodes (tests check the
// path ran).
uint64_t reduce_direct_graphs();
// `x` with its first axis moved to position `axis`, the others in order (a view): stack's last
// step, and ONNX Scan's stacked outputs (src/onnx/ops_control.cpp).
inline Tensor move_first_axis(const Tensor& x, int64_t axis) {
  if (axis == 0) return x;
  std::vector<int64_t> order;
  for (int64_t i = 1; i <= axis; ++i) order.push_back(i);
  order.push_back(0);
  for (int64_t i = axis + 1; i < x.ndim(); ++i) order.push_back(i);
  return x.permute(order);
}

}  // namespace maroon::api
