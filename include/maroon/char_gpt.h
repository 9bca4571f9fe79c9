// A character-level GPT: the C++ twin of examples/char_gpt.py (same layers, same order of
// random draws, same state names), so the example's digests can be checked from C++ (the
// determinism battery runs it under qemu, where Python cannot) and the two must agree bit for
// bit (tests/data/char_gpt_digest.txt holds the digests both are compared with).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "maroon/nn.h"
#include "maroon/tensor.h"
#include "maroon/transformer.h"

namespace maroon::models {

// The corpus: /usr/share/common-licenses/GPL-3 (Debian's base-files, on every Debian system),
// refused unless its SHA-256 is this one.
inline constexpr const char* kCharCorpusPath = "/usr/share/common-licenses/GPL-3";
inline constexpr const char* kCharCorpusSha256 = "3972dc9744f6499f0f9b2dbf76696f2ae7ad8af9b23dde66d6af86c9dfb36986";

struct Corpus {
  std::string vocab;         // the distinct bytes of the text, sorted
  std::vector<int32_t> ids;  // the text as indices into vocab
};
// Reads `path`, checks its SHA-256 against `sha256` (maroon::Error naming both on a mismatch).
Corpus load_corpus(const std::string& path, const std::string& sha256);

struct GptConfig {
  int64_t vocab_size = 0, block_size = 32, dim = 64, n_heads = 4, n_layers = 2;
  // false: GPT-2 (LayerNorm, GELU MLP, learned positions, biases); true: LLaMA-style (RMSNorm,
  // SiLU-gated MLP, rotary positions, no biases).
  bool llama = false;
};

// Token ids (B, T) int32, T <= block_size -> logits (B, T, vocab_size). State names as
// tinygrad's get_state_dict names the example's objects: "wte.weight", "h.0.attn.c_attn.weight".
class CharGPT : public nn::Module {
 public:
  explicit CharGPT(const GptConfig& c);
  Tensor operator()(const Tensor& tokens) const;
  nn::StateDict state_dict() const override;
  GptConfig cfg;

 private:
  struct Norm {
    std::optional<nn::LayerNorm> ln;
    std::optional<nn::RMSNorm> rms;
    Tensor operator()(const Tensor& x) const { return ln ? (*ln)(x) : (*rms)(x); }
    nn::StateDict state_dict() const { return ln ? ln->state_dict() : rms->state_dict(); }
  };
  struct Block {
    Norm ln_1, ln_2;
    std::vector<std::pair<std::string, nn::Linear>> attn, mlp;  // by name, in creation order
  };
  Norm norm() const;
  Tensor attention(const Block& b, const Tensor& x, const std::optional<Tensor>& freqs) const;
  Tensor feed_forward(const Block& b, const Tensor& x) const;
  nn::Embedding wte;
  std::optional<nn::Embedding> wpe;
  std::vector<Block> h;
  Norm ln_f;
  std::optional<nn::Linear> lm_head;  // made last: optional, so it draws after the blocks
};

struct CharTrainConfig {
  uint64_t seed = 1337;
  int64_t steps = 200, batch = 16;
  double lr = 3e-3;
  std::string prompt = "This License";
  int64_t sample_chars = 80;
};

struct CharRun {
  std::vector<float> losses;  // each step's mean cross-entropy, before its update
  std::string sample;         // the prompt and the sampled continuation
  // inference_digest: tensors_digest(kInferenceTag, {logits}) of the trained model (training
  // off) on the corpus' first block_size characters, as maroon.inference_digest computes it.
  std::string loss_digest, sample_digest, weights_digest, inference_digest;
};

// The run the tests and the determinism battery make, tests/data/char_gpt_digest.txt's
// (examples/char_gpt.py --tiny --steps 3 --batch 4 --sample 16 [--llama]).
inline GptConfig tiny_config(bool llama) {
  GptConfig g;
  g.block_size = 16, g.dim = 32, g.n_heads = 2, g.n_layers = 2, g.llama = llama;
  return g;
}
inline CharTrainConfig tiny_training(int64_t steps = 3) {
  CharTrainConfig t;
  t.steps = steps, t.batch = 4, t.sample_chars = 16;
  return t;
}

// Seeds the stream (Tensor::manual_seed), builds the model, trains `steps` Adam steps on
// windows whose starts Tensor::randint draws, then samples with softmax + multinomial, and
// digests the logits of the corpus' first window.
CharRun train_char_gpt(const Corpus& corpus, GptConfig model, const CharTrainConfig& train);

}  // namespace maroon::models
