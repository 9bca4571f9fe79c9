// The MNIST MLP and tinygrad's beautiful_mnist CNN.
#include <cstring>
#include <map>
#include <set>

#include "maroon/models.h"

namespace maroon::models {

namespace {
uint64_t seeded(uint64_t seed) {
  Tensor::manual_seed(seed);
  return seed;
}
}  // namespace

MnistMLP::MnistMLP(uint64_t s) : seed(seeded(s)), l1(784, 512), l2(512, 512), l3(512, 10) {}

Tensor MnistMLP::operator()(const Tensor& x) { return l3(l2(l1(x.flatten(1)).relu()).relu()); }

nn::StateDict MnistMLP::state_dict() const { return nn::get_state_dict({{"l1", &l1}, {"l2", &l2}, {"l3", &l3}}); }

// Layers in tinygrad's list order, which is also the order they draw from the random stream.
MnistCNN::MnistCNN(uint64_t s)
    : seed(seeded(s)),
      c0(1, 32, {5}),
      c2(32, 32, {5}),
      bn4(32),
      c6(32, 64, {3}),
      c8(64, 64, {3}),
      bn10(64),
      l13(576, 10) {}

Tensor MnistCNN::operator()(const Tensor& x) {
  Tensor h = c2(c0(x).relu()).relu();
  h = bn4(h).max_pool2d();
  h = c8(c6(h).relu()).relu();
  h = bn10(h).max_pool2d();
  return l13(h.flatten(1));
}

nn::StateDict MnistCNN::state_dict() const {
  return nn::get_state_dict({{"layers.0", &c0},
                             {"layers.2", &c2},
                             {"layers.4", &bn4},
                             {"layers.6", &c6},
                             {"layers.8", &c8},
                             {"layers.10", &bn10},
                             {"layers.13", &l13}});
}

std::vector<Tensor> MnistCNN::parameters() const { return nn::get_parameters({&c0, &c2, &bn4, &c6, &c8, &bn10, &l13}); }

std::unique_ptr<MnistModel> make_model(const std::string& kind, uint64_t seed) {
  if (kind == "mlp") return std::make_unique<MnistMLP>(seed);
  if (kind == "cnn") return std::make_unique<MnistCNN>(seed);
  throw Error("[make_model] unknown model '" + kind + "' (expected mlp or cnn)");
}

std::unique_ptr<MnistModel> model_from_state(const nn::StateDict& state, const std::string& what) {
  std::map<std::string, Tensor> by_name(state.begin(), state.end());
  std::string kind = by_name.count("l1.weight") ? "mlp" : by_name.count("layers.0.weight") ? "cnn" : "";
  if (kind.empty())
    throw Error(what + " holds neither the mlp (l1.weight ...) nor the cnn (layers.0.weight ...) tensors");
  auto model = make_model(kind, 0);
  nn::StateDict want = model->state_dict();
  std::set<std::string> names;
  for (auto& [k, t] : want) {
    names.insert(k);
    auto it = by_name.find(k);
    if (it == by_name.end()) throw Error(what + " lacks tensor '" + k + "' of the " + kind + " model");
    if (it->second.dtype() != t.dtype() || it->second.shape() != t.shape())
      throw Error(what + ": tensor '" + k + "' is " + std::string(dtype_name(it->second.dtype())) + " " +
                  shape_str(it->second.shape()) + ", the " + kind + " model needs " +
                  std::string(dtype_name(t.dtype())) + " " + shape_str(t.shape()));
  }
  for (auto& [k, t] : state)
    if (!names.count(k)) throw Error(what + " has tensor '" + k + "' that the " + kind + " model does not");
  nn::load_state_dict(want, by_name);
  return model;
}

Tensor images_to_input(const uint8_t* pixels, int64_t n) {
  return Tensor::from_bytes(pixels, static_cast<size_t>(n * kImageSide * kImageSide), {n, 1, kImageSide, kImageSide},
                            DType::UInt8)
      .cast(DType::Float32)
      .div(255);
}

Tensor labels_to_tensor(const uint8_t* labels, int64_t n) {
  return Tensor::from_bytes(labels, static_cast<size_t>(n), {n}, DType::UInt8).cast(DType::Int32);
}

}  // namespace maroon::models
