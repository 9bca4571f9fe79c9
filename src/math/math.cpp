// Temporary deterministic implementation (double evaluation, one rounding to the target).
#include "math/math.h"

#include <cstring>

namespace maroon::math {
namespace {
using sf::Class;
using sf::Format;

double to_double(Format f, uint64_t x) { return sf::double_of(sf::convert(f, sf::kF64, x, Round::NearestEven)); }
uint64_t from_double(Format f, double d, Round r) { return sf::convert(sf::kF64, f, sf::bits_of(d), r); }

double scale2(double v, int k) {  // v * 2^k by repeated exact power-of-two multiplies
  while (k > 1000) { v *= 0x1p1000; k -= 1000; }
  while (k < -1000) { v *= 0x1p-1000; k += 1000; }
  uint64_t b = uint64_t(1023 + k) << 52;
  return v * sf::double_of(b);
}

double exp2d(double x) {
  if (x != x) return x;
  if (x > 1100) return 0x1p1023 * 2.0;
  if (x < -1100) return 0.0;
  double n = x + 0x1.8p52 - 0x1.8p52;
  double r = (x - n) * 0.6931471805599453;
  double s = 1, t = 1;
  for (int i = 1; i < 20; ++i) { t = t * r / i; s += t; }
  return scale2(s, int(n));
}
double log2d(double x) {
  uint64_t b = sf::bits_of(x);
  int e = int(b >> 52) - 1023;
  if ((b >> 52) == 0) { x *= 0x1p64; b = sf::bits_of(x); e = int(b >> 52) - 1023 - 64; }
  double m = sf::double_of((b & ((uint64_t(1) << 52) - 1)) | (uint64_t(1023) << 52));
  if (m > 1.4142135623730951) { m *= 0.5; e += 1; }
  double s = (m - 1) / (m + 1), s2 = s * s, acc = 0, p = s;
  for (int i = 1; i < 60; i += 2) { acc += p / i; p *= s2; }
  return e + 2 * acc * 1.4426950408889634;
}
double sind(double x) {
  const double pio2_1 = 1.5707963267948966, pio2_2 = 6.123233995736766e-17;
  double n = x * 0.6366197723675814 + 0x1.8p52 - 0x1.8p52;
  double r = (x - n * pio2_1) - n * pio2_2;
  long k = long(n) & 3;
  double r2 = r * r, s = r, t = r, c = 1, u = 1;
  for (int i = 1; i < 14; ++i) {
    t = -t * r2 / ((2 * i) * (2 * i + 1)); s += t;
    u = -u * r2 / ((2 * i - 1) * (2 * i)); c += u;
  }
  switch (k) { case 0: return s; case 1: return c; case 2: return -s; default: return -c; }
}
}  // namespace

uint64_t exp2(Format f, uint64_t x, Round r) {
  if (sf::is_nan(f, x)) return sf::canonical_nan(f);
  return from_double(f, exp2d(to_double(f, x)), r);
}
uint64_t log2(Format f, uint64_t x, Round r) {
  sf::Unpacked u = sf::unpack(f, x);
  if (u.cls == Class::NaN || (u.sign && u.cls != Class::Zero)) return sf::canonical_nan(f);
  if (u.cls == Class::Zero) return sf::infinity(f, true);
  if (u.cls == Class::Inf) return x;
  return from_double(f, log2d(to_double(f, x)), r);
}
uint64_t sin(Format f, uint64_t x, Round r) {
  sf::Unpacked u = sf::unpack(f, x);
  if (u.cls == Class::NaN || u.cls == Class::Inf) return sf::canonical_nan(f);
  if (u.cls == Class::Zero) return x;
  return from_double(f, sind(to_double(f, x)), r);
}
uint64_t pow(Format f, uint64_t x, uint64_t y, Round r) {
  double a = to_double(f, x), b = to_double(f, y);
  if (b == 0) return from_double(f, 1.0, r);
  if (a == 1) return from_double(f, 1.0, r);
  if (a != a || b != b) return sf::canonical_nan(f);
  bool neg = false;
  if (a < 0 || (a == 0 && sf::bits_of(a) >> 63)) {
    double t = b + 0x1.8p52 - 0x1.8p52;
    bool integer = (b >= 0x1p52 || b <= -0x1p52) || t == b;
    if (a == -1 && (b > 1e300 || b < -1e300)) return from_double(f, 1.0, r);
    if (!integer && a != 0) return sf::canonical_nan(f);
    bool odd = integer && b < 0x1p53 && b > -0x1p53 && (long long)b % 2 != 0;
    neg = odd;
    a = -a;
  }
  double v;
  if (a == 0) v = b < 0 ? 0x1p1023 * 2.0 : 0.0;
  else v = exp2d(b * log2d(a));
  return from_double(f, neg ? -v : v, r);
}

}  // namespace maroon::math
