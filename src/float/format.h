// The four IEEE 754 binary formats Maroon computes in (binary16, bfloat16, binary32, binary64):
// their fields, special values, and the split of a value into class, sign, exponent and
// significand. Values travel as raw bits in a uint64_t (low `bits` bits used).
#pragma once
#include <cstdint>

#include "maroon/dtype.h"

namespace maroon::sf {

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

// Host helpers for tests and constants (exact; no rounding involved).
uint64_t bits_of(double d);
uint64_t bits_of(float f);
double double_of(uint64_t bits);
float float_of(uint64_t bits);

}  // namespace maroon::sf
