// nn initialisation and optimizer updates against values produced by running tinygrad itself
// (tests/data/tinygrad/nn_optim_vectors.txt, made by tools/tinygrad/gen_nn_optim.py).
//
// Tolerances: layer init is c*rand + low, which tinygrad's CPU backend fuses into an FMA while
// Maroon rounds each op (see random_test.cpp): |diff| <= 2^-24 * (1 + |value|) covers it since
// every bound is <= 1. Optimizer trajectories: 4 float32 steps whose fused/unfused roundings
// differ: 1e-6 * (1 + |value|).
#include <fstream>
#include <map>
#include <sstream>

#include "util.h"

namespace maroon {
namespace {

std::map<std::string, std::vector<double>> load() {
  std::ifstream in(std::string(MAROON_SOURCE_DIR) + "/tests/data/tinygrad/nn_optim_vectors.txt");
  EXPECT_TRUE(in.good()) << "missing tests/data/tinygrad/nn_optim_vectors.txt";
  std::map<std::string, std::vector<double>> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    std::string name, tok;
    ss >> name;
    while (ss >> tok) out[name].push_back(std::strtod(tok.c_str(), nullptr));
  }
  return out;
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want, double rel, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], rel * (1 + std::fabs(want[i]))) << what << " element " << i;
}

TEST(TinygradNN, LayerInitialisation) {
  auto ref = load();
  Tensor::manual_seed(5);
  nn::Linear lin(3, 4);
  nn::Conv2d conv(2, 3, {3});
  nn::Embedding emb(5, 3);
  const double tol = std::ldexp(1.0, -24);
  expect_near(lin.weight.tolist(), ref["linear.weight"], tol, "linear.weight");
  expect_near(lin.bias->tolist(), ref["linear.bias"], tol, "linear.bias");
  expect_near(conv.weight.tolist(), ref["conv.weight"], tol, "conv.weight");
  expect_near(conv.bias->tolist(), ref["conv.bias"], tol, "conv.bias");
  expect_near(emb.weight.tolist(), ref["embedding.weight"], tol, "embedding.weight");
}

TEST(TinygradNN, OptimizerTrajectories) {
  auto ref = load();
  std::vector<double> p0, t, c;
  for (int i = 0; i < 12; ++i) {
    p0.push_back((i - 5.5) / 4);
    t.push_back(((i * 7) % 12 - 6) / 5.0);
    c.push_back(0.5 + (i % 3) / 2.0);
  }
  using Make = std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)>;
  std::vector<std::pair<std::string, Make>> cases = {
      {"sgd", [](auto ps) { return std::make_unique<optim::SGD>(ps, 0.05); }},
      {"sgd_momentum_wd", [](auto ps) { return std::make_unique<optim::SGD>(ps, 0.05, 0.9, 0.01); }},
      {"sgd_nesterov", [](auto ps) { return std::make_unique<optim::SGD>(ps, 0.05, 0.8, 0.0, true); }},
      {"lars", [](auto ps) { return std::make_unique<optim::LARS>(ps, 0.05); }},
      {"adam", [](auto ps) { return std::make_unique<optim::Adam>(ps, 0.01); }},
      {"adamw", [](auto ps) { return std::make_unique<optim::AdamW>(ps, 0.01, 0.9, 0.999, 1e-8, 0.1); }},
      {"lamb", [](auto ps) { return std::make_unique<optim::LAMB>(ps, 0.01, 0.9, 0.999, 1e-6, 0.01); }},
  };
  for (auto& [name, make] : cases) {
    Tensor p = apitest::f32(p0, {3, 4}), tt = apitest::f32(t, {3, 4}), cc = apitest::f32(c, {3, 4});
    auto opt = make({p});
    TrainingScope training;
    for (int s = 0; s < 4; ++s) {
      opt->zero_grad();
      (cc * (p - tt).square()).sum().backward();
      opt->step();
    }
    expect_near(p.tolist(), ref["optim." + name], 1e-6, name);
  }
}

}  // namespace
}  // namespace maroon
