// Conversions between the float formats and integers, each rounded once (float/round.h).
#include <cstring>

#include "float/softfloat.h"

namespace maroon::sf {

using namespace detail;

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

}  // namespace maroon::sf
