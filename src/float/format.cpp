#include "float/format.h"

#include <cassert>
#include <cstring>

namespace maroon::sf {

Format format_of(DType d) {
  switch (d) {
    case DType::Float16: return kF16;
    case DType::BFloat16: return kBF16;
    case DType::Float32: return kF32;
    case DType::Float64: return kF64;
    default: assert(false && "format_of: not a concrete float dtype"); return kF32;
  }
}

Unpacked unpack(Format f, uint64_t bits) {
  bool sign = (bits >> (f.bits - 1)) & 1;
  uint64_t e = (bits >> f.mbits) & f.exp_mask();
  uint64_t m = bits & f.man_mask();
  if (e == f.exp_mask()) return {m ? Class::NaN : Class::Inf, sign, 0, 0};
  if (e == 0) {
    if (m == 0) return {Class::Zero, sign, 0, 0};
    return {Class::Finite, sign, f.emin_q(), m};
  }
  return {Class::Finite, sign, static_cast<int32_t>(e) - f.bias() - f.mbits,
          m | (uint64_t{1} << f.mbits)};
}

bool is_nan(Format f, uint64_t bits) { return unpack(f, bits).cls == Class::NaN; }

uint64_t bits_of(double d) { uint64_t u; std::memcpy(&u, &d, 8); return u; }
uint64_t bits_of(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
double double_of(uint64_t bits) { double d; std::memcpy(&d, &bits, 8); return d; }
float float_of(uint64_t bits) { uint32_t u = static_cast<uint32_t>(bits); float f; std::memcpy(&f, &u, 4); return f; }

}  // namespace maroon::sf
