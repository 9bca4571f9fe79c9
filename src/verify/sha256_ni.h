// Internal to src/verify: SHA-256's compression function on the x86 SHA extensions (see
// sha256_ni.cpp), for Hasher.
#pragma once
#include <cstddef>
#include <cstdint>

namespace maroon::verify {

bool have_sha_ni();  // this CPU has SHA, SSSE3 and SSE4.1 (false off x86-64)
// Compresses `blocks` 64-byte blocks into `state` (FIPS 180-4's H0..H7). Only if have_sha_ni().
void sha256_ni_blocks(uint32_t state[8], const uint8_t* data, size_t blocks);

}  // namespace maroon::verify
