// The data order (EpochSampler): data::epoch_order's shuffle per epoch (integer arithmetic only,
// so every machine draws the same batches) and the position in it.
#include <string>

#include "maroon/shuffle.h"
#include "maroon/verify.h"

namespace maroon::verify {


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
    order_ = data::epoch_order(seed_, static_cast<uint64_t>(e), static_cast<uint32_t>(samples_));
    order_epoch_ = e;
  }
  auto first = order_.begin() + in_epoch * batch_;
  ++position_;
  return std::vector<uint32_t>(first, first + batch_);
}

}  // namespace maroon::verify
