// The Tensor handle: creation, properties and reading; its one-primitive methods forward to
// maroon::prim (src/core/primitives.cpp).
#include "maroon/tensor.h"

#include <algorithm>
#include <sstream>

#include "core/checked.h"
#include "core/graph.h"
#include "maroon/primitives.h"
#include "ref/scalar.h"

namespace maroon {

std::string shape_str(const Shape& s) {
  std::ostringstream o;
  o << '(';
  for (size_t i = 0; i < s.size(); ++i) o << (i ? "," : "") << s[i];
  if (s.size() == 1) o << ',';
  o << ')';
  return o.str();
}

DType Scalar::weak_dtype() const {
  switch (kind) {
    case Kind::Bool: return DType::Bool;
    case Kind::Int: return DType::WeakInt;
    case Kind::Float: return DType::WeakFloat;
  }
  return DType::WeakFloat;
}

namespace {

// A scalar's bits in dtype d: literals round to nearest-even and integers wrap, as a compiler
// converting a literal would, whatever rounding mode is current.
uint64_t scalar_bits(const Scalar& s, DType d) {
  d = concrete(d);
  switch (s.kind) {
    case Scalar::Kind::Bool: return ref::cast(DType::Bool, d, s.i ? 1 : 0, Round::NearestEven);
    case Scalar::Kind::Int:
      return ref::cast(DType::Int64, d, static_cast<uint64_t>(s.i), Round::NearestEven);
    case Scalar::Kind::Float: {
      uint64_t b;
      std::memcpy(&b, &s.f, 8);
      return ref::cast(DType::Float64, d, b, Round::NearestEven);
    }
  }
  return 0;
}

}  // namespace

// ---- creation ----

Tensor Tensor::from_bytes(const void* data, size_t nbytes, const Shape& shape, DType dtype) {
  if (is_weak(dtype)) dtype = concrete(dtype);
  check_shape("from_bytes", shape, dtype);
  uint64_t want = static_cast<uint64_t>(maroon::numel(shape)) * itemsize(dtype);  // checked just above
  if (nbytes != want)
    throw ShapeError("[from_bytes] " + std::to_string(nbytes) + " bytes given, shape " +
                     shape_str(shape) + " of " + std::string(dtype_name(dtype)) + " needs " +
                     std::to_string(want));
  auto n = make_node(Op::BUFFER, dtype, shape, {});
  n->buffer = std::make_shared<Buffer>(dtype, maroon::numel(shape));
  if (nbytes) std::memcpy(n->buffer->bytes(), data, nbytes);
  n->view = ShapeTracker::contiguous(shape);
  n->realized = true;
  return Tensor(n);
}

Tensor Tensor::full(const Shape& shape, Scalar value, DType dtype) {
  dtype = concrete(dtype);
  check_shape("full", shape, dtype);
  Arg arg;
  arg.bits = scalar_bits(value, dtype);
  return Tensor(make_node(Op::CONST, dtype, shape, {}, arg));
}

Tensor Tensor::full(const Shape& shape, Scalar value) {
  return full(shape, value, concrete(value.weak_dtype()));
}

// ---- properties and reading ----

const Shape& Tensor::shape() const { return node()->shape; }
DType Tensor::dtype() const { return node()->dtype; }
int64_t Tensor::ndim() const { return static_cast<int64_t>(node()->shape.size()); }
int64_t Tensor::numel() const { return maroon::numel(node()->shape); }

Tensor& Tensor::realize() {
  maroon::realize(node());
  return *this;
}

std::vector<uint64_t> Tensor::bits() const {
  maroon::realize(node());
  const Node& n = *node();
  std::vector<uint64_t> out;
  // Reading holds every element as 64 bits: a huge view (an expand) must not exhaust memory.
  check_alloc("read", static_cast<uint64_t>(numel()), sizeof(uint64_t),
              "the elements of shape " + shape_str(n.shape) + " as 64-bit values");
  out.reserve(static_cast<size_t>(numel()));
  if (numel() == 0) return out;
  std::vector<int64_t> idx(n.shape.size(), 0);
  while (true) {
    int64_t i = n.view.index(idx.data());
    out.push_back(i < 0 ? 0 : n.buffer->load(i));
    size_t d = n.shape.size();
    while (d > 0 && ++idx[d - 1] == n.shape[d - 1]) idx[--d] = 0;
    if (d == 0) break;
  }
  return out;
}

std::vector<uint8_t> Tensor::bytes() const {
  maroon::realize(node());
  const Node& n = *node();
  const size_t sz = itemsize(dtype());
  if (numel() == 0) return {};
  if (itemsize(n.buffer->dtype) != sz) {  // never for a realized node; kept general
    std::vector<uint64_t> b = bits();
    std::vector<uint8_t> out(b.size() * sz);
    for (size_t i = 0; i < b.size(); ++i) std::memcpy(out.data() + i * sz, &b[i], sz);
    return out;
  }
  const uint8_t* buf = n.buffer->bytes();
  // A contiguous view of a whole buffer is the buffer's own bytes (the common case: a realized
  // result).
  if (n.buffer->count == numel() && n.view.is_contiguous()) return std::vector<uint8_t>(buf, buf + n.buffer->nbytes());
  // Any other view row by row, its indices walked incrementally (row_indices) instead of through
  // index() per element: a transposed (512,784) float32 gradient read 5x faster (3 ms, not 15,
  // on the shared 2-core machine), which the data-parallel step pays every step. A huge view (an
  // expand) is a MemoryError naming the read, not a bad_alloc.
  check_alloc("read", static_cast<uint64_t>(numel()), sz, "the elements of shape " + shape_str(n.shape));
  std::vector<uint8_t> out(static_cast<size_t>(numel()) * sz);
  const Shape& sh = shape();
  if (sh.empty()) {
    int64_t i = n.view.index(nullptr);
    if (i >= 0) std::memcpy(out.data(), buf + static_cast<size_t>(i) * sz, sz);
    return out;
  }
  const int64_t last = sh.back(), rows = numel() / last;
  std::vector<int64_t> idx(sh.size(), 0), at(static_cast<size_t>(last));
  uint8_t* o = out.data();
  for (int64_t r = 0; r < rows; ++r) {
    n.view.row_indices(idx.data(), last, at.data());
    for (int64_t k = 0; k < last; ++k, o += sz)
      if (at[k] >= 0) std::memcpy(o, buf + static_cast<size_t>(at[k]) * sz, sz);  // padding stays 0
    for (size_t d = sh.size() - 1; d-- > 0;) {
      if (++idx[d] < sh[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

bool Tensor::shares_buffer_with(const Tensor& other) const {
  maroon::realize(node());
  maroon::realize(other.node());
  return node()->buffer == other.node()->buffer;
}

// ---- tinygrad's methods that are one primitive each (maroon/primitives.h) ----

Tensor Tensor::exp2() const { return prim::exp2(*this); }
Tensor Tensor::log2() const { return prim::log2(*this); }
Tensor Tensor::sin() const { return prim::sin(*this); }
Tensor Tensor::sqrt() const { return prim::sqrt(*this); }
Tensor Tensor::reciprocal() const { return prim::reciprocal(*this); }
Tensor Tensor::trunc() const { return prim::trunc(*this); }
Tensor Tensor::cast(DType to) const { return prim::cast(*this, to); }
Tensor Tensor::bitcast(DType to) const { return prim::bitcast(*this, to); }
Tensor Tensor::reduce(ReduceOp op, std::vector<int64_t> axes) const {
  return prim::reduce(*this, op, std::move(axes));
}
Tensor Tensor::reshape(const Shape& s) const { return prim::reshape(*this, s); }
Tensor Tensor::expand(const Shape& s) const { return prim::expand(*this, s); }
Tensor Tensor::permute(const std::vector<int64_t>& order) const { return prim::permute(*this, order); }
Tensor Tensor::pad(const Pairs& p) const { return prim::pad(*this, p); }
Tensor Tensor::shrink(const Pairs& p) const { return prim::shrink(*this, p); }
Tensor Tensor::flip(const std::vector<int64_t>& axes) const { return prim::flip(*this, axes); }

}  // namespace maroon
