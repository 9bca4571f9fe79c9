#include "ref/scalar.h"

#include <cassert>
#include <stdexcept>
#include <string>

#include "math/math.h"
#include "float/softfloat.h"

namespace maroon::ref {

namespace {

uint64_t width_mask(int w) { return w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1; }

// Sign-extends the low w bits.
int64_t sext(uint64_t v, int w) {
  if (w == 64) return static_cast<int64_t>(v);
  uint64_t m = uint64_t{1} << (w - 1);
  v &= width_mask(w);
  return static_cast<int64_t>((v ^ m) - m);
}

uint64_t float_one(sf::Format f) { return uint64_t(f.bias()) << f.mbits; }

// An op the table accepts for a dtype class but that has no meaning below: a new op whose row
// was added without its case here. Release builds must not return 0 silently.
[[noreturn]] void missing(const char* cls, Op op) {
  throw std::logic_error("src/ref/scalar.cpp has no " + std::string(cls) + " meaning for " +
                         std::string(op_name(op)) + " (maroon/ops.def accepts it)");
}

// ---- integers: two's complement of width w; results wrap. ----

uint64_t int_binary(Op op, DType d, uint64_t a, uint64_t b) {
  const int w = bitwidth(d);
  const uint64_t m = width_mask(w);
  const bool sgn = !is_unsigned(d);
  const int64_t sa = sext(a, w), sb = sext(b, w);
  const uint64_t min_bits = uint64_t{1} << (w - 1);  // bit pattern of the signed minimum
  switch (op) {
    case Op::ADD: return (a + b) & m;
    case Op::MUL: return (a * b) & m;
    case Op::MAX: return sgn ? (sa < sb ? b : a) : (a < b ? b : a);
    case Op::CMPLT: return sgn ? sa < sb : a < b;
    case Op::CMPNE: return a != b;
    case Op::CMPEQ: return a == b;
    case Op::AND: return a & b;
    case Op::OR: return a | b;
    case Op::XOR: return a ^ b;
    case Op::SHL: {
      // A shift count that is negative or at least the width shifts every bit out.
      bool out = sgn ? (sb < 0 || sb >= w) : b >= static_cast<uint64_t>(w);
      return out ? 0 : (a << b) & m;
    }
    case Op::SHR: {
      bool out = sgn ? (sb < 0 || sb >= w) : b >= static_cast<uint64_t>(w);
      if (sgn) return static_cast<uint64_t>(out ? (sa < 0 ? -1 : 0) : (sa >> b)) & m;
      return out ? 0 : a >> b;
    }
    case Op::CDIV:
    case Op::FLOORDIV: {
      // RISC-V's rules: x/0 is all ones, MIN/-1 is MIN; so a == q*b + r always holds.
      if (b == 0) return m;
      if (!sgn) return a / b;
      if (a == min_bits && sb == -1) return min_bits;
      int64_t q = sa / sb;
      if (op == Op::FLOORDIV && (sa % sb != 0) && ((sa < 0) != (sb < 0))) q -= 1;
      return static_cast<uint64_t>(q) & m;
    }
    case Op::CMOD:
    case Op::FLOORMOD: {
      // x%0 is x, MIN%-1 is 0.
      if (b == 0) return a;
      if (!sgn) return a % b;
      if (a == min_bits && sb == -1) return 0;
      int64_t r = sa % sb;
      if (op == Op::FLOORMOD && r != 0 && ((r < 0) != (sb < 0))) r += sb;
      return static_cast<uint64_t>(r) & m;
    }
    default: break;
  }
  missing("integer", op);
}

uint64_t bool_binary(Op op, uint64_t a, uint64_t b) {
  switch (op) {
    case Op::ADD: case Op::MAX: case Op::OR: return a | b;
    case Op::MUL: case Op::AND: return a & b;
    case Op::XOR: case Op::CMPNE: return a ^ b;
    case Op::CMPEQ: return a == b;
    case Op::CMPLT: return !a && b;
    default: break;
  }
  missing("bool", op);
}

uint64_t float_binary(Op op, sf::Format f, Round r, uint64_t a, uint64_t b) {
  switch (op) {
    case Op::ADD: return sf::add(f, a, b, r);
    case Op::MUL: return sf::mul(f, a, b, r);
    case Op::MAX: return sf::max(f, a, b);
    case Op::CMPLT: return sf::lt(f, a, b);
    case Op::CMPNE: return !sf::eq(f, a, b);
    case Op::CMPEQ: return sf::eq(f, a, b);
    case Op::POW: return math::pow(f, a, b, r);
    default: break;
  }
  missing("float", op);
}

uint64_t float_unary(Op op, sf::Format f, Round r, uint64_t a) {
  switch (op) {
    case Op::EXP2: return math::exp2(f, a, r);
    case Op::LOG2: return math::log2(f, a, r);
    case Op::SIN: return math::sin(f, a, r);
    case Op::SQRT: return sf::sqrt(f, a, r);
    case Op::RECIPROCAL: return sf::recip(f, a, r);
    case Op::TRUNC: return sf::trunc(f, a);
    default: break;
  }
  missing("float", op);
}

}  // namespace

uint64_t cast(DType from, DType to, uint64_t bits, Round r) {
  if (from == to) return bits;
  if (to == DType::Bool) {
    if (is_float(from)) {
      sf::Format f = sf::format_of(from);
      return (bits & ~f.sign_bit() & width_mask(f.bits)) != 0;  // NaN is true, -0 is false
    }
    return (bits & width_mask(bitwidth(from))) != 0;
  }
  if (is_float(to)) {
    sf::Format t = sf::format_of(to);
    if (is_float(from)) return sf::convert(sf::format_of(from), t, bits, r);
    if (from == DType::Bool || is_unsigned(from)) return sf::from_uint(t, bits, r);
    return sf::from_int(t, sext(bits, bitwidth(from)), r);
  }
  // to an integer
  const int w = bitwidth(to);
  if (is_float(from)) return sf::to_int(sf::format_of(from), bits, w, !is_unsigned(to));
  if (from == DType::Bool || is_unsigned(from)) return bits & width_mask(w);
  return static_cast<uint64_t>(sext(bits, bitwidth(from))) & width_mask(w);
}

uint64_t eval(Op op, DType in, DType out, Round r, const uint64_t* x) {
  switch (op) {
    case Op::CAST: return cast(in, out, x[0], r);
    case Op::BITCAST: return x[0];
    case Op::WHERE: return x[0] ? x[1] : x[2];
    case Op::MULACC:
      if (is_float(in)) return sf::fma(sf::format_of(in), x[0], x[1], x[2], r);
      return (x[0] * x[1] + x[2]) & width_mask(bitwidth(in));
    default: break;
  }
  const OpInfo& info = op_info(op);
  if (info.kind == OpKind::Unary) return float_unary(op, sf::format_of(in), r, x[0]);
  assert(info.kind == OpKind::Binary || info.kind == OpKind::Compare);
  if (is_float(in)) return float_binary(op, sf::format_of(in), r, x[0], x[1]);
  if (in == DType::Bool) return bool_binary(op, x[0], x[1]);
  return int_binary(op, in, x[0], x[1]);
}

uint64_t identity(Op op, DType d) {
  switch (op_info(op).identity) {
    case Identity::Zero: return 0;  // +0.0 for floats
    case Identity::One: return is_float(d) ? float_one(sf::format_of(d)) : 1;
    case Identity::Lowest:
      if (is_float(d)) return sf::infinity(sf::format_of(d), true);
      if (d == DType::Bool || is_unsigned(d)) return 0;
      return uint64_t{1} << (bitwidth(d) - 1);  // the signed minimum
    case Identity::AllOnes: return d == DType::Bool ? 1 : width_mask(bitwidth(d));
    case Identity::None: break;
  }
  assert(false && "identity: the op has none (maroon/ops.def IDENTITY)");
  return 0;
}

uint64_t reduce_identity(ReduceOp op, DType d) { return identity(combiner(op), d); }

uint64_t reduce_step(ReduceOp op, DType d, Round r, uint64_t acc, uint64_t x) {
  uint64_t v[2] = {acc, x};
  return eval(combiner(op), d, d, r, v);
}

}  // namespace maroon::ref
