// The sample order of a training run (maroon/shuffle.h).
#include "maroon/shuffle.h"

#include <cstddef>
#include <cstdint>
#include <cstddef>
#include <utility>

namespace maroon::data {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

namespace {
// A uniform integer in [0, bound) by rejection: no modulo bias, only integer arithmetic.
uint64_t below(uint64_t& state, uint64_t bound) {
  uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  uint64_t x;
  do x = splitmix64(state);
  while (x >= limit);
  return x % bound;
}
}  // namespace

std::vector<uint32_t> epoch_order(uint64_t seed, uint64_t epoch, uint32_t n) {
  std::vector<uint32_t> order(n);
  for (uint32_t i = 0; i < n; ++i) order[i] = i;
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + epoch;
  for (std::size_t i = order.size(); i-- > 1;) std::swap(order[i], order[below(state, i + 1)]);
  return order;
}

}  // namespace maroon::data
