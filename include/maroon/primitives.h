// The primitive builders (namespace maroon::prim): each call adds one node of the op table
// (src/core/ops.def) to the lazy graph, plus the CAST, RESHAPE and EXPAND nodes that broadcasting
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

// ---- unary (EXP2 .. TRUNC; float dtypes only) ----
Tensor exp2(const Tensor& x);
Tensor log2(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor reciprocal(const Tensor& x);
Tensor trunc(const Tensor& x);
// CAST: value conversion (rounds in the current mode, saturates float→int); BITCAST: same
// itemsize, bits unchanged. Both return `x` itself when the dtype is already `to`.
Tensor cast(const Tensor& x, DType to);
Tensor bitcast(const Tensor& x, DType to);

// ---- binary (broadcast + promote); the Compare ops return bool ----
Tensor add(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);  // MAX
Tensor cmplt(const Tensor& a, const Tensor& b);
Tensor cmpne(const Tensor& a, const Tensor& b);
Tensor cmpeq(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor bitwise_and(const Tensor& a, const Tensor& b);  // AND
Tensor bitwise_or(const Tensor& a, const Tensor& b);   // OR
Tensor bitwise_xor(const Tensor& a, const Tensor& b);  // XOR
Tensor shl(const Tensor& a, const Tensor& b);
Tensor shr(const Tensor& a, const Tensor& b);
Tensor cdiv(const Tensor& a, const Tensor& b);
Tensor cmod(const Tensor& a, const Tensor& b);
Tensor floordiv(const Tensor& a, const Tensor& b);
Tensor floormod(const Tensor& a, const Tensor& b);
// The same with a weak scalar on either side.
#define MAROON_SCALAR_OVERLOADS(fn)     \
  Tensor fn(const Tensor& a, Scalar b); \
  Tensor fn(Scalar a, const Tensor& b);
MAROON_SCALAR_OVERLOADS(add)
MAROON_SCALAR_OVERLOADS(mul)
MAROON_SCALAR_OVERLOADS(maximum)
MAROON_SCALAR_OVERLOADS(cmplt)
MAROON_SCALAR_OVERLOADS(cmpne)
MAROON_SCALAR_OVERLOADS(cmpeq)
MAROON_SCALAR_OVERLOADS(pow)
MAROON_SCALAR_OVERLOADS(bitwise_and)
MAROON_SCALAR_OVERLOADS(bitwise_or)
MAROON_SCALAR_OVERLOADS(bitwise_xor)
MAROON_SCALAR_OVERLOADS(shl)
MAROON_SCALAR_OVERLOADS(shr)
MAROON_SCALAR_OVERLOADS(cdiv)
MAROON_SCALAR_OVERLOADS(cmod)
MAROON_SCALAR_OVERLOADS(floordiv)
MAROON_SCALAR_OVERLOADS(floormod)
#undef MAROON_SCALAR_OVERLOADS

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

// ---- movement: views of the source's buffer, never copies; each returns `x` itself when it
// would not change the shape ----
Tensor reshape(const Tensor& x, const Shape& shape);  // one -1 entry is inferred
Tensor expand(const Tensor& x, const Shape& shape);   // same rank; size-1 axes grow
Tensor permute(const Tensor& x, const std::vector<int64_t>& order);
Tensor pad(const Tensor& x, const Pairs& before_after);  // zero padding
Tensor shrink(const Tensor& x, const Pairs& begin_end);
Tensor flip(const Tensor& x, const std::vector<int64_t>& axes);

}  // namespace maroon::prim
