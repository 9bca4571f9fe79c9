// The MNIST models: tinygrad's state names, seeding, and training digests that thread count and
// backend cannot change, compared with digests stored in tests/mnist/digests.txt.
#include "maroon/models.h"

#include <cstring>

#include "maroon/backend.h"
#include "maroon/datasets.h"
#include "maroon/safetensors.h"
#include "synthetic.h"
#include "util.h"

using namespace maroon;
using namespace maroon::mnisttest;

namespace {

// `steps` Adam steps of `kind` on consecutive batches; the weights digest and the losses.
std::pair<std::string, std::vector<float>> train(const std::string& kind, int steps, int64_t batch,
                                                 const Synthetic& d) {
  auto model = models::make_model(kind, 7);
  models::TrainStep step(*model, 1e-3);
  std::vector<float> losses;
  int64_t n = static_cast<int64_t>(d.labels.size());
  for (int s = 0; s < steps; ++s) {
    int64_t at = (s * batch) % (n - batch + 1);
    models::StepResult r = step(models::images_to_input(&d.images[static_cast<size_t>(at * 784)], batch),
                                models::labels_to_tensor(&d.labels[static_cast<size_t>(at)], batch));
    EXPECT_GE(r.correct, 0);
    EXPECT_LE(r.correct, batch);
    losses.push_back(r.loss);
  }
  return {models::weights_digest(model->state_dict()), losses};
}

struct BackendGuard {
  Backend b = backend();
  int t = num_threads();
  ~BackendGuard() {
    set_backend(b);
    set_num_threads(t);
  }
};

}  // namespace

TEST(MnistModels, TinygradStateNames) {
  models::MnistMLP mlp(0);
  std::vector<std::string> names;
  for (auto& [k, t] : mlp.state_dict()) names.push_back(k + shape_str(t.shape()));
  EXPECT_EQ(names, (std::vector<std::string>{"l1.weight(512,784)", "l1.bias(512,)", "l2.weight(512,512)",
                                             "l2.bias(512,)", "l3.weight(10,512)", "l3.bias(10,)"}));
  models::MnistCNN cnn(0);
  names.clear();
  for (auto& [k, t] : cnn.state_dict()) names.push_back(k + shape_str(t.shape()));
  // tinygrad's get_state_dict(Model()) for examples/beautiful_mnist.py.
  EXPECT_EQ(names, (std::vector<std::string>{"layers.0.weight(32,1,5,5)",
                                             "layers.0.bias(32,)",
                                             "layers.2.weight(32,32,5,5)",
                                             "layers.2.bias(32,)",
                                             "layers.4.weight(32,)",
                                             "layers.4.bias(32,)",
                                             "layers.4.num_batches_tracked()",
                                             "layers.4.running_mean(32,)",
                                             "layers.4.running_var(32,)",
                                             "layers.6.weight(64,32,3,3)",
                                             "layers.6.bias(64,)",
                                             "layers.8.weight(64,64,3,3)",
                                             "layers.8.bias(64,)",
                                             "layers.10.weight(64,)",
                                             "layers.10.bias(64,)",
                                             "layers.10.num_batches_tracked()",
                                             "layers.10.running_mean(64,)",
                                             "layers.10.running_var(64,)",
                                             "layers.13.weight(10,576)",
                                             "layers.13.bias(10,)"}));
  // The optimizer trains weights and biases, not the running statistics.
  EXPECT_EQ(cnn.parameters().size(), 14u);
  EXPECT_THROW(models::make_model("resnet", 0), Error);
}

TEST(MnistModels, SeedDecidesTheWeights) {
  std::string a = models::weights_digest(models::MnistMLP(3).state_dict());
  EXPECT_EQ(a, models::weights_digest(models::MnistMLP(3).state_dict()));
  EXPECT_NE(a, models::weights_digest(models::MnistMLP(4).state_dict()));
  EXPECT_EQ(models::weights_digest(models::MnistCNN(3).state_dict()),
            models::weights_digest(models::MnistCNN(3).state_dict()));
}

TEST(MnistModels, Shapes) {
  Synthetic d(3);
  Tensor x = models::images_to_input(d.images.data(), 3);
  EXPECT_EQ(x.shape(), (Shape{3, 1, 28, 28}));
  EXPECT_EQ(x.dtype(), DType::Float32);
  // tinygrad's div: pixel * (1/255), each rounded once in float32.
  std::vector<float> xs = x.to_vector<float>();
  for (size_t i = 0; i < xs.size(); ++i) {
    float want = static_cast<float>(d.images[i]) * (1.0f / 255.0f);
    ASSERT_EQ(0, std::memcmp(&xs[i], &want, 4)) << i;
  }
  models::MnistMLP mlp(0);
  models::MnistCNN cnn(0);
  EXPECT_EQ(mlp(x).shape(), (Shape{3, 10}));
  EXPECT_EQ(cnn(x).shape(), (Shape{3, 10}));
  std::vector<uint8_t> pred = models::predict(mlp, d.images.data(), 3, 2);
  ASSERT_EQ(pred.size(), 3u);
  for (uint8_t p : pred) EXPECT_LT(p, 10);
}

// 40 MLP steps on synthetic data: the digest stored in digests.txt, on 1, 2 and 3 threads.
TEST(MnistModels, MlpTrainingDigestIsStoredAndThreadFree) {
  BackendGuard g;
  Synthetic d(512);
  std::vector<std::string> digests;
  std::vector<float> first;
  for (int t : {1, 2, 3}) {
    set_num_threads(t);
    auto [digest, losses] = train("mlp", 40, 64, d);
    digests.push_back(digest);
    if (first.empty()) first = losses;
    EXPECT_EQ(0, std::memcmp(first.data(), losses.data(), 4 * losses.size())) << t << " threads";
  }
  EXPECT_EQ(digests[0], stored_digest("synthetic_mlp_40_steps")) << "regenerate: see tests/mnist/digests.txt";
  EXPECT_EQ(digests[1], digests[0]);
  EXPECT_EQ(digests[2], digests[0]);
  // It learned: the last loss is well below the first (ln 10 = 2.30 at the start).
  EXPECT_LT(first.back(), first.front() / 2);
}

// Training bits are the reference executor's (a short MLP run; the reference is slow).
TEST(MnistModels, CpuBackendTrainsLikeTheReference) {
  BackendGuard g;
  Synthetic d(8);
  set_backend(Backend::Cpu);
  auto cpu = train("mlp", 2, 4, d);
  set_backend(Backend::Ref);
  auto ref = train("mlp", 2, 4, d);
  EXPECT_EQ(cpu.first, ref.first);
  EXPECT_EQ(0, std::memcmp(cpu.second.data(), ref.second.data(), 4 * cpu.second.size()));
}

// Two CNN steps (batch 8): the stored digest, on 1 and 2 threads.
TEST(MnistModels, CnnTrainingDigestIsStoredAndThreadFree) {
  BackendGuard g;
  Synthetic d(16);
  set_num_threads(1);
  auto one = train("cnn", 2, 8, d);
  set_num_threads(2);
  auto two = train("cnn", 2, 8, d);
  EXPECT_EQ(one.first, stored_digest("synthetic_cnn_2_steps")) << "regenerate: see tests/mnist/digests.txt";
  EXPECT_EQ(two.first, one.first);
}

// Weights saved as safetensors load into a model made from another seed and give its digest.
TEST(MnistModels, StateRoundTripsThroughSafetensors) {
  for (std::string kind : {"mlp", "cnn"}) {
    auto a = models::make_model(kind, 1), b = models::make_model(kind, 2);
    std::string digest = models::weights_digest(a->state_dict());
    ASSERT_NE(digest, models::weights_digest(b->state_dict()));
    nn::StateDict loaded = nn::safe_load_bytes(nn::safe_save_bytes(a->state_dict()));
    nn::load_state_dict(b->state_dict(), std::map<std::string, Tensor>(loaded.begin(), loaded.end()));
    EXPECT_EQ(models::weights_digest(b->state_dict()), digest) << kind;
  }
}
