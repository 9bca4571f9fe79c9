// Exact arithmetic on the four float formats: each operation computes its exact result and rounds
// it once (float/round.h).
#include <cassert>
#include <utility>

#include "float/softfloat.h"

namespace maroon::sf {

using namespace detail;

namespace {

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

}  // namespace maroon::sf
