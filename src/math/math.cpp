// Correctly rounded exp2, log2, sin and pow for binary16, bfloat16 and binary32 (all four
// rounding modes), and double-double-accurate versions for binary64. See docs/math.md.
//
// Structure of every function: special values and exact cases first (computed exactly and
// rounded by sf::round_pack), then, for the narrow formats, a fast evaluation in double with a
// bounded error of a few ulps of the double result, which is accepted only when the double is
// far enough (in double ulps) from every rounding boundary of the target format; otherwise an
// accurate double-double evaluation (relative error well below 2^-90) is rounded with the same
// test in exact integer arithmetic. Nothing here depends on libm or on the FPU rounding mode
// (the library runs us under round-to-nearest without flush-to-zero; -ffp-contract=off).
#include "math/math.h"

#include <algorithm>

#include "math/dd.h"
#include "math/internal.h"

namespace maroon::math {
namespace detail {
#include "math/tables.inc"

Stats& stats() {
  thread_local Stats s;
  return s;
}

const Exp2FastData& exp2_fast_data() {
  static const Exp2FastData d = [] {
    Exp2FastData v{};
    for (int j = 0; j < 128; ++j) v.table[j] = kExp2T[j].hi;
    for (int i = 0; i < 6; ++i) v.c[i] = kExp2C[i].hi;
    return v;
  }();
  return d;
}
}  // namespace detail

namespace {
using namespace detail;
using sf::Class;
using sf::Format;
using sf::u128;

constexpr uint64_t kMan52 = (uint64_t{1} << 52) - 1;
// Relative error bound 2^-kQ used to round double-double results (the analysis in docs/math.md
// gives below 2^-98 for exp2/log2/sin; pow loses up to 2^11 of that through y*log2(x)).
constexpr int kQ = 90;
constexpr int kQPow = 84;

inline double pow2(int k) {  // 2^k, -1022 <= k <= 1023
  return sf::double_of(uint64_t(k + 1023) << 52);
}
inline int msb64(uint64_t x) { return 63 - __builtin_clzll(x); }

// |value| = m * 2^e with m in [2^52, 2^53).
struct Norm {
  uint64_t m;
  int e;
};
inline Norm normalize(uint64_t sig, int exp) {
  int s = 52 - msb64(sig);
  return {sig << s, exp - s};
}
// The double m * 2^e (must be a normal double).
inline double make_double(Norm n) {
  return sf::double_of((n.m & kMan52) | (uint64_t(n.e + 52 + 1023) << 52));
}

inline DD dd_neg(DD a) { return {-a.hi, -a.lo}; }

// Rounds (-1)^sign * (y.hi + y.lo) * 2^k to f in mode r, given that the true value v satisfies
// |v - y| < 2^-q |y| (y.hi > 0, |y.lo| <= ulp(y.hi)). Both ends of that interval are converted
// exactly to integers and rounded; if they round alike, so does v (rounding is monotonic).
// Returns false when they differ; *out then holds the rounding of y itself.
bool round_dd(Format f, bool sign, DD y, int k, int q, Round r, uint64_t* out) {
  uint64_t hb = sf::bits_of(y.hi);
  int eh = int(hb >> 52) - 1075;
  u128 s = u128((hb & kMan52) | (uint64_t{1} << 52)) << 64;
  int base = eh - 64;
  if (y.lo != 0) {
    uint64_t lb = sf::bits_of(y.lo);
    int be = int((lb >> 52) & 0x7ff);
    uint64_t lm = (lb & kMan52) | (be ? (uint64_t{1} << 52) : 0);
    int d = (be ? be : 1) - 1075 - base;
    u128 lv = d >= 0 ? (u128(lm) << d) : (d > -64 ? u128(lm >> -d) : 0);  // truncation < 2^base
    s = (lb >> 63) ? s - lv : s + lv;
  }
  u128 e = (s >> q) + 2;  // covers 2^-q |y| and the truncation above
  uint64_t a = sf::round_pack(f, sign, base + k, s - e, false, r);
  uint64_t b = sf::round_pack(f, sign, base + k, s + e, false, r);
  if (a == b) {
    *out = a;
    return true;
  }
  *out = sf::round_pack(f, sign, base + k, s, false, r);
  return false;
}

// Rounds a nonzero double y, known to be within `ulps` ulps of the true value, to f (narrower
// than binary64) in mode r. Fails when a rounding boundary of f is within that distance, or when
// the result is not a normal number of f (those go to the accurate path).
inline bool round_fast(Format f, double y, unsigned ulps, Round r, uint64_t* out) {
  uint64_t b = sf::bits_of(y);
  int e = int((b >> 52) & 0x7ff) - 1023;
  if (e < 2 - f.bias() || e > f.bias() - 1) return false;
  int w = 52 - f.mbits;
  uint64_t low = b & ((uint64_t{1} << w) - 1), full = uint64_t{1} << w;
  if (r == Round::NearestEven) {
    uint64_t half = full >> 1;
    uint64_t d = low > half ? low - half : half - low;
    if (d <= ulps) return false;
  } else if (low <= ulps || full - low <= ulps) {
    return false;
  }
  // Normal result, no tie, not exact: truncate and step away from zero when the mode says so.
  bool neg = (b >> 63) != 0;
  bool up;
  switch (r) {
    case Round::NearestEven: up = low > (full >> 1); break;
    case Round::TowardZero: up = false; break;
    case Round::Up: up = !neg; break;
    case Round::Down: up = neg; break;
    default: up = false; break;
  }
  uint64_t mag = (uint64_t(e + f.bias()) << f.mbits) | ((b & kMan52) >> w);
  *out = (neg ? f.sign_bit() : 0) | (mag + (up ? 1 : 0));  // a carry bumps the exponent
  return true;
}

inline uint64_t finish(Format f, bool sign, DD y, int k, int q, Round r) {
  uint64_t out;
  if (round_dd(f, sign, y, k, q, r, &out)) {
    ++stats().accurate;
  } else {
    ++stats().unresolved;
  }
  return out;
}

// ---------------------------------------------------------------- exp2
// 2^t = 2^k * y for |t| < 2^40: t = n/128 + rr, |rr| <= 2^-8 (+|t.lo|), 2^(j/128) from the
// table and 2^rr by its Taylor series to degree 9 (truncation < 2^-107).
DD exp2_core(DD t, int* k) {
  double nd = (t.hi * 128.0 + 0x1.8p52) - 0x1.8p52;
  int64_t n = static_cast<int64_t>(nd);
  DD rr = two_sum(t.hi - nd * 0x1p-7, t.lo);  // the subtraction is exact
  int j = static_cast<int>(n & 127);
  *k = static_cast<int>((n - j) / 128);
  double r = rr.hi;
  double q = kExp2C[6].hi + r * (kExp2C[7].hi + r * (kExp2C[8].hi + r * kExp2C[9].hi));
  DD acc{q, 0};
  for (int i = 5; i >= 0; --i) acc = dd_add(dd_mul(acc, rr), kExp2C[i]);
  return dd_mul(kExp2T[j], acc);
}

// Fast binary32-input version: 2^x = 2^k * result, error < 4 ulps of the result.
// src/cpu/fast_math.cpp (the SIMD exp2) repeats these operations exactly, in this order: keep
// the two in step.
inline double exp2_fast(double x, int* k) {
  double nd = (x * 128.0 + 0x1.8p52) - 0x1.8p52;
  int64_t n = static_cast<int64_t>(nd);
  double r = x - nd * 0x1p-7;  // exact
  int j = static_cast<int>(n & 127);
  *k = static_cast<int>((n - j) / 128);
  double p = r * (kExp2C[1].hi +
                  r * (kExp2C[2].hi + r * (kExp2C[3].hi + r * (kExp2C[4].hi + r * kExp2C[5].hi))));
  return kExp2T[j].hi + kExp2T[j].hi * p;
}

// ---------------------------------------------------------------- log2
// The table step shared by both paths: m/2^52 in [1, 2) as md (halved for the upper half of the
// table, with E bumped) and the entry whose c brings md*c near 1.
struct LogStep {
  double md;
  int E;
  const LogEntry& t;
};
inline LogStep log2_step(uint64_t m, int E) {
  double md = double(m) * 0x1p-52;
  int i = static_cast<int>((m >> 43) & 511);
  if (i >= 256) {
    md *= 0.5;
    E += 1;
  }
  return {md, E, kLog2T[i]};
}

// log2(m * 2^E), m in [2^52, 2^53) read as m/2^52 in [1, 2).
DD log2_core(uint64_t m, int E0) {
  const auto [md, E, t] = log2_step(m, E0);
  DD z;
  if (t.c == 1.0) {
    z = {md - 1.0, 0.0};  // exact (Sterbenz)
  } else {
    DD p = two_prod(md, t.c);
    z = two_sum(p.hi - 1.0, p.lo);  // exact: z = md*c - 1
  }
  double zh = z.hi;
  double q = kLog2C[7].hi +
             zh * (kLog2C[8].hi +
                   zh * (kLog2C[9].hi + zh * (kLog2C[10].hi + zh * (kLog2C[11].hi + zh * kLog2C[12].hi))));
  DD acc{q, 0};
  for (int n = 6; n >= 1; --n) acc = dd_add(dd_mul(acc, z), kLog2C[n]);
  DD p = dd_mul(acc, z);
  DD s = dd_add(DD{double(E), 0.0}, DD{t.lhi, t.llo});
  return dd_add(s, p);
}

// Fast version for m with at most 24 significant bits (then md*c - 1 is exact in double).
inline double log2_fast(uint64_t m, int E0) {
  const auto [md, E, t] = log2_step(m, E0);
  double z = md * t.c - 1.0;
  double p = z * (kLog2C[1].hi +
                  z * (kLog2C[2].hi +
                       z * (kLog2C[3].hi + z * (kLog2C[4].hi + z * (kLog2C[5].hi + z * kLog2C[6].hi)))));
  double s = t.lhi + p;
  return E == 0 ? s : double(E) + s;
}

// ---------------------------------------------------------------- sin
// Payne-Hanek: |x| = m * 2^e (m < 2^53). x * 32/pi = 64*K + k + f, k in [0, 64), |f| <= 1/2;
// |f| = g * 2^ge with g's top bit at 127. A 256-bit window of 2/pi leaves an absolute error
// below 2^-190 in f.
struct Reduced {
  int k;
  bool neg;
  u128 g;
  int ge;
};

inline uint64_t chunk(const uint64_t* p, int n, int pos) {  // bits pos..pos+63 of p[0..n)
  uint64_t v;
  int w = pos >> 6, sh = pos & 63;  // arithmetic shift: floor for negative pos
  auto word = [&](int i) -> uint64_t { return (i >= 0 && i < n) ? p[i] : 0; };
  v = word(w) >> sh;
  if (sh) v |= word(w + 1) << (64 - sh);
  return v;
}

Reduced reduce(uint64_t m, int e) {
  int E = e + 4;
  int i0 = E - 5 < 1 ? 1 : E - 5;
  int off = i0 - 1, w = off >> 6, sh = off & 63;
  uint64_t win[4];
  for (int t = 0; t < 4; ++t)
    win[t] = sh ? (kTwoOverPi[w + t] << sh) | (kTwoOverPi[w + t + 1] >> (64 - sh)) : kTwoOverPi[w + t];
  uint64_t p[5];
  u128 carry = 0;
  for (int t = 3; t >= 0; --t) {
    u128 prod = u128(m) * win[t] + carry;
    p[3 - t] = static_cast<uint64_t>(prod);
    carry = prod >> 64;
  }
  p[4] = static_cast<uint64_t>(carry);
  int s = i0 + 255 - E;  // P * 2^-s = x*32/pi mod 64*2^?
  Reduced red{};
  red.k = static_cast<int>(chunk(p, 5, s) & 63);
  red.neg = (chunk(p, 5, s - 1) & 1) != 0;
  uint64_t g[5];
  if (red.neg) {  // |f| = 2^s - (P mod 2^s) = (-P) mod 2^s
    red.k = (red.k + 1) & 63;
    unsigned c = 1;
    for (int t = 0; t < 5; ++t) {
      uint64_t v = ~p[t] + c;
      c = (c && v == 0) ? 1 : 0;
      g[t] = v;
    }
  } else {
    for (int t = 0; t < 5; ++t) g[t] = p[t];
  }
  for (int t = 0; t < 5; ++t) {  // keep bits below s
    int lo = t * 64;
    if (lo >= s) g[t] = 0;
    else if (s - lo < 64) g[t] &= (uint64_t{1} << (s - lo)) - 1;
  }
  int top = -1;
  for (int t = 4; t >= 0; --t)
    if (g[t]) { top = t * 64 + msb64(g[t]); break; }
  if (top < 0) { red.g = 0; red.ge = 0; return red; }
  red.g = (u128(chunk(g, 5, top - 63)) << 64) | chunk(g, 5, top - 127);
  red.ge = top - 127 - s;
  return red;
}

// sin(k*pi/32 + r) in double-double; |r| <= pi/64 (+ tiny).
DD sin_core(int k, DD r) {
  DD z = dd_mul(r, r);
  double zh = z.hi;
  // sin r = r (1 + sum_{j>=1} (-1)^j z^j / (2j+1)!), to j = 7; cos r - 1 likewise to j = 7.
  double qs = -kInvFact[11].hi + zh * (kInvFact[13].hi - zh * kInvFact[15].hi);
  double qc = -kInvFact[10].hi + zh * (kInvFact[12].hi - zh * kInvFact[14].hi);
  DD as{qs, 0}, ac{qc, 0};
  for (int j = 4; j >= 1; --j) {
    DD cs = (j & 1) ? dd_neg(kInvFact[2 * j + 1]) : kInvFact[2 * j + 1];
    DD cc = (j & 1) ? dd_neg(kInvFact[2 * j]) : kInvFact[2 * j];
    as = dd_add(dd_mul(as, z), cs);
    ac = dd_add(dd_mul(ac, z), cc);
  }
  DD sinr = dd_add(r, dd_mul(dd_mul(as, z), r));
  DD cm1 = dd_mul(ac, z);
  DD S = kSinT[k], C = kSinT[(k + 16) & 63];
  return dd_add(S, dd_add(dd_mul(C, sinr), dd_mul(S, cm1)));
}

inline double sin_fast(int k, double r) {
  double z = r * r;
  double sr = r + r * z * (-kInvFact[3].hi + z * (kInvFact[5].hi + z * (-kInvFact[7].hi + z * kInvFact[9].hi)));
  double cm1 = z * (-kInvFact[2].hi +
                    z * (kInvFact[4].hi + z * (-kInvFact[6].hi + z * (kInvFact[8].hi - z * kInvFact[10].hi))));
  double S = kSinT[k].hi, C = kSinT[(k + 16) & 63].hi;
  return S + (C * sr + S * cm1);
}

inline DD reduced_dd(const Reduced& red) {
  double hi = double(uint64_t(red.g >> 75)) * pow2(red.ge + 75);
  double lo = double(uint64_t(red.g >> 22) & ((uint64_t{1} << 53) - 1)) * pow2(red.ge + 22);
  DD f = fast_two_sum(hi, lo);
  DD rr = dd_mul(f, kPiOver32);
  return red.neg ? dd_neg(rr) : rr;
}

inline uint64_t one(Format f, Round r) { return sf::round_pack(f, false, 0, 1, false, r); }

}  // namespace

// ==================================================================== exp2
uint64_t exp2(Format f, uint64_t x, Round r) {
  sf::Unpacked u = sf::unpack(f, x);
  switch (u.cls) {
    case Class::NaN: return sf::canonical_nan(f);
    case Class::Inf: return u.sign ? 0 : sf::infinity(f, false);
    case Class::Zero: return one(f, r);
    case Class::Finite: break;
  }
  Norm n = normalize(u.sig, u.exp);
  int top = n.e + 52;  // 2^top <= |x| < 2^(top+1)
  if (top >= 20) {     // |x| >= 2^20: overflow or underflow in every format
    if (!u.sign) return sf::round_pack(f, false, f.bias() + 1, 1, false, r);
    return sf::round_pack(f, false, f.emin_q() - 5, 4, true, r);
  }
  if (top < -(f.mbits + 3)) {  // 1 < 2^x < 1 + ulp(1)/4, or 1 - ulp(1)/8 < 2^x < 1
    u128 s = u128{1} << 100;
    return sf::round_pack(f, false, -100, u.sign ? s - 1 : s, true, r);
  }
  double xd = make_double(n);
  if (u.sign) xd = -xd;
  // Integer x: an exact power of two (also covers subnormal results and overflow).
  bool integer = n.e >= 0 || (n.e > -53 && (n.m & ((uint64_t{1} << -n.e) - 1)) == 0);
  if (integer) {
    ++stats().special;
    return sf::round_pack(f, false, static_cast<int32_t>(xd), 1, false, r);
  }
  if (xd >= f.bias() + 1) return sf::round_pack(f, false, f.bias() + 1, 1, false, r);
  if (xd < f.emin_q() - 1) return sf::round_pack(f, false, f.emin_q() - 5, 4, true, r);
  if (f.bits != 64 && xd > -1020) {
    int k;
    double y = exp2_fast(xd, &k) * pow2(k);
    uint64_t out;
    if (round_fast(f, y, 8, r, &out)) {
      ++stats().fast;
      return out;
    }
  }
  int k;
  DD y = exp2_core(DD{xd, 0}, &k);
  return finish(f, false, y, k, kQ, r);
}

// ==================================================================== log2
uint64_t log2(Format f, uint64_t x, Round r) {
  sf::Unpacked u = sf::unpack(f, x);
  switch (u.cls) {
    case Class::NaN: return sf::canonical_nan(f);
    case Class::Inf: return u.sign ? sf::canonical_nan(f) : x;
    case Class::Zero: return sf::infinity(f, true);
    case Class::Finite: break;
  }
  if (u.sign) return sf::canonical_nan(f);
  Norm n = normalize(u.sig, u.exp);
  int E = n.e + 52;
  if (n.m == (uint64_t{1} << 52)) {  // power of two: exact
    ++stats().special;
    return sf::round_pack(f, E < 0, 0, static_cast<uint64_t>(E < 0 ? -E : E), false, r);
  }
  if (f.bits != 64) {
    double y = log2_fast(n.m, E);
    uint64_t out;
    if (round_fast(f, y, 16, r, &out)) {
      ++stats().fast;
      return out;
    }
  }
  DD y = log2_core(n.m, E);
  bool neg = y.hi < 0;
  return finish(f, neg, neg ? dd_neg(y) : y, 0, kQ, r);
}

// ==================================================================== sin
uint64_t sin(Format f, uint64_t x, Round r) {
  sf::Unpacked u = sf::unpack(f, x);
  switch (u.cls) {
    case Class::NaN:
    case Class::Inf: return sf::canonical_nan(f);
    case Class::Zero: return x;
    case Class::Finite: break;
  }
  Norm n = normalize(u.sig, u.exp);
  int top = n.e + 52;
  if (top < -(f.mbits / 2 + 2)) {  // |x| - ulp/4 < |sin x| < |x|: x^2/6 < 2^-(mbits+2)
    ++stats().special;
    return sf::round_pack(f, u.sign, n.e - 64, (u128(n.m) << 64) - 1, true, r);
  }
  int k = 0;
  Reduced red{};
  bool small = top < -5;  // |x| < 2^-5 < pi/64: no reduction
  if (!small) {
    red = reduce(n.m, n.e);
    k = red.k;
  }
  if (f.bits != 64) {
    double rd;
    if (small) {
      rd = make_double(n);
    } else {
      rd = double(uint64_t(red.g >> 64)) * pow2(red.ge + 64) * kPiOver32.hi;
      if (red.neg) rd = -rd;
    }
    double y = sin_fast(k, rd);
    if (u.sign) y = -y;
    uint64_t out;
    if (y != 0 && round_fast(f, y, 16, r, &out)) {
      ++stats().fast;
      return out;
    }
  }
  DD rr = small ? DD{make_double(n), 0.0} : reduced_dd(red);
  DD y = sin_core(k, rr);
  bool neg = (y.hi < 0) != u.sign;
  if (y.hi < 0) y = dd_neg(y);
  return finish(f, neg, y, 0, kQ, r);
}

// ==================================================================== pow
namespace {
uint64_t isqrt64(uint64_t v) {  // floor(sqrt(v)), v < 2^62
  uint64_t lo = 0, hi = uint64_t{1} << 31;
  while (lo < hi) {
    uint64_t mid = (lo + hi + 1) / 2;
    if (mid * mid <= v) lo = mid; else hi = mid - 1;
  }
  return lo;
}
}  // namespace

uint64_t pow(Format f, uint64_t x, uint64_t y, Round r) {
  sf::Unpacked a = sf::unpack(f, x), b = sf::unpack(f, y);
  if (b.cls == Class::Zero) return one(f, r);
  if (x == one(f, Round::NearestEven)) return one(f, r);
  if (a.cls == Class::NaN || b.cls == Class::NaN) return sf::canonical_nan(f);
  const uint64_t pzero = 0, pinf = sf::infinity(f, false);
  if (b.cls == Class::Inf) {
    if (a.cls == Class::Finite && a.exp == -f.mbits && a.sig == (uint64_t{1} << f.mbits)) return one(f, r);  // x = -1
    bool small = a.cls == Class::Zero || (a.cls == Class::Finite && (a.exp + 64 - __builtin_clzll(a.sig) - 1) < 0);
    return (small != b.sign) ? pzero : pinf;
  }
  // y finite nonzero: y = ny * 2^ey with ny odd.
  int tz = __builtin_ctzll(b.sig);
  uint64_t ny = b.sig >> tz;
  int ey = b.exp + tz;
  bool y_int = ey >= 0;
  bool y_odd = ey == 0;
  if (a.cls == Class::Zero) {
    bool s = a.sign && y_odd;
    if (b.sign) return sf::infinity(f, s);
    return s ? f.sign_bit() : 0;
  }
  if (a.cls == Class::Inf) {
    bool s = a.sign && y_odd;
    if (b.sign) return s ? f.sign_bit() : 0;
    return sf::infinity(f, s);
  }
  if (a.sign && !y_int) return sf::canonical_nan(f);
  bool sign = a.sign && y_odd;
  int tx = __builtin_ctzll(a.sig);
  uint64_t mx = a.sig >> tx;
  int ex = a.exp + tx;  // |x| = mx * 2^ex, mx odd
  // Exact cases: |x|^y is a dyadic rational exactly when (mx == 1 and ex*y is an integer) or
  // (y > 0, mx is a perfect 2^k-th power for y = ny/2^k, and 2^k divides ex).
  if (mx == 1) {
    if (y_int) {
      // t = ex * ny * 2^ey, negated for y < 0, clamped to +-1e6 (beyond that only its sign
      // matters). In 64 bits: ny is odd, so |t| >= |ex|, and the clamp is decided before
      // anything could overflow (no 128-bit type needed, as on 32-bit x86).
      constexpr int64_t kCap = 1000000;
      const uint64_t mag = static_cast<uint64_t>(ex < 0 ? -int64_t{ex} : int64_t{ex});
      int64_t t;
      if (mag == 0) t = 0;  // x = -1
      else if (ny > static_cast<uint64_t>(kCap) || mag > static_cast<uint64_t>(kCap) / ny || ey > 20) t = kCap;
      else t = std::min<int64_t>(kCap, static_cast<int64_t>((mag * ny) << ey));
      if ((ex < 0) != b.sign) t = -t;
      ++stats().special;
      return sf::round_pack(f, sign, static_cast<int32_t>(t), 1, false, r);
    }
    int k = -ey;
    if (k < 32 && (ex % (int64_t{1} << k)) == 0) {
      int64_t t = int64_t(ex / (int64_t{1} << k)) * int64_t(ny);
      if (b.sign) t = -t;
      if (t > 1000000) t = 1000000;
      if (t < -1000000) t = -1000000;
      ++stats().special;
      return sf::round_pack(f, sign, static_cast<int32_t>(t), 1, false, r);
    }
  } else if (!b.sign) {
    int k = y_int ? 0 : -ey;
    if (k <= 5 && (k == 0 || ex % (1 << k) == 0)) {
      uint64_t base = mx;
      bool ok = true;
      for (int i = 0; i < k && ok; ++i) {
        uint64_t s = isqrt64(base);
        if (s * s != base) ok = false;
        base = s;
      }
      // exponent n = y * 2^k (an integer); base^n must fit in 120 bits.
      uint64_t nexp = 0;
      if (ok) {
        if (y_int) {
          if (ey > 7 || (ny << ey) > 120) ok = false;
          else nexp = ny << ey;
        } else {
          nexp = ny;
          if (nexp > 120) ok = false;
        }
      }
      u128 p = 1;
      for (uint64_t i = 0; ok && i < nexp; ++i) {
        if (p > (u128{1} << 120) / base) ok = false;
        else p *= base;
      }
      if (ok) {
        int64_t pe = y_int ? int64_t(ex) * int64_t(nexp) : int64_t(ex / (1 << k)) * int64_t(ny);
        ++stats().special;
        return sf::round_pack(f, sign, static_cast<int32_t>(pe), p, false, r);
      }
    }
  }
  // General case: 2^(y log2|x|).
  Norm nx = normalize(a.sig, a.exp);
  if (f.bits != 64) {
    // Fast path. log2_fast is within 16 ulps (relative 2^-48), so t = y*l is within
    // |t| * 16.5 * 2^-52 of y*log2|x|, which exp2 turns into a relative error of at most
    // |t| * 16.5 * 2^-52 * ln2 (< 23|t| ulps of the result), on top of exp2_fast's 8 ulps.
    double yf = make_double(normalize(b.sig, b.exp));
    if (b.sign) yf = -yf;
    double l = log2_fast(nx.m, nx.e + 52);
    double t = yf * l;
    double at = t < 0 ? -t : t;
    if (at < 160) {
      int k;
      double v = exp2_fast(t, &k) * pow2(k);
      if (sign) v = -v;
      uint64_t out;
      if (round_fast(f, v, static_cast<unsigned>(24 * at) + 16, r, &out)) {
        ++stats().fast;
        return out;
      }
    }
  }
  DD l = log2_core(nx.m, nx.e + 52);
  Norm nyy = normalize(b.sig, b.exp);
  if (nyy.e + 52 < -1000) {  // |y log2 x| < 2^-989: 2^t is 1 +- tiny in every format
    ++stats().special;
    u128 s = u128{1} << 100;
    return sf::round_pack(f, sign, -100, ((l.hi < 0) != b.sign) ? s - 1 : s, true, r);
  }
  double yd = make_double(nyy);  // exact
  if (b.sign) yd = -yd;
  double tq = l.hi * yd;  // decides far over/underflow before Dekker's split could overflow
  if (tq > 0x1p20) return sf::round_pack(f, sign, f.bias() + 1, 1, false, r);
  if (tq < -0x1p20) return sf::round_pack(f, sign, f.emin_q() - 5, 4, true, r);
  DD t = dd_mul_d(l, yd);
  if (t.hi > f.bias() + 2) return sf::round_pack(f, sign, f.bias() + 1, 1, false, r);
  if (t.hi < f.emin_q() - 2) return sf::round_pack(f, sign, f.emin_q() - 5, 4, true, r);
  double at = t.hi < 0 ? -t.hi : t.hi;
  if (at < pow2(-(f.mbits + 4))) {
    ++stats().special;
    u128 s = u128{1} << 100;
    return sf::round_pack(f, sign, -100, t.hi < 0 ? s - 1 : s, true, r);
  }
  int k;
  DD v = exp2_core(t, &k);
  return finish(f, sign, v, k, kQPow, r);
}

}  // namespace maroon::math
