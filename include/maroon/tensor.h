// The Tensor handle and the primitive ops on it.
//
// A Tensor is a node of a lazy graph: building ops computes nothing; realize() (or reading the
// data) runs the graph. Movement ops are views of their source's buffer, never copies. Binary
// and ternary ops broadcast (numpy's right-aligned rule) and promote dtypes (tinygrad's lattice;
// C++ scalars are weak like Python's, so `int8_tensor * 300` stays int8). Every float op rounds
// in the mode current when it is built (see maroon/round.h); the node keeps that mode.
//
// Bad input throws maroon::Error (ShapeError, DTypeError, IndexError) naming the op and shapes.
#pragma once
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "maroon/dtype.h"
#include "maroon/error.h"
#include "maroon/reduce.h"
#include "maroon/round.h"

namespace maroon {

struct Node;
using Shape = std::vector<int64_t>;
using Pairs = std::vector<std::pair<int64_t, int64_t>>;

// A C++ scalar operand: weak like a Python literal (bool is not weak: it is dtype bool).
struct Scalar {
  enum class Kind { Bool, Int, Float } kind;
  int64_t i = 0;
  double f = 0;
  Scalar(bool v) : kind(Kind::Bool), i(v) {}
  Scalar(double v) : kind(Kind::Float), f(v) {}
  Scalar(float v) : kind(Kind::Float), f(v) {}
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind(Kind::Int), i(static_cast<int64_t>(v)) {}
  DType weak_dtype() const;
};

std::string shape_str(const Shape& s);  // "(3,4)", "(5,)", "()"

// The C++ type whose bits a dtype's elements have (uint16_t for float16 and bfloat16).
template <class T> constexpr DType dtype_of();

class Tensor {
 public:
  explicit Tensor(std::shared_ptr<Node> node) : node_(std::move(node)) {}

  // ---- creation ----
  // Copies `nbytes` bytes of little-endian elements; nbytes must be numel(shape) * itemsize.
  static Tensor from_bytes(const void* data, size_t nbytes, const Shape& shape, DType dtype);
  template <class T>
  static Tensor from_vector(const std::vector<T>& v, const Shape& shape, DType dtype = dtype_of<T>()) {
    return from_bytes(v.data(), v.size() * sizeof(T), shape, dtype);
  }
  // A constant: one element broadcast to `shape` (no buffer of that size is ever made). Float
  // scalars convert to `dtype` rounding to nearest-even, integers wrap, as literals do.
  static Tensor full(const Shape& shape, Scalar value, DType dtype);
  static Tensor full(const Shape& shape, Scalar value);  // dtype from the scalar's weak dtype

  // ---- properties ----
  const Shape& shape() const;
  DType dtype() const;
  int64_t ndim() const;
  int64_t numel() const;
  const std::shared_ptr<Node>& node() const { return node_; }

  // ---- running and reading ----
  Tensor& realize();
  // The elements in row-major order as raw little-endian bytes (realizes).
  std::vector<uint8_t> bytes() const;
  // Element bits, zero-extended (realizes).
  std::vector<uint64_t> bits() const;
  template <class T>
  std::vector<T> to_vector() const {
    if (itemsize(dtype()) != sizeof(T))
      throw DTypeError("[to_vector] element size " + std::to_string(sizeof(T)) +
                       " does not match dtype " + std::string(dtype_name(dtype())));
    std::vector<uint8_t> b = bytes();
    std::vector<T> out(b.size() / sizeof(T));
    if (!b.empty()) std::memcpy(out.data(), b.data(), b.size());
    return out;
  }
  // Whether this tensor reads the same buffer as `other` (movement ops are views).
  bool shares_buffer_with(const Tensor& other) const;

  // ---- unary primitives ----
  Tensor exp2() const;
  Tensor log2() const;
  Tensor sin() const;
  Tensor sqrt() const;
  Tensor reciprocal() const;
  Tensor trunc() const;
  Tensor cast(DType to) const;
  Tensor bitcast(DType to) const;  // same itemsize; bits unchanged

  // ---- reduction: REDUCE over `axes`, keeping them as size 1 ----
  Tensor reduce(ReduceOp op, std::vector<int64_t> axes) const;

  // ---- movement (views) ----
  Tensor reshape(const Shape& shape) const;  // one -1 entry is inferred
  Tensor expand(const Shape& shape) const;   // same rank; size-1 axes grow
  Tensor permute(const std::vector<int64_t>& order) const;
  Tensor pad(const Pairs& before_after) const;   // zero padding
  Tensor shrink(const Pairs& begin_end) const;
  Tensor flip(const std::vector<int64_t>& axes) const;

 private:
  std::shared_ptr<Node> node_;
};

// ---- binary primitives (broadcast + promote) ----
Tensor add(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);   // MAX
Tensor cmplt(const Tensor& a, const Tensor& b);
Tensor cmpne(const Tensor& a, const Tensor& b);
Tensor cmpeq(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor bitwise_and(const Tensor& a, const Tensor& b);
Tensor bitwise_or(const Tensor& a, const Tensor& b);
Tensor bitwise_xor(const Tensor& a, const Tensor& b);
Tensor shl(const Tensor& a, const Tensor& b);
Tensor shr(const Tensor& a, const Tensor& b);
Tensor cdiv(const Tensor& a, const Tensor& b);
Tensor cmod(const Tensor& a, const Tensor& b);
Tensor floordiv(const Tensor& a, const Tensor& b);
Tensor floormod(const Tensor& a, const Tensor& b);
// The same with a weak scalar on either side.
#define MAROON_SCALAR_OVERLOADS(fn)                 \
  Tensor fn(const Tensor& a, Scalar b);             \
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

// ---- ternary primitives ----
// WHERE: the condition must be bool; a and b broadcast and promote.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, Scalar b);
Tensor where(const Tensor& cond, Scalar a, const Tensor& b);
// MULACC: a*b+c with one rounding (a fused multiply-add; wraps for integers).
Tensor mulacc(const Tensor& a, const Tensor& b, const Tensor& c);

template <> constexpr DType dtype_of<bool>() { return DType::Bool; }
template <> constexpr DType dtype_of<int8_t>() { return DType::Int8; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::UInt8; }
template <> constexpr DType dtype_of<int16_t>() { return DType::Int16; }
template <> constexpr DType dtype_of<uint16_t>() { return DType::UInt16; }
template <> constexpr DType dtype_of<int32_t>() { return DType::Int32; }
template <> constexpr DType dtype_of<uint32_t>() { return DType::UInt32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::Int64; }
template <> constexpr DType dtype_of<uint64_t>() { return DType::UInt64; }
template <> constexpr DType dtype_of<float>() { return DType::Float32; }
template <> constexpr DType dtype_of<double>() { return DType::Float64; }

}  // namespace maroon
