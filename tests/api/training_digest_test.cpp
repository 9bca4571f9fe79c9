// The C++ side of the shared training digest: the same MLP, data and Adam steps as
// python/tests/test_training_digest.py, whose final weights must hash to the SHA-256 stored in
// tests/data/training_digest.txt, the file the Python test compares with too.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "maroon/maroon.h"
#include "maroon/sha256.h"

namespace maroon {
namespace {

std::string train(std::vector<double>* losses) {
  Tensor::manual_seed(42);
  nn::Linear l1(16, 32), l2(32, 4);
  optim::Adam opt(nn::get_parameters({&l1, &l2}), 0.01);
  Tensor xs = Tensor::rand({4, 32, 16}), ys = Tensor::randint({4, 32}, 0, 4);
  {
    TrainingScope training;
    for (int64_t step = 0; step < 8; ++step) {
      Tensor x = xs[step % 4], y = ys[step % 4];
      opt.zero_grad();
      Tensor loss = l2(l1(x).relu()).sparse_categorical_crossentropy(y);
      loss.backward();
      opt.step();
      losses->push_back(loss.item());
    }
  }
  Sha256 h;
  for (const Tensor& t : {l1.weight, *l1.bias, l2.weight, *l2.bias}) {
    std::vector<uint8_t> b = t.bytes();
    h.update(b.data(), b.size());
  }
  return h.finish_hex();
}

TEST(TrainingDigest, MlpAdamWeightsHashToTheDigestPythonChecksToo) {
  std::ifstream f(std::string(MAROON_SOURCE_DIR) + "/tests/data/training_digest.txt");
  ASSERT_TRUE(f) << "tests/data/training_digest.txt is missing";
  std::string stored;
  f >> stored;
  std::vector<double> losses;
  EXPECT_EQ(train(&losses), stored);
  ASSERT_EQ(losses.size(), 8u);
  EXPECT_LT(losses.back(), losses.front());
}

}  // namespace
}  // namespace maroon
