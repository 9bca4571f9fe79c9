// Synthetic digit-like data from SplitMix64 (integer arithmetic, the same everywhere), for the
// training tests that must not depend on MNIST being downloaded (tests/mnist, tests/dist).
#pragma once
#include <cstdint>
#include <vector>

namespace maroon::mnisttest {

struct Synthetic {
  std::vector<uint8_t> images, labels;
  explicit Synthetic(int64_t n, uint64_t seed = 1) {
    uint64_t s = seed;
    auto next = [&] {
      uint64_t z = (s += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      return z ^ (z >> 31);
    };
    for (int64_t i = 0; i < n; ++i) {
      uint8_t label = static_cast<uint8_t>(next() % 10);
      labels.push_back(label);
      // A bright band whose row depends on the label, over noise: learnable, not trivial.
      for (int p = 0; p < 784; ++p) {
        uint8_t noise = static_cast<uint8_t>(next() % 64);
        images.push_back(p / 28 / 3 == label ? static_cast<uint8_t>(192 + noise) : noise);
      }
    }
  }
};

}  // namespace maroon::mnisttest
