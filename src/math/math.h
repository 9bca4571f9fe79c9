// Maroon's own transcendental functions, shared by every backend (reference executor, SIMD
// kernels, later the GPU). Bits in, bits out: `x` holds a value of format `f` in its low bits,
// and the result is rounded in `r`. No libm. NaN results are the format's canonical quiet NaN.
//
// Each entry point documents its accuracy in docs/spec.md ("Transcendentals"); docs/math.md
// has the algorithms, error analysis and verification. In short: for binary16, bfloat16 and
// binary32 every result is the correctly rounded one in every rounding mode (pow: see
// docs/math.md); binary64 uses the same double-double evaluation (correctly rounded unless the
// exact value lies within 2^-90 of a rounding boundary; error < 0.5 + 2^-37 ulp).
//
// Callers must run these under the FPU's round-to-nearest mode without flush-to-zero (the
// library's default environment); the results never depend on anything else.
#pragma once
#include <cstdint>

#include "maroon/round.h"
#include "float/softfloat.h"

namespace maroon::math {

uint64_t exp2(sf::Format f, uint64_t x, Round r);
uint64_t log2(sf::Format f, uint64_t x, Round r);
uint64_t sin(sf::Format f, uint64_t x, Round r);
// C99 pow's special cases; NaN for a negative base with a non-integer exponent.
uint64_t pow(sf::Format f, uint64_t x, uint64_t y, Round r);

}  // namespace maroon::math
