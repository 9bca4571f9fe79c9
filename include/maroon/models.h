// MNIST models (an MLP and tinygrad's beautiful_mnist CNN), one Adam training step, and the
// digests that prove a run: the same seed and data give the same bits on every machine and
// thread count.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "maroon/nn.h"
#include "maroon/optim.h"
#include "maroon/tensor.h"

namespace maroon::models {

constexpr int64_t kImageSide = 28;
constexpr int64_t kClasses = 10;

// An MNIST classifier: float32 images (B,1,28,28) (see images_to_input) -> logits (B,10).
class MnistModel : public nn::Module {
 public:
  // Not const: BatchNorm updates its running statistics while Tensor::training() is on.
  virtual Tensor operator()(const Tensor& x) = 0;
  virtual std::string kind() const = 0;  // "mlp" or "cnn"
  // The layers whose running statistics a training forward updates (the data-parallel step
  // defers and orders those updates: maroon/dist.h).
  virtual std::vector<nn::BatchNorm*> batchnorms() { return {}; }
};

// 784-512-512-10 with ReLU; tinygrad's Linear init after Tensor::manual_seed(seed). State names
// as tinygrad's get_state_dict of an object with l1, l2, l3: "l1.weight", "l1.bias", ...
class MnistMLP : public MnistModel {
 public:
  explicit MnistMLP(uint64_t seed = 0);
  Tensor operator()(const Tensor& x) override;
  nn::StateDict state_dict() const override;
  std::string kind() const override { return "mlp"; }
  uint64_t seed;  // first member: the stream is seeded before the layers draw from it
  nn::Linear l1, l2, l3;
};

// tinygrad's examples/beautiful_mnist.py Model: conv 5x5 (32) relu, conv 5x5 (32) relu,
// batchnorm, maxpool, conv 3x3 (64) relu, conv 3x3 (64) relu, batchnorm, maxpool, flatten,
// linear 576->10. State names "layers.0.weight" ... "layers.13.bias" as tinygrad's.
class MnistCNN : public MnistModel {
 public:
  explicit MnistCNN(uint64_t seed = 0);
  Tensor operator()(const Tensor& x) override;
  nn::StateDict state_dict() const override;
  std::vector<Tensor> parameters() const override;  // batchnorm statistics are not trained
  std::string kind() const override { return "cnn"; }
  std::vector<nn::BatchNorm*> batchnorms() override { return {&bn4, &bn10}; }
  uint64_t seed;  // first member: the stream is seeded before the layers draw from it
  nn::Conv2d c0, c2;
  nn::BatchNorm bn4;
  nn::Conv2d c6, c8;
  nn::BatchNorm bn10;
  nn::Linear l13;
};

// "mlp" or "cnn"; throws maroon::Error for anything else.
std::unique_ptr<MnistModel> make_model(const std::string& kind, uint64_t seed);
// A model of the kind the state's names say (l1.* for mlp, layers.* for cnn), loaded from it.
// Throws maroon::Error naming `what` for a missing, extra or mis-shaped tensor.
std::unique_ptr<MnistModel> model_from_state(const nn::StateDict& state, const std::string& what);

// `n` images of 28x28 uint8 pixels (IDX order) -> float32 (n,1,28,28): cast, then / 255 with
// tinygrad's div (in the graph, so its bits are the engine's).
Tensor images_to_input(const uint8_t* pixels, int64_t n);
// `n` uint8 labels -> int32 (n,).
Tensor labels_to_tensor(const uint8_t* labels, int64_t n);

struct StepResult {
  float loss;       // the batch's mean sparse categorical cross-entropy, before the update
  int64_t correct;  // how many of the batch the model classified right, before the update
};

// One step of tinygrad's beautiful_mnist training loop: zero_grad, loss = sparse categorical
// cross-entropy of model(x) against y, backward, Adam step (training mode on).
class TrainStep {
 public:
  explicit TrainStep(MnistModel& model, double lr = 1e-3);
  StepResult operator()(const Tensor& x, const Tensor& y);
  optim::Adam& optimizer() { return opt_; }

 private:
  MnistModel& model_;
  optim::Adam opt_;
};

// One shard of a data-parallel step (maroon/dist.h, docs/dist.md): the sum (not the mean) of the
// shard's per-sample cross-entropy losses, which the step divides by the global batch size, and
// how many of the shard the model classified right. Training mode must be on.
struct ShardLoss {
  Tensor loss_sum, correct;
};
ShardLoss shard_loss(MnistModel& model, const Tensor& x, const Tensor& y);

// Predicted classes (argmax of the logits, first on ties) for `n` images, in batches of `batch`,
// with training off (BatchNorm uses its running statistics).
std::vector<uint8_t> predict(MnistModel& model, const uint8_t* pixels, int64_t n, int64_t batch = 1000);

// The weights digest: SHA-256 (lowercase hex) of safe_save_bytes(state_dict) without metadata,
// that is of the .safetensors file `maroon train` writes (sha256sum of it prints the same).
std::string weights_digest(const nn::StateDict& state);
// SHA-256 (lowercase hex) of the losses' float32 bits, 4 little-endian bytes each, in step order.
std::string loss_trace_digest(const std::vector<float>& losses);

}  // namespace maroon::models
