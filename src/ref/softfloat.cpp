#include "softfloat.h"

#include <cassert>
#include <cstring>

namespace maroon::sf {

namespace {

int msb_index(u128 x) {  // index of the highest set bit; x != 0
  uint64_t hi = static_cast<uint64_t>(x >> 64);
  if (hi) return 127 - __builtin_clzll(hi);
  return 63 - __builtin_clzll(static_cast<uint64_t>(x));
}

// x >> n, and whether any one bit was shifted out.
u128 shift_right_sticky(u128 x, int n, bool* sticky) {
  if (n <= 0) { *sticky = false; return x; }
  if (n >= 128) { *sticky = x != 0; return 0; }
  *sticky = (x & ((u128{1} << n) - 1)) != 0;
  return x >> n;
}

uint64_t signed_zero(Format f, bool neg) { return neg ? f.sign_bit() : 0; }

// An exact value (-1)^sign * (sig + sticky*s) * 2^exp, 0 < s < 1.
struct Exact {
  bool sign;
  int32_t exp;
  u128 sig;
  bool sticky;
};

// The sum of two exact nonzero values, with enough bits kept (>= 120) that round_pack rounds it
// exactly as it would round the true sum. Both operands are normalized so their top bit is bit
// 123; the larger one then has room to be shifted left by 3 without overflow.
Exact add_exact(bool sa, int32_t ea, u128 ma, bool sb, int32_t eb, u128 mb) {
  constexpr int kTop = 123;
  int na = kTop - msb_index(ma), nb = kTop - msb_index(mb);
  ma <<= na; ea -= na;
  mb <<= nb; eb -= nb;
  if (ea < eb || (ea == eb && ma < mb)) {
    std::swap(sa, sb); std::swap(ea, eb); std::swap(ma, mb);
  }
  int d = ea - eb;
  Exact r{sa, eb, 0, false};
  if (d <= 3) {  // exact alignment: shift the larger left
    ma <<= d;
    if (ma < mb) { std::swap(ma, mb); std::swap(sa, sb); }
    r.sign = sa;
    r.sig = (sa == sb) ? ma + mb : ma - mb;
    return r;
  }
  bool st = false;
  u128 small = shift_right_sticky(mb, d, &st);
  r.exp = ea;
  r.sig = (sa == sb) ? ma + small : ma - small - (st ? 1 : 0);
  r.sticky = st;
  return r;
}

// The sign of an exact zero sum x + (-x): +0, except -0 when rounding down (IEEE 754 6.3).
uint64_t exact_zero_sum(Format f, Round r) { return signed_zero(f, r == Round::Down); }

}  // namespace

Format format_of(DType d) {
  switch (d) {
    case DType::Float16: return kF16;
    case DType::BFloat16: return kBF16;
    case DType::Float32: return kF32;
    case DType::Float64: return kF64;
    default: assert(false && "format_of: not a concrete float dtype"); return kF32;
  }
}

Unpacked unpack(Format f, uint64_t bits) {
  bool sign = (bits >> (f.bits - 1)) & 1;
  uint64_t e = (bits >> f.mbits) & f.exp_mask();
  uint64_t m = bits & f.man_mask();
  if (e == f.exp_mask()) return {m ? Class::NaN : Class::Inf, sign, 0, 0};
  if (e == 0) {
    if (m == 0) return {Class::Zero, sign, 0, 0};
    return {Class::Finite, sign, f.emin_q(), m};
  }
  return {Class::Finite, sign, static_cast<int32_t>(e) - f.bias() - f.mbits,
          m | (uint64_t{1} << f.mbits)};
}

bool is_nan(Format f, uint64_t bits) { return unpack(f, bits).cls == Class::NaN; }

uint64_t round_pack(Format f, bool sign, int32_t exp, u128 sig, bool sticky, Round r) {
  if (sig == 0) {
    assert(!sticky);
    return signed_zero(f, sign);
  }
  int32_t q = msb_index(sig) + exp - f.mbits;  // lsb exponent keeping mbits+1 bits
  if (q < f.emin_q()) q = f.emin_q();          // subnormal: fewer bits
  int64_t shift = int64_t{q} - exp;
  u128 m;
  bool guard = false, rest = sticky;
  if (shift > 0) {
    assert(!sticky || shift >= 1);
    bool below = false;
    u128 upper = shift_right_sticky(sig, static_cast<int>(shift > 200 ? 200 : shift - 1), &below);
    guard = upper & 1;
    rest = rest || below;
    m = upper >> 1;
  } else {
    assert(!sticky && "sticky bits need room below the rounding position");
    m = sig << -shift;
  }
  bool inexact = guard || rest;
  bool inc = false;
  switch (r) {
    case Round::NearestEven: inc = guard && (rest || (m & 1)); break;
    case Round::TowardZero: inc = false; break;
    case Round::Up: inc = inexact && !sign; break;
    case Round::Down: inc = inexact && sign; break;
  }
  m += inc;
  if (m >> (f.mbits + 1)) { m >>= 1; q += 1; }
  if (q > f.emax_q()) {  // overflow
    bool to_inf = r == Round::NearestEven || (r == Round::Up && !sign) || (r == Round::Down && sign);
    return to_inf ? infinity(f, sign) : max_finite(f, sign);
  }
  uint64_t mm = static_cast<uint64_t>(m);
  uint64_t out = sign ? f.sign_bit() : 0;
  if (mm >> f.mbits) {
    uint64_t e = static_cast<uint64_t>(q - f.emin_q() + 1);
    out |= (e << f.mbits) | (mm & f.man_mask());
  } else {
    out |= mm;  // subnormal (or zero after rounding down to 0)
  }
  return out;
}

uint64_t add(Format f, uint64_t a, uint64_t b, Round r) {
  Unpacked x = unpack(f, a), y = unpack(f, b);
  if (x.cls == Class::NaN || y.cls == Class::NaN) return canonical_nan(f);
  if (x.cls == Class::Inf) {
    if (y.cls == Class::Inf && x.sign != y.sign) return canonical_nan(f);
    return a;
  }
  if (y.cls == Class::Inf) return b;
  if (x.cls == Class::Zero && y.cls == Class::Zero)
    return x.sign == y.sign ? a : exact_zero_sum(f, r);
  if (x.cls == Class::Zero) return b;
  if (y.cls == Class::Zero) return a;
  Exact s = add_exact(x.sign, x.exp, x.sig, y.sign, y.exp, y.sig);
  if (s.sig == 0 && !s.sticky) return exact_zero_sum(f, r);
  return round_pack(f, s.sign, s.exp, s.sig, s.sticky, r);
}

uint64_t mul(Format f, uint64_t a, uint64_t b, Round r) {
  Unpacked x = unpack(f, a), y = unpack(f, b);
  bool sign = x.sign != y.sign;
  if (x.cls == Class::NaN || y.cls == Class::NaN) return canonical_nan(f);
  if (x.cls == Class::Inf || y.cls == Class::Inf) {
    if (x.cls == Class::Zero || y.cls == Class::Zero) return canonical_nan(f);
    return infinity(f, sign);
  }
  if (x.cls == Class::Zero || y.cls == Class::Zero) return signed_zero(f, sign);
  return round_pack(f, sign, x.exp + y.exp, u128{x.sig} * y.sig, false, r);
}

uint64_t div(Format f, uint64_t a, uint64_t b, Round r) {
  Unpacked x = unpack(f, a), y = unpack(f, b);
  bool sign = x.sign != y.sign;
  if (x.cls == Class::NaN || y.cls == Class::NaN) return canonical_nan(f);
  if (x.cls == Class::Inf) return y.cls == Class::Inf ? canonical_nan(f) : infinity(f, sign);
  if (y.cls == Class::Inf) return signed_zero(f, sign);
  if (y.cls == Class::Zero) return x.cls == Class::Zero ? canonical_nan(f) : infinity(f, sign);
  if (x.cls == Class::Zero) return signed_zero(f, sign);
  // Normalize the dividend's top bit to bit 116: the quotient then has >= 63 bits.
  int n = 116 - msb_index(x.sig);
  u128 num = u128{x.sig} << n;
  u128 quo = num / y.sig;
  bool sticky = (num % y.sig) != 0;
  return round_pack(f, sign, x.exp - n - y.exp, quo, sticky, r);
}

uint64_t recip(Format f, uint64_t a, Round r) {
  const uint64_t one = uint64_t(f.bias()) << f.mbits;
  return div(f, one, a, r);
}

uint64_t fma(Format f, uint64_t a, uint64_t b, uint64_t c, Round r) {
  Unpacked x = unpack(f, a), y = unpack(f, b), z = unpack(f, c);
  if (x.cls == Class::NaN || y.cls == Class::NaN || z.cls == Class::NaN) return canonical_nan(f);
  bool psign = x.sign != y.sign;
  bool pinf = x.cls == Class::Inf || y.cls == Class::Inf;
  bool pzero = x.cls == Class::Zero || y.cls == Class::Zero;
  if (pinf && pzero) return canonical_nan(f);
  if (pinf) {
    if (z.cls == Class::Inf && z.sign != psign) return canonical_nan(f);
    return infinity(f, psign);
  }
  if (z.cls == Class::Inf) return c;
  if (pzero) {
    if (z.cls == Class::Zero) return psign == z.sign ? c : exact_zero_sum(f, r);
    return c;
  }
  u128 prod = u128{x.sig} * y.sig;
  int32_t pexp = x.exp + y.exp;
  if (z.cls == Class::Zero) return round_pack(f, psign, pexp, prod, false, r);
  Exact s = add_exact(psign, pexp, prod, z.sign, z.exp, z.sig);
  if (s.sig == 0 && !s.sticky) return exact_zero_sum(f, r);
  return round_pack(f, s.sign, s.exp, s.sig, s.sticky, r);
}

namespace {
u128 isqrt(u128 n) {  // floor(sqrt(n)), digit by digit
  u128 rem = n, root = 0, bit = u128{1} << 126;
  while (bit > n) bit >>= 2;
  while (bit) {
    if (rem >= root + bit) {
      rem -= root + bit;
      root = (root >> 1) + bit;
    } else {
      root >>= 1;
    }
    bit >>= 2;
  }
  return root;
}
}  // namespace

uint64_t sqrt(Format f, uint64_t a, Round r) {
  Unpacked x = unpack(f, a);
  if (x.cls == Class::NaN) return canonical_nan(f);
  if (x.cls == Class::Zero) return a;  // sqrt(-0) = -0
  if (x.sign) return canonical_nan(f);
  if (x.cls == Class::Inf) return a;
  // Put the top bit at 112 or 113 with an even exponent: the root then has 57 bits.
  int s = 112 - msb_index(x.sig);
  if ((x.exp - s) & 1) s += 1;
  u128 m = u128{x.sig} << s;
  int32_t e = x.exp - s;
  u128 root = isqrt(m);
  bool sticky = root * root != m;
  return round_pack(f, false, e / 2, root, sticky, r);
}

uint64_t trunc(Format f, uint64_t a) {
  Unpacked x = unpack(f, a);
  if (x.cls == Class::NaN) return canonical_nan(f);
  if (x.cls != Class::Finite) return a;
  if (x.exp >= 0) return a;                      // already an integer
  if (x.exp <= -64 || (x.sig >> -x.exp) == 0) return signed_zero(f, x.sign);
  uint64_t clear = (uint64_t{1} << -x.exp) - 1;  // fraction bits live in the mantissa field
  return a & ~clear;
}

uint64_t neg(Format f, uint64_t a) {
  if (is_nan(f, a)) return canonical_nan(f);
  return a ^ f.sign_bit();
}

namespace {
// A key that orders non-NaN values as their real values; -0 and +0 share key 0.
int64_t order_key(Format f, uint64_t a) {
  int64_t mag = static_cast<int64_t>(a & ~f.sign_bit() & ((f.bits == 64) ? ~uint64_t{0}
                                                                          : (uint64_t{1} << f.bits) - 1));
  return (a & f.sign_bit()) ? -mag : mag;
}
}  // namespace

bool lt(Format f, uint64_t a, uint64_t b) {
  if (is_nan(f, a) || is_nan(f, b)) return false;
  return order_key(f, a) < order_key(f, b);
}

bool eq(Format f, uint64_t a, uint64_t b) {
  if (is_nan(f, a) || is_nan(f, b)) return false;
  return order_key(f, a) == order_key(f, b);
}

uint64_t max(Format f, uint64_t a, uint64_t b) {
  if (is_nan(f, a) || is_nan(f, b)) return canonical_nan(f);
  int64_t ka = order_key(f, a), kb = order_key(f, b);
  if (ka == kb) return (a & f.sign_bit()) ? b : a;  // prefers +0 over -0
  return ka < kb ? b : a;
}

uint64_t convert(Format from, Format to, uint64_t bits, Round r) {
  Unpacked x = unpack(from, bits);
  switch (x.cls) {
    case Class::NaN: return canonical_nan(to);
    case Class::Inf: return infinity(to, x.sign);
    case Class::Zero: return signed_zero(to, x.sign);
    case Class::Finite: break;
  }
  return round_pack(to, x.sign, x.exp, x.sig, false, r);
}

uint64_t from_int(Format f, int64_t v, Round r) {
  bool sign = v < 0;
  uint64_t mag = sign ? (~static_cast<uint64_t>(v) + 1) : static_cast<uint64_t>(v);
  return round_pack(f, sign, 0, mag, false, r);
}

uint64_t from_uint(Format f, uint64_t v, Round r) { return round_pack(f, false, 0, v, false, r); }

uint64_t to_int(Format f, uint64_t bits, int width, bool is_signed) {
  const uint64_t mask = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  const uint64_t smax = mask >> 1, smin = smax + 1;  // magnitudes of the signed extremes
  Unpacked x = unpack(f, bits);
  if (x.cls == Class::NaN || x.cls == Class::Zero) return 0;
  bool overflow = x.cls == Class::Inf;
  uint64_t mag = 0;
  if (!overflow) {
    if (x.exp >= 0) {
      overflow = msb_index(x.sig) + x.exp >= 64;
      if (!overflow) mag = x.sig << x.exp;
    } else {
      mag = x.exp <= -64 ? 0 : (x.sig >> -x.exp);
    }
  }
  if (is_signed) {
    if (x.sign) {
      if (overflow || mag > smin) return smin & mask;  // the minimum's bit pattern
      return (~mag + 1) & mask;
    }
    if (overflow || mag > smax) return smax;
    return mag;
  }
  if (x.sign) return 0;
  if (overflow || mag > mask) return mask;
  return mag;
}

uint64_t bits_of(double d) { uint64_t u; std::memcpy(&u, &d, 8); return u; }
uint64_t bits_of(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
double double_of(uint64_t bits) { double d; std::memcpy(&d, &bits, 8); return d; }
float float_of(uint64_t bits) { uint32_t u = static_cast<uint32_t>(bits); float f; std::memcpy(&f, &u, 4); return f; }

}  // namespace maroon::sf
