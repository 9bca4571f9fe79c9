// Five steps of `maroon train mnist --model mlp --batch 128 --seed 0 --lr 0.001` with every
// intermediate: the initial parameters, then per step the sample indices, the input, each
// layer's output, the logits, the loss, every gradient, the parameters and Adam's state after
// the update. Small tensors are stored; large ones are given by the SHA-256 of their raw bytes
// (little-endian, row-major), which hashlib over numpy's tobytes() reproduces.
#include <algorithm>

#include "maroon/datasets.h"
#include "maroon/models.h"
#include "maroon/sha256.h"
#include "maroon/shuffle.h"
#include "vectors.h"

namespace maroon::vectors {

namespace {

const std::string kFile = "mnist.safetensors";
constexpr uint64_t kSeed = 0;
constexpr int64_t kBatch = 128, kSteps = 5;
constexpr double kLr = 1e-3;

std::string raw_digest(const Tensor& t) {
  std::vector<uint8_t> b = t.bytes();
  return sha256_hex(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
}

// "name": "sha256" pairs, one per line, as the inside of a JSON object.
struct Digests {
  std::string json;
  void add(const std::string& name, const Tensor& t) { add_hex(name, raw_digest(t)); }
  void add_hex(const std::string& name, const std::string& hex) {
    json += std::string(json.empty() ? "" : ", ") + "\"" + name + "\": \"" + hex + "\"";
  }
};

}  // namespace

void add_mnist(Book& book, const std::string& dir) {
  data::Split train = data::load_split(dir + "/train-images-idx3-ubyte", dir + "/train-labels-idx1-ubyte");
  Sha256 data_hash;
  data_hash.update(train.images.data(), train.images.size());
  data_hash.update(train.labels.data(), train.labels.size());
  const std::string config = "\"model\": \"mlp\", \"seed\": 0, \"batch\": 128, \"lr\": 0.001, \"samples\": " +
                             std::to_string(train.n) + ", \"data_sha256\": \"" +
                             data_hash.finish_hex() + "\"";

  auto owned = models::make_model("mlp", kSeed);
  auto& m = static_cast<models::MnistMLP&>(*owned);
  // The same run through the library's own step (what `maroon train` calls): every step must
  // agree with the step written out here, or the vectors would describe something else.
  auto ref = models::make_model("mlp", kSeed);
  models::TrainStep ref_step(*ref, kLr);
  optim::Adam opt(m.parameters(), kLr);
  const nn::StateDict params = m.state_dict();

  Digests init;
  for (auto& [name, t] : params) init.add(name, t);
  init.add_hex("weights_sha256", models::weights_digest(params));
  book.add({"mnist/mlp/init", "MnistMLP", "float32", "nearest", "{" + config + ", \"digests\": {" + init.json + "}}",
            {}, {}});

  std::vector<uint32_t> order = data::epoch_order(kSeed, 0, static_cast<uint32_t>(train.n));
  std::vector<uint8_t> xb(kBatch * 784), yb(kBatch);
  for (int64_t s = 0; s < kSteps; ++s) {
    std::vector<uint32_t> idx(order.begin() + s * kBatch, order.begin() + (s + 1) * kBatch);
    for (int64_t k = 0; k < kBatch; ++k) {
      std::copy_n(&train.images[static_cast<size_t>(idx[k]) * 784], 784, &xb[static_cast<size_t>(k) * 784]);
      yb[static_cast<size_t>(k)] = train.labels[idx[k]];
    }
    Tensor x = models::images_to_input(xb.data(), kBatch), y = models::labels_to_tensor(yb.data(), kBatch);
    Digests d;
    d.add_hex("pixels", sha256_hex(std::string_view(reinterpret_cast<const char*>(xb.data()), xb.size())));
    d.add("labels", y);
    d.add("x", x);
    TrainingScope training;
    opt.zero_grad();
    Tensor h1 = m.l1(x.flatten(1)), a1 = h1.relu(), h2 = m.l2(a1), a2 = h2.relu(), logits = m.l3(a2);
    Tensor loss = logits.sparse_categorical_crossentropy(y);
    loss.backward();
    opt.step();
    models::StepResult r = ref_step(x, y);
    if (r.loss != loss.item() || models::weights_digest(ref->state_dict()) != models::weights_digest(params))
      throw Error("[vectors] the written-out MNIST step differs from models::TrainStep at step " + std::to_string(s + 1));
    for (auto [name, t] : {std::pair{"h1", h1}, {"a1", a1}, {"h2", h2}, {"a2", a2}, {"logits", logits}, {"loss", loss}})
      d.add(name, t);
    for (auto& [name, t] : params) d.add("grad/" + name, *t.grad());
    for (auto& [name, t] : params) d.add("param/" + name, t);
    for (size_t i = 0; i < params.size(); ++i) {
      d.add("adam.m/" + params[i].first, opt.m[i]);
      d.add("adam.v/" + params[i].first, opt.v[i]);
    }
    d.add("adam.b1_t", opt.b1_t);
    d.add("adam.b2_t", opt.b2_t);
    d.add_hex("weights_sha256", models::weights_digest(params));
    std::string id = "mnist/mlp/step" + std::to_string(s + 1);
    book.add({id, "train_step", "float32", "nearest",
              "{" + config + ", \"step\": " + std::to_string(s + 1) + ", \"digests\": {" + d.json + "}}", {},
              {book.input(kFile, id + "/indices", Tensor::from_vector(idx, {kBatch})),
               book.input(kFile, id + "/logits", logits), book.input(kFile, id + "/loss", loss)}});
  }
}

}  // namespace maroon::vectors
