// Creation methods (tinygrad's mixin/creation.py and mixin/op.py: arange, linspace, eye, tri).
#include <cmath>

#include "core/checked.h"
#include "core/fpenv.h"
#include "api/internal.h"
#include "maroon/tensor.h"
#include "maroon/primitives.h"

namespace maroon {

Tensor Tensor::zeros(const Shape& shape, DType dtype) { return api::filled(shape, 0, dtype); }
Tensor Tensor::ones(const Shape& shape, DType dtype) { return api::filled(shape, 1, dtype); }
Tensor Tensor::empty(const Shape& shape, DType dtype) { return api::filled(shape, 0, dtype); }

Tensor Tensor::zeros_like(std::optional<DType> d) const { return zeros(shape(), d ? *d : dtype()); }
Tensor Tensor::ones_like(std::optional<DType> d) const { return ones(shape(), d ? *d : dtype()); }
Tensor Tensor::full_like(Scalar v, std::optional<DType> d) const {
  return api::filled(shape(), v, d ? *d : dtype());
}
Tensor Tensor::const_like(Scalar v) const { return api::filled(shape(), v, dtype()); }

namespace {
double as_double(const Scalar& s) { return s.kind == Scalar::Kind::Float ? s.f : static_cast<double>(s.i); }
}  // namespace

Tensor Tensor::arange(int64_t stop, std::optional<DType> dtype) {
  return arange(Scalar(int64_t{0}), Scalar(stop), Scalar(int64_t{1}), dtype);
}

Tensor Tensor::arange(Scalar start, Scalar stop, Scalar step, std::optional<DType> dtype) {
  bool any_float = start.kind == Scalar::Kind::Float || stop.kind == Scalar::Kind::Float ||
                   step.kind == Scalar::Kind::Float;
  double a = as_double(start), b = as_double(stop), st = as_double(step);
  FpEnvGuard ieee;  // b - st, (b - a) / st and a - st below must not round in the caller's mode
  if (!std::isfinite(a) || !std::isfinite(b) || !std::isfinite(st))
    throw ShapeError("[arange] start, stop and step must be finite, got " + api::number_str(a) + ", " +
                     api::number_str(b) + ", " + api::number_str(st));
  if (st == 0) throw ShapeError("[arange] step cannot be 0");
  double lo = st > 0 ? a : b - st, hi = st > 0 ? b - st : a;
  DType d = dtype ? *dtype : any_float ? DType::Float32 : DType::Int32;
  if (!dtype && d == DType::Int32 && (lo < -2147483648.0 || hi > 2147483647.0)) d = DType::Int64;
  // The count, as a double first: converting one of 2**63 or more (or inf, from a tiny step)
  // to int64 would be undefined.
  const double count = std::ceil((b - a) / st);
  if (!(count < 9223372036854775808.0))
    throw ShapeError("[arange] start " + api::number_str(a) + ", stop " + api::number_str(b) + ", step " +
                     api::number_str(st) + " give " + api::number_str(count) + " elements, more than fit in 64 bits");
  int64_t n = static_cast<int64_t>(count);
  if (n <= 0) return api::filled({0}, 0, d);
  check_shape("arange", {n}, d);
  // full(step) -> cumulative sum -> + (start - step), then cast: tinygrad's recipe. Integers
  // wrap (start - step may leave int64; the sum wraps back), as the dtype's arithmetic does.
  Scalar offset = any_float ? Scalar(a - st)
                            : Scalar(static_cast<int64_t>(static_cast<uint64_t>(start.i) - static_cast<uint64_t>(step.i)));
  Tensor steps = api::filled({n}, step, d);
  return (steps.cumsum(0) + offset).cast(d);
}

Tensor Tensor::linspace(double start, double stop, int64_t steps, DType dtype) {
  if (steps < 0) throw ShapeError("[linspace] number of steps must be non-negative");
  if (dtype == DType::Bool) throw DTypeError("[linspace] bool dtype is not supported");
  check_shape("linspace", {steps}, dtype);
  check_shape("linspace", {steps}, DType::Float32);  // the float32 ramp it is built from
  if (steps == 1) return api::filled({1}, start, dtype);
  const double step = in_ieee_env([&] { return (stop - start) / static_cast<double>(steps - 1); });
  Tensor r = Tensor::arange(steps, DType::Float32) * step;
  return (start + r).cast(dtype);
}

Tensor Tensor::eye(int64_t n, std::optional<int64_t> m, DType dtype) {
  int64_t mm = m ? *m : n;
  if (n < 0 || mm < 0) throw ShapeError("[eye] cannot have negative n or m");
  return arange(n).unsqueeze(-1).eq(arange(mm)).cast(dtype);
}

namespace {
// tinygrad's _tri: arange(r)[:,None] + diagonal <= arange(c)
Tensor tri(int64_t r, int64_t c, int64_t diagonal) {
  return (Tensor::arange(r).unsqueeze(-1) + diagonal) <= Tensor::arange(c);
}
}  // namespace

Tensor Tensor::triu(int64_t diagonal) const {
  if (ndim() < 2) throw ShapeError("[triu] needs at least 2 dimensions, got " + shape_str(shape()));
  return tri(shape()[ndim() - 2], shape()[ndim() - 1], diagonal).where(*this, const_like(0));
}
Tensor Tensor::tril(int64_t diagonal) const {
  if (ndim() < 2) throw ShapeError("[tril] needs at least 2 dimensions, got " + shape_str(shape()));
  return tri(shape()[ndim() - 2], shape()[ndim() - 1], diagonal + 1).where(const_like(0), *this);
}



Tensor Tensor::const_(Scalar v, std::optional<DType> dtype) {
  return dtype ? Tensor::full({}, v, *dtype) : Tensor::full({}, v);
}

Tensor Tensor::clone() const {
  // tinygrad's clone is a copy in the graph, so gradients flow through it to this tensor.
  // Buffers here are never written after they are made (assign gives a tensor a new node), so
  // a handle of its own on the same node is that copy: assigning to either leaves the other as
  // it was.
  Tensor out(node());
  if (auto g = grad()) out.set_grad(g->clone());
  return out;
}

Tensor Tensor::usum(const std::vector<Tensor>& ts) {
  if (ts.empty()) throw ShapeError("[usum] needs at least one tensor");
  Tensor r = ts[0];
  for (size_t i = 1; i < ts.size(); ++i) r = r.dtype() == DType::Bool ? prim::bitwise_or(r, ts[i]) : r + ts[i];
  return r;
}

Tensor Tensor::uprod(const std::vector<Tensor>& ts) {
  if (ts.empty()) throw ShapeError("[uprod] needs at least one tensor");
  Tensor r = ts[0];
  for (size_t i = 1; i < ts.size(); ++i) r = r.dtype() == DType::Bool ? prim::bitwise_and(r, ts[i]) : r * ts[i];
  return r;
}

}  // namespace maroon
