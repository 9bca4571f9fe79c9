// Internal to src/verify: SHA-256's compression function on the x86 SHA extensions (see
// sha256_ni.cpp), for Hasher.
#pragma once
#include <cstddef>
#include <cstdint>

namespace maroon::verify {

bool have_sha_ni();  // this CPU has SHA, SSSE3 and SSE4.1 (false off x86-64)
// Compresses `blocks` 64-byte blocks into `state` (FIPS 180-4's H0..H7). Only if have_sha_ni().
void sha256_ni_blocks(uint32_t state[8], const uint8_t* data, size_t blocks);
// Two independent messages, `blocks` blocks of each, in lockstep: the same two states as two
// sha256_ni_blocks calls. Why: one message's rounds are a chain of dependent sha256rnds2, each
// waiting for the last; a second chain fills the gaps (1.75 GB/s for one, 2.85 for two here).
void sha256_ni_blocks2(uint32_t a[8], const uint8_t* p, uint32_t b[8], const uint8_t* q, size_t blocks);

}  // namespace maroon::verify
