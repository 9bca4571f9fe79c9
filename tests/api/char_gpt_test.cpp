// The character GPT (maroon/char_gpt.h, the C++ twin of examples/char_gpt.py): a few training
// steps of both variants give the same loss bits, sample and weights under two SIMD targets and
// two thread counts, and the digests stored in tests/data/char_gpt_digest.txt, which
// python/tests/test_char_gpt.py compares the Python example with too. Plus the transformer
// pieces' exact values where they are exact, and the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "maroon/backend.h"
#include "maroon/char_gpt.h"
#include "maroon/maroon.h"

namespace maroon {
namespace {

using models::CharRun;

// The tests' run: the example's --tiny --steps 3 --batch 4 --sample 16.
CharRun tiny_run(const models::Corpus& c, bool llama) {
  return models::train_char_gpt(c, models::tiny_config(llama), models::tiny_training());
}

std::string line_of(const CharRun& r) {
  return r.loss_digest + " " + r.sample_digest + " " + r.weights_digest + " " + r.inference_digest;
}

// variant -> "loss sample weights inference" from the shared file.
std::map<std::string, std::string> stored() {
  std::ifstream f(std::string(MAROON_SOURCE_DIR) + "/tests/data/char_gpt_digest.txt");
  std::map<std::string, std::string> out;
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string name, a, b, c, d;
    in >> name >> a >> b >> c >> d;
    out[name] = a + " " + b + " " + c + " " + d;
  }
  return out;
}

TEST(CharGpt, SameBitsOnTwoSimdTargetsAndTwoThreadCountsAndAsStored) {
  const models::Corpus corpus = models::load_corpus(models::kCharCorpusPath, models::kCharCorpusSha256);
  const std::map<std::string, std::string> want = stored();
  const std::string saved_simd = simd_target();
  const int saved_threads = num_threads();
  const std::vector<std::string> targets = available_simd_targets();
  for (bool llama : {false, true}) {
    const std::string name = llama ? "llama" : "gpt2";
    ASSERT_TRUE(want.count(name)) << "tests/data/char_gpt_digest.txt has no line for " << name;
    for (const std::string& simd : {targets.front(), targets.back()})
      for (int threads : {1, 2}) {
        set_simd_target(simd);
        set_num_threads(threads);
        CharRun r = tiny_run(corpus, llama);
        EXPECT_EQ(line_of(r), want.at(name)) << name << " on " << simd << " with " << threads << " threads";
        EXPECT_LT(r.losses.back(), r.losses.front()) << name << ": three Adam steps lower the loss";
        EXPECT_EQ(r.sample.rfind("This License", 0), 0u);
        EXPECT_EQ(r.sample.size(), 12u + 16u);
      }
  }
  set_simd_target(saved_simd);
  set_num_threads(saved_threads);
}

TEST(CharGpt, RefusesACorpusWithAnotherDigest) {
  const std::string other(64, '0');
  try {
    models::load_corpus(models::kCharCorpusPath, other);
    FAIL() << "a corpus with another SHA-256 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(models::kCharCorpusSha256), std::string::npos) << e.what();
  }
  EXPECT_THROW(models::load_corpus("/nonexistent/corpus.txt", other), Error);
}

TEST(CharGpt, RefusesBadShapes) {
  models::GptConfig g;
  g.vocab_size = 10, g.dim = 30, g.n_heads = 4;
  EXPECT_THROW(models::CharGPT{g}, ShapeError);  // 30 is not a multiple of 4 heads
  g.dim = 32, g.block_size = 8;
  models::CharGPT m(g);
  EXPECT_THROW(m(Tensor::zeros({1, 9}, DType::Int32)), ShapeError);  // longer than block_size
  EXPECT_THROW(m(Tensor::zeros({9}, DType::Int32)), ShapeError);
  EXPECT_THROW(nn::apply_rope(Tensor::ones({2, 3}), nn::precompute_freqs_cis(4, 2)), ShapeError);  // d = 3 is odd
  EXPECT_THROW(nn::apply_rope(Tensor::ones({3, 4}), nn::precompute_freqs_cis(4, 2)), ShapeError);  // T > table
  EXPECT_THROW(nn::precompute_freqs_cis(3, 2), ShapeError);
  EXPECT_THROW(nn::RMSNorm(4)(Tensor::ones({2, 3})), ShapeError);
}

TEST(Transformer, RopeAtPositionZeroIsTheIdentityAndRotatesLaterOnes) {
  Tensor x = Tensor::from_vector<float>({1.5f, -2.0f, 3.0f, 0.25f, 1.0f, 0.0f, 0.0f, 1.0f}, {2, 4});
  std::vector<float> y = nn::apply_rope(x, nn::precompute_freqs_cis(4, 2)).to_vector<float>();
  EXPECT_EQ(std::vector<float>(y.begin(), y.begin() + 4), std::vector<float>({1.5f, -2.0f, 3.0f, 0.25f}));
  // Position 1, pair 0 turns by 1 radian: (1, 0) -> (cos 1, sin 1), cos as SIN(pi/2 - x).
  EXPECT_NEAR(y[4], 0.540302306f, 1e-7);
  EXPECT_EQ(y[6], 0.84147096f);  // SIN is correctly rounded: float32 sin(1)
  // Pair 1 turns by 1/100 radian: (0, 1) -> (-sin 0.01, cos 0.01).
  EXPECT_NEAR(y[5], -0.00999983f, 1e-7);
  EXPECT_NEAR(y[7], 0.99995f, 1e-6);
}

TEST(Transformer, RmsNormOfThreeFourDividesByTheRootOfTheirMeanSquare) {
  std::vector<float> y = nn::RMSNorm(2, 0.0)(Tensor::from_vector<float>({3, 4}, {1, 2})).to_vector<float>();
  // mean(9, 16) = 12.5, rsqrt rounds once for SQRT and once for RECIP, then each product once.
  const float r = 1.0f / std::sqrt(12.5f);
  EXPECT_EQ(y, std::vector<float>({3 * r, 4 * r}));
}

}  // namespace
}  // namespace maroon
