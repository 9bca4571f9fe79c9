// MNIST workloads: the MLP trained for N Adam steps and the CNN for M, each model's inference,
// on the real MNIST files when a data directory is given, else on synthetic digits drawn by
// integer code (the header line says which: both give fixed bits, but different ones).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>

#include "battery.h"

#if __has_include("maroon/models.h")
#include "maroon/datasets.h"
#include "maroon/models.h"

namespace maroon::determinism {
namespace {

constexpr int64_t kPixels = models::kImageSide * models::kImageSide;

struct Images {
  std::vector<uint8_t> train, train_labels, test;
  int64_t n_train = 0, n_test = 0;
};

// Enough images for the steps asked; real MNIST when `dir` is set.
Images load(const std::string& dir, int64_t n_train, int64_t n_test) {
  Images im;
  im.n_train = n_train;
  im.n_test = n_test;
  if (!dir.empty()) {
    data::Mnist m = data::load_mnist(dir);
    if (m.train.n < n_train || m.test.n < n_test) throw Error("[battery] not enough MNIST images in " + dir);
    im.train.assign(m.train.images.begin(), m.train.images.begin() + n_train * kPixels);
    im.train_labels.assign(m.train.labels.begin(), m.train.labels.begin() + n_train);
    im.test.assign(m.test.images.begin(), m.test.images.begin() + n_test * kPixels);
    return im;
  }
  // Synthetic: each label draws a bright bar at a label-dependent place over faint noise, so
  // the model has something to learn.
  Rng g(std::string("mnist/synthetic"));
  auto image = [&](uint8_t label, uint8_t* px) {
    for (int64_t i = 0; i < kPixels; ++i) px[i] = static_cast<uint8_t>(g.next() % 40);
    const int64_t row = 3 + 2 * label + static_cast<int64_t>(g.next() % 3);
    for (int64_t c = 4; c < 24; ++c) px[row * models::kImageSide + c] = static_cast<uint8_t>(200 + g.next() % 56);
  };
  im.train.resize(n_train * kPixels);
  im.test.resize(n_test * kPixels);
  for (int64_t i = 0; i < n_train; ++i) {
    im.train_labels.push_back(static_cast<uint8_t>(g.next() % 10));
    image(im.train_labels.back(), &im.train[i * kPixels]);
  }
  for (int64_t i = 0; i < n_test; ++i) image(static_cast<uint8_t>(g.next() % 10), &im.test[i * kPixels]);
  return im;
}

std::vector<uint8_t> le32(const std::vector<uint32_t>& v) {
  std::vector<uint8_t> out;
  for (uint32_t u : v)
    for (int s = 0; s < 32; s += 8) out.push_back(static_cast<uint8_t>(u >> s));
  return out;
}

// `steps` Adam steps of `kind` on consecutive batches; records the per-step loss bits and
// correct counts, then every state tensor (weights and BatchNorm statistics), and the
// library's weights digest (sha256 of the .safetensors bytes).
void train(Recorder& rec, const std::string& kind, const Images& im, int steps, int64_t batch) {
  const std::string cls = kind + ":train";
  std::unique_ptr<models::MnistModel> model = models::make_model(kind, 0);
  models::TrainStep step(*model, 1e-3);
  std::vector<uint32_t> trace;
  for (int s = 0; s < steps; ++s) {
    const int64_t first = s * batch;
    Tensor x = models::images_to_input(&im.train[first * kPixels], batch);
    Tensor y = models::labels_to_tensor(&im.train_labels[first], batch);
    models::StepResult r = step(x, y);
    uint32_t u;
    std::memcpy(&u, &r.loss, 4);
    trace.push_back(u);
    trace.push_back(static_cast<uint32_t>(r.correct));
  }
  rec.add_bytes(cls, kind + ".train.losses", le32(trace));
  for (const auto& [name, t] : model->state_dict()) rec.add(cls, kind + ".train.state", t);
  rec.note(kind + ".train.safetensors_sha256", models::weights_digest(model->state_dict()));
}

// Logits and predicted classes of a freshly initialised model (seed 7) on test images, training
// off: independent of the training workload, so a difference points at the forward pass.
void infer(Recorder& rec, const std::string& kind, const Images& im, int64_t n) {
  const std::string cls = kind + ":infer";
  std::unique_ptr<models::MnistModel> model = models::make_model(kind, 7);
  TrainingScope eval(false);
  Tensor logits = (*model)(models::images_to_input(im.test.data(), n));
  rec.add(cls, kind + ".infer.logits", logits);
  rec.add(cls, kind + ".infer.classes", logits.argmax(1));
}

}  // namespace

bool run_model_battery(Recorder& rec, const std::string& data_dir, int mlp_steps, int cnn_steps,
                       int cnn_batch, bool with_cnn) {
  constexpr int64_t kMlpBatch = 32, kMlpInfer = 256, kCnnInfer = 16;
  const int64_t need = std::max<int64_t>(mlp_steps * kMlpBatch, int64_t{cnn_steps} * cnn_batch);
  Images im = load(data_dir, need, std::max(kMlpInfer, kCnnInfer));
  std::printf("# data=%s mlp=%d steps x batch %lld, cnn=%s\n",
              data_dir.empty() ? "synthetic" : ("mnist:" + data_dir).c_str(), mlp_steps,
              static_cast<long long>(kMlpBatch),
              with_cnn ? (std::to_string(cnn_steps) + " steps x batch " + std::to_string(cnn_batch)).c_str()
                       : "skipped");
  std::fflush(stdout);
  train(rec, "mlp", im, mlp_steps, kMlpBatch);
  infer(rec, "mlp", im, kMlpInfer);
  if (with_cnn) {
    train(rec, "cnn", im, cnn_steps, cnn_batch);
    infer(rec, "cnn", im, kCnnInfer);
  }
  return true;
}

}  // namespace maroon::determinism

#else

namespace maroon::determinism {
bool run_model_battery(Recorder&, const std::string&, int, int, int, bool) { return false; }
}  // namespace maroon::determinism

#endif
