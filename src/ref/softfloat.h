// Integer-only IEEE 754 binary arithmetic for the four float formats, in all four rounding modes.
//
// Why software: the reference executor is the oracle every fast path is compared to, so it must
// not depend on the FPU state a caller left behind (rounding mode, flush-to-zero), on x87 excess
// precision, or on the compiler contracting a*b+c. Every operation here computes the exact result
// (as an integer significand, an exponent and a sticky bit) and rounds it exactly once, in
// round_pack. Values travel as raw bits in a uint64_t (low `bits` bits used).
#pragma once
#include <cstdint>

#include "maroon/dtype.h"
#include "maroon/round.h"

namespace maroon::sf {

using u128 = unsigned __int128;

struct Format {
  int bits;   // storage width
  int ebits;  // exponent field width
  int mbits;  // stored mantissa bits (precision - 1)
  constexpr int bias() const { return (1 << (ebits - 1)) - 1; }
  constexpr uint64_t sign_bit() const { return uint64_t{1} << (bits - 1); }
  constexpr uint64_t exp_mask() const { return (uint64_t{1} << ebits) - 1; }
  constexpr uint64_t man_mask() const { return (uint64_t{1} << mbits) - 1; }
  // Exponent of the lsb of subnormals and of the smallest normal: value = m * 2^emin_q.
  constexpr int emin_q() const { return 1 - bias() - mbits; }
  // Exponent of the lsb of the largest binade.
  constexpr int emax_q() const { return bias() - mbits; }
};

inline constexpr Format kF16{16, 5, 10};
inline constexpr Format kBF16{16, 8, 7};
inline constexpr Format kF32{32, 8, 23};
inline constexpr Format kF64{64, 11, 52};

// The format of a float dtype (asserts is_float(d) and not weak).
Format format_of(DType d);

// The canonical quiet NaN: sign 0, exponent all ones, only the top mantissa bit set.
constexpr uint64_t canonical_nan(Format f) {
  return (f.exp_mask() << f.mbits) | (uint64_t{1} << (f.mbits - 1));
}
constexpr uint64_t infinity(Format f, bool neg) {
  return (neg ? f.sign_bit() : 0) | (f.exp_mask() << f.mbits);
}
constexpr uint64_t max_finite(Format f, bool neg) {
  return (neg ? f.sign_bit() : 0) | ((f.exp_mask() - 1) << f.mbits) | f.man_mask();
}

enum class Class { Zero, Finite, Inf, NaN };

// value = (-1)^sign * sig * 2^exp for Finite (sig != 0); sign is meaningful for Zero and Inf.
struct Unpacked {
  Class cls;
  bool sign;
  int32_t exp;
  uint64_t sig;
};

Unpacked unpack(Format f, uint64_t bits);
bool is_nan(Format f, uint64_t bits);

// Rounds (-1)^sign * (sig + s) * 2^exp to format f, where s = 0 if !sticky and 0 < s < 1 if
// sticky. With sticky set, sig must have at least two bits more than the format keeps, so the
// rounding position lies above the bits that were dropped. sig == 0 (and !sticky) gives a zero
// with the given sign. Overflow follows IEEE 754: nearest gives inf, directed modes give inf or
// the largest finite value, depending on the direction.
uint64_t round_pack(Format f, bool sign, int32_t exp, u128 sig, bool sticky, Round r);

uint64_t add(Format f, uint64_t a, uint64_t b, Round r);
uint64_t mul(Format f, uint64_t a, uint64_t b, Round r);
uint64_t div(Format f, uint64_t a, uint64_t b, Round r);
uint64_t fma(Format f, uint64_t a, uint64_t b, uint64_t c, Round r);  // a*b+c, one rounding
uint64_t recip(Format f, uint64_t a, Round r);
uint64_t sqrt(Format f, uint64_t a, Round r);
uint64_t trunc(Format f, uint64_t a);  // toward zero; exact, so no rounding mode
// IEEE 754-2019 maximum: NaN if either is NaN, and -0 < +0.
uint64_t max(Format f, uint64_t a, uint64_t b);
uint64_t neg(Format f, uint64_t a);  // flips the sign bit (NaN in, canonical NaN out)

// IEEE comparisons: false with NaN (so ne is true with NaN); -0 == +0.
bool lt(Format f, uint64_t a, uint64_t b);
bool eq(Format f, uint64_t a, uint64_t b);

// Conversions. Float to float rounds once in r; NaN becomes the target's canonical NaN.
uint64_t convert(Format from, Format to, uint64_t bits, Round r);
uint64_t from_int(Format f, int64_t v, Round r);
uint64_t from_uint(Format f, uint64_t v, Round r);
// Float to an integer of `width` bits: truncates toward zero, saturates out-of-range values
// (and +-inf) to the type's minimum or maximum, and maps NaN to 0. Returns the two's-complement
// bits in the low `width` bits.
uint64_t to_int(Format f, uint64_t bits, int width, bool is_signed);

// Host helpers for tests and constants (exact; no rounding involved).
uint64_t bits_of(double d);
uint64_t bits_of(float f);
double double_of(uint64_t bits);
float float_of(uint64_t bits);

}  // namespace maroon::sf
