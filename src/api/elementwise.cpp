// Elementwise Tensor methods (tinygrad's mixin/elementwise.py), built from the primitives.
#include <cstdio>
#include <cmath>
#include <numbers>

#include "api/internal.h"
#include "maroon/tensor.h"
#include "maroon/primitives.h"

namespace maroon {

namespace api {

std::string dt(DType d) { return std::string(dtype_name(d)); }
std::string number_str(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

Tensor filled(const Shape& shape, Scalar v, DType dtype) {
  for (int64_t d : shape)  // named here: the expand below would report it as its own
    if (d < 0) throw ShapeError("[full] negative dimension in shape " + shape_str(shape));
  Tensor c = Tensor::full({}, v, dtype);
  if (shape.empty()) return c;
  return c.reshape(Shape(shape.size(), 1)).expand(shape);
}


DType least_upper_float(DType d) { return is_float(d) ? d : DType::Float32; }

Scalar dtype_min(DType d) {
  if (is_float(d)) return Scalar(-INFINITY);
  if (d == DType::Bool) return Scalar(false);
  if (is_unsigned(d)) return Scalar(0);
  int w = bitwidth(d);
  return Scalar(w == 64 ? INT64_MIN : -(int64_t{1} << (w - 1)));
}

Scalar dtype_max(DType d) {
  if (is_float(d)) return Scalar(INFINITY);
  if (d == DType::Bool) return Scalar(true);
  int w = bitwidth(d);
  if (is_unsigned(d)) {
    Scalar s(int64_t{0});
    s.i = w == 64 ? -1 : static_cast<int64_t>((uint64_t{1} << w) - 1);  // wraps to all ones
    return s;
  }
  return Scalar(w == 64 ? INT64_MAX : (int64_t{1} << (w - 1)) - 1);
}

}  // namespace api


Tensor Tensor::scalar_operand(Scalar s) const {
  return Tensor::full({}, s, concrete(least_upper_dtype(dtype(), s.weak_dtype())));
}

namespace {
Scalar negate(Scalar s) {
  if (s.kind == Scalar::Kind::Float) return Scalar(-s.f);
  if (s.kind == Scalar::Kind::Int) return Scalar(-s.i);
  return Scalar(-static_cast<int64_t>(s.i));
}
}  // namespace

// ---- arithmetic: a - b is a + b*-1, a / b is a * reciprocal(b) ----

Tensor Tensor::neg() const {
  if (dtype() == DType::Bool) return logical_not();
  return prim::mul(*this, -1);
}
Tensor Tensor::add(const Tensor& x) const { return prim::add(*this, x); }
Tensor Tensor::add(Scalar x) const { return prim::add(*this, x); }
Tensor Tensor::sub(const Tensor& x) const {
  // Promote first so that -b happens in the common dtype, as tinygrad's _broadcasted does.
  DType d = concrete(least_upper_dtype(dtype(), x.dtype()));
  return prim::add(cast(d), x.cast(d).neg());
}
Tensor Tensor::sub(Scalar x) const {
  if (x.kind == Scalar::Kind::Bool) return sub(scalar_operand(x));
  return prim::add(*this, negate(x));
}
Tensor Tensor::mul(const Tensor& x) const { return prim::mul(*this, x); }
Tensor Tensor::mul(Scalar x) const { return prim::mul(*this, x); }

Tensor Tensor::div(const Tensor& x, const std::string& mode) const {
  if (mode != "" && mode != "trunc" && mode != "floor")
    throw ShapeError("[div] rounding_mode='" + mode + "' must be None (\"\"), 'trunc' or 'floor'");
  DType d = concrete(least_upper_dtype(dtype(), x.dtype()));
  Tensor a = cast(d), b = x.cast(d);
  if (is_int(d)) {
    if (mode == "trunc") return prim::cdiv(a, b);
    if (mode == "floor") return prim::floordiv(a, b);
  }
  if (!is_float(d)) {
    a = a.cast(DType::Float32);
    b = b.cast(DType::Float32);
  }
  Tensor q = prim::mul(a, b.reciprocal());
  if (mode == "trunc") return q.trunc();
  if (mode == "floor") return q.floor();
  return q;
}
Tensor Tensor::div(Scalar x, const std::string& mode) const {
  return div(scalar_operand(x), mode);
}

Tensor Tensor::mod(const Tensor& x) const {
  DType d = concrete(least_upper_dtype(dtype(), x.dtype()));
  if (is_int(d)) return prim::floormod(cast(d), x.cast(d));
  return sub(div(x, "floor").mul(x));
}
Tensor Tensor::fmod(const Tensor& x) const {
  DType d = concrete(least_upper_dtype(dtype(), x.dtype()));
  if (is_int(d)) return prim::cmod(cast(d), x.cast(d));
  return sub(div(x, "trunc").mul(x));
}

Tensor Tensor::pow(const Tensor& x) const { return prim::pow(*this, x); }
Tensor Tensor::pow(Scalar x) const {
  // An integer to a non-negative integer power: products (square and multiply). Integer
  // multiplication wraps modulo 2^bits, so any grouping of the products gives the same bits as
  // PyTorch's and tinygrad's repeated multiplication.
  if (is_int(dtype()) && x.kind == Scalar::Kind::Int && x.i >= 0) {
    Tensor r = Tensor::full(shape(), Scalar(int64_t{1}), dtype()), b = *this;
    for (int64_t e = x.i; e > 0; e >>= 1) {
      if (e & 1) r = r * b;
      if (e > 1) b = b * b;
    }
    return r;
  }
  if (!is_float(concrete(least_upper_dtype(dtype(), x.weak_dtype()))) &&
      !(x.kind == Scalar::Kind::Int && x.i >= 0))
    throw DTypeError("[pow] base needs to be float, not " + api::dt(dtype()));
  return prim::pow(*this, x);
}

Tensor Tensor::maximum(const Tensor& x) const { return prim::maximum(*this, x); }
Tensor Tensor::maximum(Scalar x) const { return prim::maximum(*this, x); }
Tensor Tensor::minimum(const Tensor& x) const {
  DType d = concrete(least_upper_dtype(dtype(), x.dtype()));
  Tensor t = cast(d), y = x.cast(d);
  // Floats: -max(-t, -y); ints: flip the order with xor so max picks the minimum.
  if (is_float(d)) return prim::maximum(t.neg(), y.neg()).neg();
  Scalar lo = api::dtype_min(d), hi = api::dtype_max(d);
  Scalar k(lo.i + hi.i);
  if (d == DType::Bool) return prim::bitwise_and(t, y);
  return prim::bitwise_xor(prim::maximum(prim::bitwise_xor(t, k), prim::bitwise_xor(y, k)), k);
}
Tensor Tensor::minimum(Scalar x) const { return minimum(scalar_operand(x)); }

Tensor Tensor::where(const Tensor& x, const Tensor& y) const { return prim::where(*this, x, y); }
Tensor Tensor::where(const Tensor& x, Scalar y) const { return prim::where(*this, x, y); }
Tensor Tensor::where(Scalar x, const Tensor& y) const { return prim::where(*this, x, y); }
Tensor Tensor::where(Scalar x, Scalar y) const {
  Tensor tx = Tensor::full({}, x);
  return prim::where(*this, tx, y);
}
Tensor Tensor::masked_fill(const Tensor& mask, Scalar value) const { return mask.where(value, *this); }

// ---- comparisons: eq is NOT(ne), ge is NOT(lt), gt is lt reversed ----
Tensor Tensor::lt(const Tensor& x) const { return prim::cmplt(*this, x); }
Tensor Tensor::lt(Scalar x) const { return prim::cmplt(*this, x); }
Tensor Tensor::gt(const Tensor& x) const { return prim::cmplt(x, *this); }
Tensor Tensor::gt(Scalar x) const { return prim::cmplt(x, *this); }
Tensor Tensor::ge(const Tensor& x) const { return lt(x).logical_not(); }
Tensor Tensor::ge(Scalar x) const { return lt(x).logical_not(); }
Tensor Tensor::le(const Tensor& x) const { return gt(x).logical_not(); }
Tensor Tensor::le(Scalar x) const { return gt(x).logical_not(); }
Tensor Tensor::ne(const Tensor& x) const { return prim::cmpne(*this, x); }
Tensor Tensor::ne(Scalar x) const { return prim::cmpne(*this, x); }
Tensor Tensor::eq(const Tensor& x) const { return ne(x).logical_not(); }
Tensor Tensor::eq(Scalar x) const { return ne(x).logical_not(); }
Tensor Tensor::logical_not() const { return prim::cmpne(cast(DType::Bool), true); }

Tensor Tensor::bitwise_and(const Tensor& x) const { return prim::bitwise_and(*this, x); }
Tensor Tensor::bitwise_or(const Tensor& x) const { return prim::bitwise_or(*this, x); }
Tensor Tensor::bitwise_xor(const Tensor& x) const { return prim::bitwise_xor(*this, x); }
Tensor Tensor::bitwise_not() const {
  if (dtype() == DType::Bool) return logical_not();
  return is_unsigned(dtype()) ? prim::bitwise_xor(*this, api::dtype_max(dtype()))
                              : prim::bitwise_xor(*this, -1);
}
Tensor Tensor::lshift(const Tensor& x) const { return prim::shl(*this, x); }
Tensor Tensor::lshift(Scalar x) const { return prim::shl(*this, x); }
Tensor Tensor::rshift(const Tensor& x) const { return prim::shr(*this, x); }
Tensor Tensor::rshift(Scalar x) const { return prim::shr(*this, x); }

// ---- transcendental compositions ----
// Their constants, evaluated by the compiler (constexpr), never at run time in the caller's
// rounding mode; the literals are the nearest doubles, as Python's math module gives them.
constexpr double kInvLn2 = 1.0 / std::numbers::ln2;
constexpr double kSqrt2OverPi = 0.7978845608028654;  // math.sqrt(2 / math.pi)
constexpr double kLog10Of2 = 0.30102999566398120;    // math.log10(2)
Tensor Tensor::exp() const {
  // Computed in at least float32 (1/ln2 as a float32 constant), then cast back.
  Tensor x = cast(api::least_upper_float(dtype()));
  DType out = x.dtype();
  DType work = concrete(least_upper_dtype(out, DType::Float32));
  return prim::mul(x.cast(work), kInvLn2).exp2().cast(out);
}
// tinygrad's LOG2/SQRT/SIN/EXP2/RECIPROCAL take an integer input to float32 implicitly; Maroon's
// primitives require floats, so the compositions built on them convert first (same result).
namespace {
Tensor as_float(const Tensor& x) { return x.cast(api::least_upper_float(x.dtype())); }
}  // namespace
Tensor Tensor::log() const { return prim::mul(as_float(*this).log2(), std::numbers::ln2); }
Tensor Tensor::log10() const { return prim::mul(as_float(*this).log2(), kLog10Of2); }
Tensor Tensor::rsqrt() const { return as_float(*this).sqrt().reciprocal(); }
Tensor Tensor::cos() const {
  Tensor x = cast(api::least_upper_float(dtype()));
  DType out = x.dtype();
  DType work = concrete(least_upper_dtype(out, DType::Float32));
  Tensor w = x.cast(work);
  return prim::add(Tensor::full({}, std::numbers::pi / 2, work), w.neg()).sin().cast(out);
}
Tensor Tensor::tan() const { return as_float(*this).sin().div(cos()); }
Tensor Tensor::square() const { return prim::mul(*this, *this); }
Tensor Tensor::sign() const {
  return ne(0).where(lt(0).where(const_like(-1), const_like(1)), const_like(0));
}
Tensor Tensor::abs() const { return prim::mul(*this, sign()); }
Tensor Tensor::ceil() const {
  Tensor b = trunc();
  return gt(b).where(prim::add(b, 1), b);
}
Tensor Tensor::floor() const {
  Tensor b = trunc();
  return lt(b).where(b.sub(1), b);
}
Tensor Tensor::round() const {
  // Half to even: (x > 0) == (trunc(x)/2 is an integer) picks ceil(x-0.5) or floor(x+0.5).
  Tensor b = trunc().div(2.0);
  return gt(0).eq(b.trunc().eq(b)).where(sub(0.5).ceil(), prim::add(*this, 0.5).floor());
}
Tensor Tensor::clamp(std::optional<Scalar> lo, std::optional<Scalar> hi) const {
  if (!lo && !hi) throw ShapeError("[clamp] at least one of min_ or max_ must be given");
  Tensor r = lo ? lt(*lo).where(*lo, *this) : *this;
  return hi ? r.gt(*hi).where(*hi, r) : r;
}
Tensor Tensor::clip(std::optional<Scalar> lo, std::optional<Scalar> hi) const { return clamp(lo, hi); }

Tensor Tensor::relu() const { return gt(0).where(*this, 0); }
Tensor Tensor::relu6() const { return relu().sub(sub(6).relu()); }
Tensor Tensor::leaky_relu(double s) const { return lt(0).where(prim::mul(s, *this), *this); }
Tensor Tensor::elu(double alpha) const {
  return relu().sub(prim::mul(alpha, prim::add(1, exp().neg()).relu()));
}
Tensor Tensor::celu(double alpha) const {
  return maximum(0).add(prim::mul(alpha, div(alpha).exp().sub(1)).minimum(0));
}
Tensor Tensor::selu(double alpha, double gamma) const {
  return prim::mul(gamma, ge(0).where(*this, prim::mul(alpha, exp().sub(1))));
}
Tensor Tensor::sigmoid() const {
  return prim::add(1, prim::mul(*this, -kInvLn2).exp2()).reciprocal();
}
Tensor Tensor::hardsigmoid(double alpha, double beta) const {
  Tensor a = prim::add(prim::mul(alpha, *this), beta);
  return a.relu().sub(a.sub(1).relu());
}
Tensor Tensor::logsigmoid() const { return neg().softplus().neg(); }
Tensor Tensor::tanh() const {
  return prim::mul(2.0, prim::mul(2.0, *this).sigmoid()).sub(1.0);
}
Tensor Tensor::hardtanh(double lo, double hi) const { return clip(lo, hi); }
Tensor Tensor::gelu(const std::string& approximate) const {
  if (approximate == "tanh") {
    Tensor inner = prim::add(*this, prim::mul(0.044715, pow(3)));
    Tensor t = prim::mul(kSqrt2OverPi, inner).tanh();
    return prim::mul(prim::mul(0.5, *this), prim::add(1, t));
  }
  if (approximate == "none")
    return prim::mul(prim::mul(*this, 0.5), prim::add(1.0, div(std::numbers::sqrt2).erf()));
  throw ShapeError("[gelu] approximate='" + approximate + "' is not supported");
}
Tensor Tensor::quick_gelu() const { return prim::mul(*this, prim::mul(*this, 1.702).sigmoid()); }
Tensor Tensor::swish() const { return prim::mul(*this, sigmoid()); }
Tensor Tensor::silu() const { return swish(); }
Tensor Tensor::hardswish() const {
  return prim::mul(prim::mul(*this, prim::add(*this, 3).relu6()), 1.0 / 6);
}
Tensor Tensor::softplus(double beta) const {
  return prim::mul(1 / beta, prim::mul(*this, beta).logaddexp(0.0));
}
Tensor Tensor::mish() const { return prim::mul(*this, softplus().tanh()); }
Tensor Tensor::softsign() const { return div(prim::add(1, abs())); }
Tensor Tensor::erf() const {
  // Abramowitz-Stegun 7.1.26, as tinygrad. polyN folds from 0.0 (0*t + c0 is exactly c0).
  Tensor t = prim::add(1.0, prim::mul(0.3275911, abs())).reciprocal();
  const double c[] = {1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592};
  Tensor p = api::filled(t.shape(), c[0], t.dtype());
  for (int i = 1; i < 5; ++i) p = prim::add(prim::mul(p, t), c[i]);
  Tensor tail = prim::mul(prim::mul(t, p), square().neg().exp());
  return prim::mul(sign(), prim::add(1.0, tail.neg()));
}
Tensor Tensor::sinh() const { return exp().sub(neg().exp()).div(2); }
Tensor Tensor::cosh() const { return prim::add(exp(), neg().exp()).div(2); }
Tensor Tensor::atanh() const {
  return prim::add(1, *this).div(prim::add(1, neg())).log().div(2);
}
Tensor Tensor::asinh() const { return prim::add(*this, prim::add(square(), 1).sqrt()).log(); }
Tensor Tensor::acosh() const { return prim::add(*this, square().sub(1).sqrt()).log(); }
Tensor Tensor::logaddexp(const Tensor& x) const {
  DType d = concrete(least_upper_dtype(dtype(), x.dtype()));
  Tensor a = cast(d), b = x.cast(d);
  Tensor m = a.maximum(b);
  return prim::add(prim::add(a.sub(m).exp(), b.sub(m).exp()).log(), m);
}
Tensor Tensor::logaddexp(Scalar x) const { return logaddexp(scalar_operand(x)); }
Tensor Tensor::copysign(const Tensor& x) const {
  Tensor mag = abs();
  return prim::bitwise_or(x.lt(0), x.reciprocal().lt(0)).where(mag.neg(), mag);
}
Tensor Tensor::lerp(const Tensor& end, const Tensor& w) const {
  return prim::add(*this, prim::mul(end.sub(*this), w));
}
Tensor Tensor::lerp(const Tensor& end, Scalar w) const {
  return prim::add(*this, prim::mul(end.sub(*this), w));
}
Tensor Tensor::isnan() const { return ne(*this); }
Tensor Tensor::isinf(bool pos, bool neg_) const {
  Tensor a = prim::mul(eq(INFINITY), pos), b = prim::mul(eq(-INFINITY), neg_);
  return prim::add(a, b);
}
Tensor Tensor::isfinite() const { return prim::bitwise_or(isinf(), isnan()).logical_not(); }

// ---- operators ----
Tensor operator-(const Tensor& a) { return a.neg(); }
Tensor operator~(const Tensor& a) { return a.bitwise_not(); }
#define MAROON_OPERATOR(sym, expr_tt, expr_ts, expr_st)                            \
  Tensor operator sym(const Tensor& a, const Tensor& b) { return expr_tt; }        \
  Tensor operator sym(const Tensor& a, Scalar b) { return expr_ts; }               \
  Tensor operator sym(Scalar a, const Tensor& b) { return expr_st; }
MAROON_OPERATOR(+, a.add(b), a.add(b), prim::add(a, b))
MAROON_OPERATOR(-, a.sub(b), a.sub(b), b.scalar_operand(a).sub(b))
MAROON_OPERATOR(*, a.mul(b), a.mul(b), prim::mul(a, b))
MAROON_OPERATOR(/, a.div(b), a.div(b), b.scalar_operand(a).div(b))
MAROON_OPERATOR(%, a.mod(b), a.mod(a.scalar_operand(b)), b.scalar_operand(a).mod(b))
MAROON_OPERATOR(&, a.bitwise_and(b), prim::bitwise_and(a, b), prim::bitwise_and(a, b))
MAROON_OPERATOR(|, a.bitwise_or(b), prim::bitwise_or(a, b), prim::bitwise_or(a, b))
MAROON_OPERATOR(^, a.bitwise_xor(b), prim::bitwise_xor(a, b), prim::bitwise_xor(a, b))
MAROON_OPERATOR(<, a.lt(b), a.lt(b), b.gt(a))
MAROON_OPERATOR(>, a.gt(b), a.gt(b), b.lt(a))
MAROON_OPERATOR(<=, a.le(b), a.le(b), b.ge(a))
MAROON_OPERATOR(>=, a.ge(b), a.ge(b), b.le(a))
MAROON_OPERATOR(==, a.eq(b), a.eq(b), b.eq(a))
MAROON_OPERATOR(!=, a.ne(b), a.ne(b), b.ne(a))
#undef MAROON_OPERATOR
Tensor operator<<(const Tensor& a, Scalar b) { return a.lshift(b); }
Tensor operator>>(const Tensor& a, Scalar b) { return a.rshift(b); }



Tensor Tensor::asin() const {
  // tinygrad's polynomial: pi/2 - sqrt(1-|x|) * poly(|x|), with the sign of x.
  const double c[] = {-0.0012624911, 0.0066700901, -0.0170881256, 0.030891881,
                      -0.0501743046, 0.0889789874, -0.2145988016, 1.570796305};
  Tensor a = abs();
  Tensor p = api::filled(a.shape(), c[0], a.dtype());
  for (int i = 1; i < 8; ++i) p = prim::add(prim::mul(p, a), c[i]);
  Tensor x = prim::add(std::numbers::pi / 2, prim::mul(prim::add(1.0, a.neg()).sqrt(), p).neg());
  return prim::mul(sign(), x);
}
Tensor Tensor::acos() const { return prim::add(std::numbers::pi / 2, asin().neg()); }
Tensor Tensor::atan() const { return div(prim::add(1, prim::mul(*this, *this)).sqrt()).asin(); }

Tensor Tensor::isclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  Tensor finite_close = prim::bitwise_and(
      prim::bitwise_and(isfinite(), other.isfinite()),
      sub(other).abs().le(prim::add(atol, prim::mul(rtol, other.abs()))));
  Tensor inf_close = prim::bitwise_and(prim::bitwise_or(isinf(), other.isinf()), eq(other));
  Tensor nan_close = prim::bitwise_and(prim::bitwise_and(isnan(), other.isnan()), equal_nan);
  return prim::bitwise_or(prim::bitwise_or(finite_close, inf_close), nan_close);
}
Tensor Tensor::allclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return isclose(other, rtol, atol, equal_nan).all();
}

}  // namespace maroon
