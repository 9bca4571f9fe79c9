// Lagoon's scalar semantics per kind and width (lagoon.hoon ++fun-scalar, ++trans-scalar), as
// value types the arms are templated on. Bits in, bits out.
//
// Floats use the hardware in the rounding mode a RoundGuard has set: binary32 and binary64
// directly; binary16 through binary64, where +, -, x are exact and one rounding to binary16
// (sf::convert, in the mode) gives the correctly rounded result; division rounds twice, which is
// innocuous (53 >= 2*11 + 2 for nearest, and two directed roundings in one direction equal one);
// binary128 through the compiler's __float128, whose software routines (libgcc soft-fp) read
// the rounding mode from MXCSR. tests/lagoon checks every width against sf:: or MPFR.
//
// This file must be compiled with -frounding-math (the mode is dynamic) and -ffp-contract=off
// (a*b+c stays two roundings, as in Lagoon).
#pragma once
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>
#include <type_traits>

#include "lagoon/lagoon.hpp"
#include "maroon/round.h"
#include "float/softfloat.h"
#include "float/u128.h"

namespace maroon::lagoon {

using maroon::u128;  // unsigned __int128, or the portable U128 on 32-bit x86 (float/u128.h)

// Saves the caller's floating-point environment, sets IEEE defaults (no FTZ/DAZ, exceptions
// masked) and the requested rounding direction; restores the caller's on exit.
class RoundGuard {
 public:
  explicit RoundGuard(Round r) {
    std::fegetenv(&saved_);
    std::fesetenv(FE_DFL_ENV);
    std::fesetround(r == Round::NearestEven  ? FE_TONEAREST
                    : r == Round::TowardZero ? FE_TOWARDZERO
                    : r == Round::Up         ? FE_UPWARD
                                             : FE_DOWNWARD);
  }
  ~RoundGuard() { std::fesetenv(&saved_); }
  RoundGuard(const RoundGuard&) = delete;
  RoundGuard& operator=(const RoundGuard&) = delete;

 private:
  std::fenv_t saved_;
};

// ---- %i754 through a native type (binary32, binary64, binary128) ----
template <class T, class U, U kNaN>
struct HwFloat {
  static_assert(std::is_trivially_copyable_v<U>, "HwFloat copies its bits with memcpy");
  using Bits = U;
  static constexpr bool kFloat = true;
  Round rnd;
  static T f(U x) {
    T t;
    std::memcpy(&t, &x, sizeof t);
    return t;
  }
  // Every NaN an operation produces is Lagoon's canonical NaN (x86 would give 0xFFC00000).
  static U u(T t) {
    if (t != t) return kNaN;
    U x;
    // void*: where U is U128 (32-bit x86) GCC's -Wclass-memaccess objects to its default member
    // initializers; it is trivially copyable, so the copy is well-defined.
    std::memcpy(static_cast<void*>(&x), &t, sizeof x);
    return x;
  }
  U add(U a, U b) const { return u(f(a) + f(b)); }
  U sub(U a, U b) const { return u(f(a) - f(b)); }
  U mul(U a, U b) const { return u(f(a) * f(b)); }
  U div(U a, U b) const { return u(f(a) / f(b)); }
  bool gt(U a, U b) const { return f(a) > f(b); }
  bool ge(U a, U b) const { return f(a) >= f(b); }
  bool lt(U a, U b) const { return f(a) < f(b); }
  bool le(U a, U b) const { return f(a) <= f(b); }
  static bool finite(T t) { return t == t && t - t == t - t; }
  // Rounds to an integral value in the current mode (Hoon's ++toi then ++san: a zero is +0).
  static T round_int(T q) {
    T r;
    if constexpr (sizeof(T) == 16) {
      // |q| < 2^112: adding 2^112 rounds q to an integer in the current mode; the
      // subtraction is then exact. Larger values are already integers.
      const T big = T(uint64_t{1} << 56) * T(uint64_t{1} << 56);
      volatile T v = q;
      if (q >= big || q <= -big) r = q;
      else if (q >= 0) { volatile T s = v + big; r = s - big; }
      else { volatile T s = v - big; r = s + big; }
    } else {
      r = std::nearbyint(q);
    }
    return r == 0 ? T(0) : r;
  }
  // %mod after numerics #78: a - b*san(toi_rnd(a/b)), every step rounded in the mode; a
  // non-finite quotient crashes in Lagoon (need ~), an error here.
  U mod(U a, U b) const {
    T q = f(a) / f(b);
    if (!finite(q)) throw Error(kEDomain, "mod: the quotient a/b is not finite (Lagoon crashes)");
    T n = round_int(q);
    T p = f(b) * n;
    return u(f(a) - p);
  }
  // Lagoon's abs: ?:((gte b 0) b (mul b -1)): keeps -0, canonicalizes NaN.
  U abs(U a) const { return f(a) >= 0 ? a : u(f(a) * T(-1)); }
  U from_uint(uint64_t n) const { return u(T(n)); }  // ++sun, rounded in the mode
  static U one() { return u(T(1)); }
  static U zero() { return 0; }
};

using F32 = HwFloat<float, uint32_t, 0x7fc00000u>;
using F64 = HwFloat<double, uint64_t, 0x7ff8000000000000ull>;
#if defined(__x86_64__) || defined(__i386__)
#define MAROON_LAGOON_HAVE_F128 1
inline constexpr u128 kF128NaN = u128{0x7fff800000000000ull} << 64;
using F128 = HwFloat<__float128, u128, kF128NaN>;
#elif defined(__aarch64__) && __LDBL_MANT_DIG__ == 113
#define MAROON_LAGOON_HAVE_F128 1
inline constexpr u128 kF128NaN = u128{0x7fff800000000000ull} << 64;
using F128 = HwFloat<long double, u128, kF128NaN>;
#endif

// ---- %i754 binary16 through binary64 ----
struct F16 {
  using Bits = uint16_t;
  static constexpr bool kFloat = true;
  Round rnd;
  // binary16 -> double is exact: a table of all 65536 values, built once with sf::.
  static double d(uint16_t x) {
    static const std::vector<double> table = [] {
      std::vector<double> t(65536);
      for (uint32_t i = 0; i < 65536; ++i)
        t[i] = sf::double_of(sf::convert(sf::kF16, sf::kF64, i, Round::NearestEven));
      return t;
    }();
    return table[x];
  }
  // double -> binary16, rounded once in the current hardware mode (the RoundGuard's, which is
  // `rnd`): adding and subtracting C = 2^(k+52) (with x's sign) rounds x to a multiple of
  // 2^k, the binary16 ulp at x's exponent (2^-24 at least), in the hardware's mode; overflow
  // is then decided as IEEE 754 does for `rnd`.
  uint16_t h(double x) const {
    uint64_t b;
    std::memcpy(&b, &x, 8);
    const uint16_t sign = uint16_t((b >> 48) & 0x8000);
    const uint64_t mag = b & 0x7fffffffffffffffull;
    if (mag > 0x7ff0000000000000ull) return 0x7e00;  // NaN: canonical
    if (mag == 0x7ff0000000000000ull) return sign | 0x7c00;
    if (mag == 0) return sign;
    int e = int(mag >> 52) - 1023;  // floor(log2|x|) for normal doubles (binary16 values are)
    int k = e - 10 < -24 ? -24 : e - 10;
    double c;
    uint64_t cb = uint64_t(k + 52 + 1023) << 52 | (b & 0x8000000000000000ull);
    std::memcpy(&c, &cb, 8);
    volatile double t = x + c;
    double r = t - c;  // exact
    uint64_t rb;
    std::memcpy(&rb, &r, 8);
    rb &= 0x7fffffffffffffffull;
    if (rb > 0x40effc0000000000ull) {  // |r| > 65504: overflow
      bool away = rnd == Round::NearestEven || (rnd == Round::Up && !sign) || (rnd == Round::Down && sign);
      return sign | (away ? 0x7c00 : 0x7bff);
    }
    if (rb == 0) return sign;
    int re = int(rb >> 52) - 1023;
    if (re < -14) {  // subnormal: |r| = m * 2^-24
      double m = r < 0 ? -r : r;
      return sign | uint16_t(m * 16777216.0);
    }
    return sign | uint16_t((re + 15) << 10) | uint16_t((rb >> 42) & 0x3ff);
  }
  uint16_t add(uint16_t a, uint16_t b) const { return h(d(a) + d(b)); }
  uint16_t sub(uint16_t a, uint16_t b) const { return h(d(a) - d(b)); }
  uint16_t mul(uint16_t a, uint16_t b) const { return h(d(a) * d(b)); }
  uint16_t div(uint16_t a, uint16_t b) const { return h(d(a) / d(b)); }
  bool gt(uint16_t a, uint16_t b) const { return d(a) > d(b); }
  bool ge(uint16_t a, uint16_t b) const { return d(a) >= d(b); }
  bool lt(uint16_t a, uint16_t b) const { return d(a) < d(b); }
  bool le(uint16_t a, uint16_t b) const { return d(a) <= d(b); }
  uint16_t mod(uint16_t a, uint16_t b) const {
    double q = d(div(a, b));
    if (!(q == q && q - q == q - q))
      throw Error(kEDomain, "mod: the quotient a/b is not finite (Lagoon crashes)");
    double n = std::nearbyint(q);
    if (n == 0) n = 0;
    return sub(a, mul(b, h(n)));
  }
  uint16_t abs(uint16_t a) const { return d(a) >= 0 ? a : h(-d(a)); }
  uint16_t from_uint(uint64_t n) const { return h(static_cast<double>(n)); }  // exact for n < 2^53
  static uint16_t one() { return 0x3c00; }
  static uint16_t zero() { return 0; }
};

// ---- %uint: arithmetic modulo 2^w, crashes on /0; comparisons give 1/0 ----
template <class U>
struct UInt {
  using Bits = U;
  static constexpr bool kFloat = false;
  Round rnd;
  U add(U a, U b) const { return U(a + b); }
  U sub(U a, U b) const { return U(a - b); }
  U mul(U a, U b) const { return U(a * b); }
  U div(U a, U b) const {
    if (b == 0) throw Error(kEDomain, "div: division by zero (Lagoon crashes)");
    return U(a / b);
  }
  U mod(U a, U b) const {
    if (b == 0) throw Error(kEDomain, "mod: division by zero (Lagoon crashes)");
    return U(a % b);
  }
  bool gt(U a, U b) const { return a > b; }
  bool ge(U a, U b) const { return a >= b; }
  bool lt(U a, U b) const { return a < b; }
  bool le(U a, U b) const { return a <= b; }
  U abs(U a) const { return a; }
  U from_uint(uint64_t n) const { return U(n); }
  static U one() { return 1; }
  static U zero() { return 0; }
};

// ---- %int2: two's complement modulo 2^w, as /lib/twoc (division on magnitudes) ----
template <class U>
struct Int2 {
  using Bits = U;
  using S = std::make_signed_t<U>;
  static constexpr bool kFloat = false;
  Round rnd;
  static bool neg(U a) { return S(a) < 0; }
  static U mag(U a) { return neg(a) ? U(U(0) - a) : a; }  // twoc ++abs: MIN stays MIN
  U add(U a, U b) const { return U(a + b); }
  U sub(U a, U b) const { return U(a - b); }
  U mul(U a, U b) const { return U(a * b); }
  U div(U a, U b) const {
    if (b == 0) throw Error(kEDomain, "div: division by zero (Lagoon crashes)");
    U q = U(mag(a) / mag(b));
    return neg(a) == neg(b) ? q : U(U(0) - q);
  }
  U mod(U a, U b) const {
    if (b == 0) throw Error(kEDomain, "mod: division by zero (Lagoon crashes)");
    U r = U(mag(a) % mag(b));
    return neg(a) ? U(U(0) - r) : r;
  }
  bool gt(U a, U b) const { return S(a) > S(b); }
  bool ge(U a, U b) const { return S(a) >= S(b); }
  bool lt(U a, U b) const { return S(a) < S(b); }
  bool le(U a, U b) const { return S(a) <= S(b); }
  U abs(U a) const { return mag(a); }
  U from_uint(uint64_t n) const { return U(n); }
  static U one() { return 1; }
  static U zero() { return 0; }
};

// Calls fn(E{r}) with the element type of (kind, bloq); throws kEKind for unsupported ones.
template <class Fn>
decltype(auto) dispatch(Kind kind, int bloq, Round r, const char* arm, Fn&& fn) {
  switch (kind) {
    case Kind::I754:
      switch (bloq) {
        case 4: return fn(F16{r});
        case 5: return fn(F32{r});
        case 6: return fn(F64{r});
#ifdef MAROON_LAGOON_HAVE_F128
        case 7: return fn(F128{r});
#endif
        default: break;
      }
      break;
    case Kind::Uint:
      switch (bloq) {
        case 3: return fn(UInt<uint8_t>{r});
        case 4: return fn(UInt<uint16_t>{r});
        case 5: return fn(UInt<uint32_t>{r});
        case 6: return fn(UInt<uint64_t>{r});
        default: break;
      }
      break;
    case Kind::Int2:
      switch (bloq) {
        case 3: return fn(Int2<uint8_t>{r});
        case 4: return fn(Int2<uint16_t>{r});
        case 5: return fn(Int2<uint32_t>{r});
        case 6: return fn(Int2<uint64_t>{r});
        default: break;
      }
      break;
  }
  throw Error(kEKind, std::string(arm) + ": kind %" + kind_name(kind) + " at bloq " +
                          std::to_string(bloq) + " is not supported");
}

}  // namespace maroon::lagoon
