// One Adam step, prediction, and the digests of a run.
#include <cstring>

#include "maroon/models.h"
#include "maroon/safetensors.h"
#include "maroon/sha256.h"

namespace maroon::models {

TrainStep::TrainStep(MnistModel& model, double lr) : model_(model), opt_(model.parameters(), lr) {}

StepResult TrainStep::operator()(const Tensor& x, const Tensor& y) {
  TrainingScope training;
  opt_.zero_grad();
  // The logits handle stays alive, so the update's graph materializes them and the accuracy
  // below reads them instead of recomputing the forward pass.
  Tensor logits = model_(x);
  Tensor loss = logits.sparse_categorical_crossentropy(y);
  loss.backward();
  opt_.step();
  StepResult r;
  std::vector<float> l = loss.to_vector<float>();
  r.loss = l.at(0);
  r.correct = static_cast<int64_t>((logits.argmax(1) == y).sum().item());
  return r;
}

ShardLoss shard_loss(MnistModel& model, const Tensor& x, const Tensor& y) {
  Tensor logits = model(x);
  // Reduction::Sum is the mean's numerator: -(sum of the per-sample terms), the same nodes.
  return {logits.sparse_categorical_crossentropy(y, -1, 0.0, Reduction::Sum), (logits.argmax(1) == y).sum()};
}

std::vector<uint8_t> predict(MnistModel& model, const uint8_t* pixels, int64_t n, int64_t batch) {
  if (batch <= 0) throw ShapeError("[predict] batch must be positive, got " + std::to_string(batch));
  TrainingScope eval(false);
  std::vector<uint8_t> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i += batch) {
    int64_t b = std::min(batch, n - i);
    Tensor cls = model(images_to_input(pixels + i * kImageSide * kImageSide, b)).argmax(1).cast(DType::UInt8);
    for (uint8_t c : cls.to_vector<uint8_t>()) out.push_back(c);
  }
  return out;
}

std::string weights_digest(const nn::StateDict& state) { return sha256_hex(nn::safe_save_bytes(state)); }

std::string loss_trace_digest(const std::vector<float>& losses) {
  Sha256 h;
  for (float f : losses) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    uint8_t b[4] = {static_cast<uint8_t>(u), static_cast<uint8_t>(u >> 8), static_cast<uint8_t>(u >> 16),
                    static_cast<uint8_t>(u >> 24)};
    h.update(b, 4);
  }
  return h.finish_hex();
}

}  // namespace maroon::models
