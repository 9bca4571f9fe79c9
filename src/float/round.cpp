#include "float/round.h"

#include <cassert>

namespace maroon::sf {

using namespace detail;

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
    guard = (upper & 1) != 0;
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

}  // namespace maroon::sf
