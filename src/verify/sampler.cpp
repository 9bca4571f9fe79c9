// The data order (EpochSampler): a Fisher-Yates shuffle per epoch driven by SplitMix64, integer
// arithmetic only, so every machine draws the same batches.
#include <string>

#include "maroon/verify.h"

namespace maroon::verify {

namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A uniform integer in [0, bound) by rejection: no modulo bias, only integer arithmetic.
uint64_t below(uint64_t& state, uint64_t bound) {
  uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  uint64_t x;
  do x = splitmix64(state);
  while (x >= limit);
  return x % bound;
}

}  // namespace

EpochSampler::EpochSampler(int64_t samples, int64_t batch, uint64_t seed)
    : samples_(samples), batch_(batch), per_epoch_(0), seed_(seed) {
  if (samples <= 0 || samples > int64_t{UINT32_MAX})
    throw Error("[EpochSampler] sample count must be in 1..2^32-1, got " + std::to_string(samples));
  if (batch <= 0 || batch > samples)
    throw Error("[EpochSampler] batch " + std::to_string(batch) + " must be between 1 and the " +
                std::to_string(samples) + " samples");
  per_epoch_ = samples / batch;
}

void EpochSampler::set_position(int64_t batches) {
  if (batches < 0) throw Error("[EpochSampler] negative position " + std::to_string(batches));
  position_ = batches;
}

std::vector<uint32_t> EpochSampler::next() {
  int64_t e = epoch(), in_epoch = position_ % per_epoch_;
  if (e != order_epoch_) {
    order_.resize(static_cast<size_t>(samples_));
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<uint32_t>(i);
    uint64_t state = seed_ * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(e);
    for (size_t i = order_.size() - 1; i > 0; --i) std::swap(order_[i], order_[below(state, i + 1)]);
    order_epoch_ = e;
  }
  auto first = order_.begin() + in_epoch * batch_;
  ++position_;
  return std::vector<uint32_t>(first, first + batch_);
}

}  // namespace maroon::verify
