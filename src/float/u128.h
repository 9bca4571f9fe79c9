// A portable unsigned 128-bit integer for the exact arithmetic of the soft-float core, math and
// Lagoon. Where the compiler has unsigned __int128 (x86-64, AArch64, RISC-V 64) u128 is that
// type; elsewhere (32-bit x86) it is U128, two 64-bit halves with the same result for every
// operation, so every build computes the same bits (docs/spec.md). tests/core/u128_test.cpp
// checks U128 against the native type on every build that has both.
#pragma once
#include <compare>
#include <cstdint>
#include <type_traits>

namespace maroon {

struct U128 {
  uint64_t lo = 0, hi = 0;  // public and in this order: a structural type (usable as a template
                            // argument), with unsigned __int128's little-endian memory layout

  constexpr U128() = default;
  // From any integer, as converting it to unsigned __int128 would (negative values sign-extend).
  template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
  constexpr U128(T v) : lo(static_cast<uint64_t>(v)), hi(sign_fill(v)) {}
  // The high half of a sign-extended v. `v < 0` only for signed types: on bool (U128(bool),
  // e.g. `m += inc`) it is GCC's -Wbool-compare warning.
  template <class T>
  static constexpr uint64_t sign_fill(T v) {
    if constexpr (std::is_signed_v<T>) return v < 0 ? ~uint64_t{0} : 0;
    else return 0;
  }
  static constexpr U128 from_halves(uint64_t high, uint64_t low) {
    U128 r;
    r.hi = high;
    r.lo = low;
    return r;
  }
  // To a narrower integer: the low bits, as a cast of unsigned __int128 gives.
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  explicit constexpr operator T() const {
    return static_cast<T>(lo);
  }
  explicit constexpr operator bool() const { return (lo | hi) != 0; }

  friend constexpr bool operator==(U128 a, U128 b) { return a.lo == b.lo && a.hi == b.hi; }
  friend constexpr std::strong_ordering operator<=>(U128 a, U128 b) {
    return a.hi != b.hi ? a.hi <=> b.hi : a.lo <=> b.lo;
  }

  friend constexpr U128 operator+(U128 a, U128 b) {
    uint64_t lo = a.lo + b.lo;
    return from_halves(a.hi + b.hi + (lo < a.lo), lo);
  }
  friend constexpr U128 operator-(U128 a, U128 b) {
    return from_halves(a.hi - b.hi - (a.lo < b.lo), a.lo - b.lo);
  }
  friend constexpr U128 operator*(U128 a, U128 b) {
    U128 r = mul64(a.lo, b.lo);
    r.hi += a.hi * b.lo + a.lo * b.hi;  // the rest only reaches bits 128 and up
    return r;
  }
  friend constexpr U128 operator/(U128 a, U128 b) { return divmod(a, b, nullptr); }
  friend constexpr U128 operator%(U128 a, U128 b) {
    U128 r;
    divmod(a, b, &r);
    return r;
  }
  friend constexpr U128 operator&(U128 a, U128 b) { return from_halves(a.hi & b.hi, a.lo & b.lo); }
  friend constexpr U128 operator|(U128 a, U128 b) { return from_halves(a.hi | b.hi, a.lo | b.lo); }
  friend constexpr U128 operator^(U128 a, U128 b) { return from_halves(a.hi ^ b.hi, a.lo ^ b.lo); }
  constexpr U128 operator~() const { return from_halves(~hi, ~lo); }
  constexpr U128 operator-() const { return U128{} - *this; }
  // Shifts by 0..127 (as for the native type, larger counts are the caller's error).
  friend constexpr U128 operator<<(U128 a, int n) {
    if (n == 0) return a;
    if (n >= 64) return from_halves(a.lo << (n - 64), 0);
    return from_halves(a.hi << n | a.lo >> (64 - n), a.lo << n);
  }
  friend constexpr U128 operator>>(U128 a, int n) {
    if (n == 0) return a;
    if (n >= 64) return from_halves(0, a.hi >> (n - 64));
    return from_halves(a.hi >> n, a.lo >> n | a.hi << (64 - n));
  }
  constexpr U128& operator+=(U128 b) { return *this = *this + b; }
  constexpr U128& operator-=(U128 b) { return *this = *this - b; }
  constexpr U128& operator*=(U128 b) { return *this = *this * b; }
  constexpr U128& operator/=(U128 b) { return *this = *this / b; }
  constexpr U128& operator%=(U128 b) { return *this = *this % b; }
  constexpr U128& operator&=(U128 b) { return *this = *this & b; }
  constexpr U128& operator|=(U128 b) { return *this = *this | b; }
  constexpr U128& operator^=(U128 b) { return *this = *this ^ b; }
  constexpr U128& operator<<=(int n) { return *this = *this << n; }
  constexpr U128& operator>>=(int n) { return *this = *this >> n; }

  // The full product of two 64-bit numbers, from 32-bit halves (no wider type needed).
  static constexpr U128 mul64(uint64_t a, uint64_t b) {
    const uint64_t a0 = a & 0xffffffff, a1 = a >> 32, b0 = b & 0xffffffff, b1 = b >> 32;
    const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    const uint64_t mid = (p00 >> 32) + (p01 & 0xffffffff) + (p10 & 0xffffffff);
    return from_halves(p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32), (mid << 32) | (p00 & 0xffffffff));
  }
  // a / b, and a % b in *rem when given; b != 0. Restoring binary long division, one bit of the
  // quotient per step from a's highest set bit (a 64-bit division when both fit).
  static constexpr U128 divmod(U128 a, U128 b, U128* rem) {
    if (a < b) {
      if (rem) *rem = a;
      return U128{};
    }
    if (a.hi == 0 && b.hi == 0) {
      if (rem) *rem = U128(a.lo % b.lo);
      return U128(a.lo / b.lo);
    }
    U128 q, r;
    for (int i = a.hi ? 127 - __builtin_clzll(a.hi) : 63 - __builtin_clzll(a.lo); i >= 0; --i) {
      r = r << 1 | ((a >> i).lo & 1);
      if (r >= b) {
        r -= b;
        q |= U128(1) << i;
      }
    }
    if (rem) *rem = r;
    return q;
  }
};

#if defined(__SIZEOF_INT128__) && !defined(MAROON_PORTABLE_U128)
using u128 = unsigned __int128;
#else
using u128 = U128;
#endif

// The halves of a u128, whichever type it is.
constexpr uint64_t u128_hi(u128 x) { return static_cast<uint64_t>(x >> 64); }
constexpr uint64_t u128_lo(u128 x) { return static_cast<uint64_t>(x); }

}  // namespace maroon
