// Rounding: the one place where an exact value becomes a float. Every operation of the soft-float
// core computes its exact result as an integer significand, an exponent and a sticky bit, then
// calls round_pack exactly once.
#pragma once
#include <cstdint>

#include "float/format.h"
#include "float/u128.h"
#include "maroon/round.h"

namespace maroon::sf {

using maroon::u128;  // unsigned __int128, or the portable U128 where there is none (32-bit x86)

// Rounds (-1)^sign * (sig + s) * 2^exp to format f, where s = 0 if !sticky and 0 < s < 1 if
// sticky. With sticky set, sig must have at least two bits more than the format keeps, so the
// rounding position lies above the bits that were dropped. sig == 0 (and !sticky) gives a zero
// with the given sign. Overflow follows IEEE 754: nearest gives inf, directed modes give inf or
// the largest finite value, depending on the direction.
uint64_t round_pack(Format f, bool sign, int32_t exp, u128 sig, bool sticky, Round r);

// Helpers of the exact arithmetic (float/arith.cpp, float/convert.cpp, float/round.cpp).
namespace detail {

inline int msb_index(u128 x) {  // index of the highest set bit; x != 0
  uint64_t hi = static_cast<uint64_t>(x >> 64);
  if (hi) return 127 - __builtin_clzll(hi);
  return 63 - __builtin_clzll(static_cast<uint64_t>(x));
}

// x >> n, and whether any one bit was shifted out.
inline u128 shift_right_sticky(u128 x, int n, bool* sticky) {
  if (n <= 0) { *sticky = false; return x; }
  if (n >= 128) { *sticky = x != 0; return 0; }
  *sticky = (x & ((u128{1} << n) - 1)) != 0;
  return x >> n;
}

inline uint64_t signed_zero(Format f, bool neg) { return neg ? f.sign_bit() : 0; }

}  // namespace detail
}  // namespace maroon::sf
