// The Tensor handle: creation, properties and reading; its one-primitive methods forward to
// maroon::prim (src/core/primitives.cpp).
#include "maroon/tensor.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "core/checked.h"
#include "core/graph.h"
#include "core/jit_hooks.h"
#include "maroon/primitives.h"
#include "maroon/read.h"
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
  // Reading holds every element as 64 bits: a huge view (an expand) must not exhaust memory.
  check_alloc("read", static_cast<uint64_t>(numel()), sizeof(uint64_t),
              "the elements of shape " + shape_str(shape()) + " as 64-bit values");
  // The bytes, each element zero-extended: one pass over the view instead of index() per element.
  const size_t sz = itemsize(dtype());
  std::vector<uint8_t> b = bytes();
  std::vector<uint64_t> out(b.size() / sz);
  for (size_t i = 0; i < out.size(); ++i) std::memcpy(&out[i], b.data() + i * sz, sz);  // little-endian hosts only
  return out;
}

std::vector<uint8_t> Tensor::bytes() const {
  maroon::realize(node());
  const Node& n = *node();
  // A contiguous view of a whole buffer is the buffer's own bytes (the common case: a realized
  // result), copied once without first zeroing the vector.
  if (n.buffer && n.buffer->count == numel() && n.view.is_contiguous() && itemsize(n.buffer->dtype) == itemsize(dtype())) {
    jit_note_host_read(n);  // (copy_bytes_to notes the other reads)
    const uint8_t* buf = n.buffer->bytes();
    return std::vector<uint8_t>(buf, buf + n.buffer->nbytes());
  }
  // A huge view (an expand) is a MemoryError naming the read, not a bad_alloc.
  check_alloc("read", static_cast<uint64_t>(numel()), itemsize(dtype()), "the elements of shape " + shape_str(n.shape));
  std::vector<uint8_t> out(static_cast<size_t>(numel()) * itemsize(dtype()));
  copy_bytes_to(*this, out.data(), out.size());
  return out;
}

namespace {

// One row of a view into `o`: runs of consecutive indices as one memcpy each (a slice's rows, a
// contiguous tail), padding (index < 0) as zeros.
void copy_row(const uint8_t* buf, const int64_t* at, int64_t len, size_t sz, uint8_t* o) {
  for (int64_t k = 0; k < len;) {
    int64_t e = k + 1;
    if (at[k] < 0) {
      while (e < len && at[e] < 0) ++e;
      std::memset(o + static_cast<size_t>(k) * sz, 0, static_cast<size_t>(e - k) * sz);
    } else {
      while (e < len && at[e] == at[e - 1] + 1) ++e;
      std::memcpy(o + static_cast<size_t>(k) * sz, buf + static_cast<size_t>(at[k]) * sz, static_cast<size_t>(e - k) * sz);
    }
    k = e;
  }
}

}  // namespace

void copy_bytes_to(const Tensor& t, void* dst, size_t nbytes) {
  const size_t sz = itemsize(t.dtype());
  uint64_t want = 0;  // checked: a wrapped product could match a small nbytes
  if (__builtin_mul_overflow(static_cast<uint64_t>(t.numel()), sz, &want) || nbytes != want)
    throw ShapeError("[copy_bytes_to] " + std::to_string(nbytes) + " bytes of room, shape " + shape_str(t.shape()) +
                     " of " + std::string(dtype_name(t.dtype())) + " needs " + std::to_string(want));
  maroon::realize(t.node());
  jit_note_host_read(*t.node());
  if (want == 0) return;
  const Node& n = *t.node();
  const int64_t count = t.numel();
  auto* out = static_cast<uint8_t*>(dst);
  if (itemsize(n.buffer->dtype) != sz) {  // never for a realized node; kept general
    std::vector<int64_t> idx(n.shape.size(), 0);
    for (size_t i = 0; i < static_cast<size_t>(count); ++i) {
      int64_t j = n.view.index(idx.data());
      uint64_t v = j < 0 ? 0 : n.buffer->load(j);
      std::memcpy(out + i * sz, &v, sz);
      for (size_t d = idx.size(); d > 0 && ++idx[d - 1] == n.shape[d - 1];) idx[--d] = 0;
    }
    return;
  }
  const uint8_t* buf = n.buffer->bytes();
  if (n.buffer->count >= count && n.view.is_contiguous()) {
    std::memcpy(out, buf, want);
    return;
  }
  // Any other view row by row, its indices walked incrementally (row_indices) instead of through
  // index() per element: a transposed (512,784) float32 gradient read 5x faster (3 ms, not 15,
  // on the shared 2-core machine), which the data-parallel step pays every step.
  const Shape& sh = n.shape;
  if (sh.empty()) {
    int64_t i = n.view.index(nullptr);
    copy_row(buf, &i, 1, sz, out);
    return;
  }
  const int64_t last = sh.back(), rows = count / last;
  std::vector<int64_t> idx(sh.size(), 0), at(static_cast<size_t>(last));
  for (int64_t r = 0; r < rows; ++r, out += static_cast<size_t>(last) * sz) {
    n.view.row_indices(idx.data(), last, at.data());
    copy_row(buf, at.data(), last, sz, out);
    for (size_t d = sh.size() - 1; d-- > 0;) {
      if (++idx[d] < sh[d]) break;
      idx[d] = 0;
    }
  }
}

std::shared_ptr<uint8_t> cached_bytes(size_t nbytes) {
  // Memory a tensor's data is read into: over the allocation cap it is the read's MemoryError.
  check_alloc("read", nbytes, 1, std::to_string(nbytes) + " bytes to read a tensor into");
  auto b = std::make_shared<Buffer>(DType::UInt8, static_cast<int64_t>(nbytes));
  return std::shared_ptr<uint8_t>(b, b->bytes());  // shares ownership of the Buffer
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
