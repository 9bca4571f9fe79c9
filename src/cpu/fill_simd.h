// One element repeated over a tile (copy_strided with stride 0: a per-channel leaf broadcast
// over a plane), compiled per SIMD target (fill_simd.cpp).
#pragma once
#include <cstdint>

namespace maroon::cpu {

// dst[i] = v for i < n. Bit copies: every target writes the same bits.
void fill_words(uint32_t v, uint32_t* dst, int n);
void fill_words(uint64_t v, uint64_t* dst, int n);

}  // namespace maroon::cpu
