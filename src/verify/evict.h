// Internal to src/verify: evicting bytes the background hasher has read from every cache (see
// evict.cpp), so that the training loop can write their memory again without asking another core.
#pragma once
#include <cstddef>
#include <cstdint>

namespace maroon::verify {

// Writes back and invalidates, in every core's caches, the cache lines holding [p, p + n)
// (CLFLUSHOPT, or CLFLUSH where the CPU lacks it; nothing off x86-64). The bytes never change.
void evict_from_caches(const uint8_t* p, size_t n);

}  // namespace maroon::verify
