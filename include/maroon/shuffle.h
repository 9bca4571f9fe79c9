// The sample order of `maroon train` (docs/spec-model.md, "The data shuffle"): integer
// arithmetic only, so every machine visits the same samples in the same order.
#pragma once
#include <cstdint>
#include <vector>

namespace maroon::data {

// SplitMix64 (Steele, Lea and Flood 2014): adds 0x9E3779B97F4A7C15 to `state` and returns the
// mixed result.
uint64_t splitmix64(uint64_t& state);

// The order of epoch `epoch` of a run seeded `seed` over n samples: 0..n-1 shuffled by
// Fisher-Yates from the last index down, each swap partner drawn uniformly by rejection from
// SplitMix64 seeded with seed * 0x9E3779B97F4A7C15 + epoch (wrapping mod 2^64).
std::vector<uint32_t> epoch_order(uint64_t seed, uint64_t epoch, uint32_t n);

}  // namespace maroon::data
