// Helpers shared by the Lagoon layer's sources.
#pragma once
#include <string>
#include <vector>

#include "lagoon/lagoon.hpp"

namespace maroon::lagoon {

std::string shape_str(const std::vector<uint64_t>& s);  // Hoon style: ~[2 3]
std::string meta_str(const Meta& m);                    // [~[2 3] 5 %i754]
void need_bytes(const RayRef& a, const char* arm);      // rejects bloq < 3
Ray copy_ray(const RayRef& a);
std::vector<uint64_t> strides_of(const std::vector<uint64_t>& s);
std::vector<uint64_t> broadcast_shape(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b,
                                      const char* arm);

// binary16 through F16C + AVX (f16_simd.cpp): available on this CPU, and enabled (tests turn
// it off to check the portable path against the same references).
bool f16c_available();
bool f16_simd_enabled();
void set_f16_simd_enabled(bool on);
void f16_binary(int op, const uint8_t* a, const uint8_t* b, uint8_t* out, uint64_t n);
void f16_mmul(const uint8_t* a, const uint8_t* b, uint8_t* out, uint64_t M, uint64_t K, uint64_t P);

}  // namespace maroon::lagoon
