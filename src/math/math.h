// Maroon's own transcendental functions, shared by every backend (reference executor, SIMD
// kernels, later the GPU). Bits in, bits out: `x` holds a value of format `f` in its low bits,
// and the result is rounded in `r`. No libm. NaN results are the format's canonical quiet NaN.
//
// Each entry point documents its accuracy in docs/spec.md ("Transcendentals").
#pragma once
#include <cstdint>

#include "maroon/round.h"
#include "ref/softfloat.h"

namespace maroon::math {

uint64_t exp2(sf::Format f, uint64_t x, Round r);
uint64_t log2(sf::Format f, uint64_t x, Round r);
uint64_t sin(sf::Format f, uint64_t x, Round r);
// C99 pow's special cases; NaN for a negative base with a non-integer exponent.
uint64_t pow(sf::Format f, uint64_t x, uint64_t y, Round r);

}  // namespace maroon::math
