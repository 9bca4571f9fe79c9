// Integer-only IEEE 754 binary arithmetic for the four float formats, in all four rounding modes:
// the bottom layer of Maroon's numerics (src/float). src/math builds its transcendentals on it and
// src/ref, the reference executor, builds on both; nothing here includes anything above it.
//
// Why software: the reference executor is the oracle every fast path is compared to, so it must
// not depend on the FPU state a caller left behind (rounding mode, flush-to-zero), on x87 excess
// precision, or on the compiler contracting a*b+c. Every operation here computes the exact result
// (as an integer significand, an exponent and a sticky bit) and rounds it exactly once, in
// round_pack (float/round.h). Formats and their special values: float/format.h.
#pragma once
#include <cstdint>

#include "float/format.h"
#include "float/round.h"
#include "maroon/round.h"

namespace maroon::sf {

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

}  // namespace maroon::sf
