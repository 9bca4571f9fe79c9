// The primitive builders (namespace maroon::prim): each call adds one node of the op table
// (maroon/ops.def) to the lazy graph, plus the CAST, RESHAPE and EXPAND nodes that broadcasting
// and promotion need. This is the layer below the Tensor API (maroon/tensor.h): `prim::mul(a, b)`
// is the MUL primitive, `a.mul(b)` / `a * b` is tinygrad's Tensor.mul, which builds on it.
//
// Binary and ternary builders broadcast (numpy's right-aligned rule) and promote dtypes
// (tinygrad's lattice; C++ scalars are weak like Python's, so `prim::mul(int8_tensor, 300)` stays
// int8). Every float op rounds in the mode current when it is built (maroon/round.h); the node
// keeps that mode. Bad input throws maroon::Error (ShapeError, DTypeError, IndexError) naming the
// op and the shapes, e.g. `[add] shapes (3,4) and (5,) cannot be broadcast together`.
#pragma once
#include <cstdint>
#include <vector>

#include "maroon/dtype.h"
#include "maroon/reduce.h"
#include "maroon/tensor.h"

namespace maroon::prim {

// ---- generated from maroon/ops.def: one builder per Unary, Binary and Compare row, named by its
// BUILDER column (docs/ops.md lists them; e.g. prim::exp2, prim::add, prim::maximum for MAX).
// Unary ones take float dtypes only; binary ones broadcast and promote and take a weak scalar on
// either side; the Compare ones return bool. ----
#define MAROON_PRIM_Unary(B) Tensor B(const Tensor& x);
#define MAROON_PRIM_Binary(B)                     \
  Tensor B(const Tensor& a, const Tensor& b);     \
  Tensor B(const Tensor& a, Scalar b);            \
  Tensor B(Scalar a, const Tensor& b);
#define MAROON_PRIM_Compare(B) MAROON_PRIM_Binary(B)
#define MAROON_PRIM_Cast(B)
#define MAROON_PRIM_Ternary(B)
#define MAROON_PRIM_Reduce(B)
#define MAROON_PRIM_Movement(B)
#define MAROON_PRIM_Source(B)
#define MAROON_PRIM_Index(B)
#define OP(NAME, KIND, ARITY, DTYPES, BUILDER, ...) MAROON_PRIM_##KIND(BUILDER)
#include "maroon/ops.def"
#undef OP
#undef MAROON_PRIM_Unary
#undef MAROON_PRIM_Binary
#undef MAROON_PRIM_Compare
#undef MAROON_PRIM_Cast
#undef MAROON_PRIM_Ternary
#undef MAROON_PRIM_Reduce
#undef MAROON_PRIM_Movement
#undef MAROON_PRIM_Source
#undef MAROON_PRIM_Index

// ---- casts ----
// CAST: value conversion (rounds in the current mode, saturates float→int); BITCAST: same
// itemsize, bits unchanged. Both return `x` itself when the dtype is already `to`.
Tensor cast(const Tensor& x, DType to);
Tensor bitcast(const Tensor& x, DType to);

// ---- ternary ----
// WHERE: the condition must be bool; a and b broadcast and promote.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, Scalar b);
Tensor where(const Tensor& cond, Scalar a, const Tensor& b);
// MULACC: a*b+c with one rounding (a fused multiply-add; wraps for integers).
Tensor mulacc(const Tensor& a, const Tensor& b, const Tensor& c);

// ---- reductions ----
// REDUCE over `axes` (negative counts from the end), keeping them as size 1: a left fold in
// index order from the identity (+0, 1, -inf), one rounding per step.
Tensor reduce(const Tensor& x, ReduceOp op, std::vector<int64_t> axes);
// REDUCE_MULACC: for each output, acc = +0 then acc = MULACC(a[i], b[i], acc) over the reduced
// axes in row-major order (one rounding per step). a and b are promoted to one float dtype and
// broadcast right-aligned (size-1 axes stretch, without EXPAND nodes); `axes` index the broadcast
// shape and stay as size 1. DTypeError for non-float dtypes, ShapeError for shapes that differ.
Tensor fused_reduce(const Tensor& a, const Tensor& b, std::vector<int64_t> axes);

// ---- selection ----
// GATHER: out[p] = x[p with p[axis] replaced by idx[p]], a copy of that element's bits, or zero
// bits where idx[p] is outside [0, x.shape[axis]) (negative included: callers normalise first).
// x and idx have one rank; idx's size-1 axes other than `axis` stretch to x's sizes; the result
// has x's shape with idx's size on `axis`. DTypeError for a non-integer idx, ShapeError for
// shapes that do not fit (docs/spec.md §15).
Tensor gather(const Tensor& x, const Tensor& idx, int64_t axis);

// ---- movement: views of the source's buffer, never copies; each returns `x` itself when it
// would not change the shape ----
Tensor reshape(const Tensor& x, const Shape& shape);  // one -1 entry is inferred
Tensor expand(const Tensor& x, const Shape& shape);   // same rank; size-1 axes grow
Tensor permute(const Tensor& x, const std::vector<int64_t>& order);
Tensor pad(const Tensor& x, const Pairs& before_after);  // zero padding
Tensor shrink(const Tensor& x, const Pairs& begin_end);
Tensor flip(const Tensor& x, const std::vector<int64_t>& axes);

}  // namespace maroon::prim
