// The character-level GPT of maroon/char_gpt.h. Every line mirrors examples/char_gpt.py: the
// layers are created in the same order (so they draw the same random numbers), the forward pass
// calls the same Tensor methods, and the training loop draws batches the same way.
#include "maroon/char_gpt.h"

#include <algorithm>
#include <cstring>

#include "io/files.h"
#include "maroon/digest.h"
#include "maroon/error.h"
#include "maroon/models.h"
#include "maroon/optim.h"
#include "maroon/sha256.h"

namespace maroon::models {

Corpus load_corpus(const std::string& path, const std::string& sha256) {
  std::string text = io::read_file(path, "char corpus");
  std::string got = sha256_hex(text);
  if (got != sha256)
    throw Error("[char corpus] " + path + " has SHA-256 " + got + ", expected " + sha256 +
                " (another version of the file: refusing it, the digests would not be comparable)");
  Corpus c;
  bool seen[256] = {};
  for (unsigned char ch : text) seen[ch] = true;
  int32_t index[256] = {};
  for (int b = 0; b < 256; ++b)
    if (seen[b]) {
      index[b] = static_cast<int32_t>(c.vocab.size());
      c.vocab.push_back(static_cast<char>(b));
    }
  c.ids.reserve(text.size());
  for (unsigned char ch : text) c.ids.push_back(index[ch]);
  return c;
}

CharGPT::Norm CharGPT::norm() const {
  Norm n;
  if (cfg.llama) n.rms.emplace(cfg.dim);
  else n.ln.emplace(Shape{cfg.dim});
  return n;
}

// Layers are created in the example's order (each draws from the random stream as it is made):
// wte, wpe, then per block ln_1, attn (c_attn, c_proj), ln_2, mlp, then ln_f and lm_head.
namespace {
const GptConfig& checked(const GptConfig& c) {
  if (c.vocab_size <= 0 || c.block_size <= 0 || c.dim <= 0 || c.n_heads <= 0 || c.dim % c.n_heads != 0 ||
      (c.llama && (c.dim / c.n_heads) % 2 != 0) || c.n_layers < 0)
    throw ShapeError("[CharGPT] bad configuration: vocab " + std::to_string(c.vocab_size) + ", block " +
                     std::to_string(c.block_size) + ", dim " + std::to_string(c.dim) + ", heads " +
                     std::to_string(c.n_heads) + ", layers " + std::to_string(c.n_layers));
  return c;
}
}  // namespace

CharGPT::CharGPT(const GptConfig& c) : cfg(checked(c)), wte(c.vocab_size, c.dim) {
  if (!c.llama) wpe.emplace(c.block_size, c.dim);
  const bool bias = !c.llama;
  const int64_t hidden = c.llama ? 8 * c.dim / 3 : 4 * c.dim;
  for (int64_t i = 0; i < c.n_layers; ++i) {
    Block b;
    b.ln_1 = norm();
    b.attn.emplace_back("c_attn", nn::Linear(c.dim, 3 * c.dim, bias));
    b.attn.emplace_back("c_proj", nn::Linear(c.dim, c.dim, bias));
    b.ln_2 = norm();
    if (c.llama) {
      b.mlp.emplace_back("w1", nn::Linear(c.dim, hidden, false));
      b.mlp.emplace_back("w2", nn::Linear(hidden, c.dim, false));
      b.mlp.emplace_back("w3", nn::Linear(c.dim, hidden, false));
    } else {
      b.mlp.emplace_back("c_fc", nn::Linear(c.dim, hidden, true));
      b.mlp.emplace_back("c_proj", nn::Linear(hidden, c.dim, true));
    }
    h.push_back(std::move(b));
  }
  ln_f = norm();
  lm_head.emplace(c.dim, c.vocab_size, false);
}

Tensor CharGPT::attention(const Block& b, const Tensor& x, const std::optional<Tensor>& freqs) const {
  const int64_t B = x.shape()[0], T = x.shape()[1], C = x.shape()[2], H = cfg.n_heads;
  std::vector<Tensor> qkv = b.attn[0].second(x).reshape({B, T, 3, H, C / H}).chunk(3, 2);
  for (Tensor& t : qkv) t = t.reshape({B, T, H, C / H}).transpose(1, 2);
  if (freqs) {
    qkv[0] = nn::apply_rope(qkv[0], *freqs);
    qkv[1] = nn::apply_rope(qkv[1], *freqs);
  }
  Tensor y = qkv[0].scaled_dot_product_attention(qkv[1], qkv[2], std::nullopt, 0.0, true);
  return b.attn[1].second(y.transpose(1, 2).reshape({B, T, C}));
}

Tensor CharGPT::feed_forward(const Block& b, const Tensor& x) const {
  if (cfg.llama) return b.mlp[1].second(b.mlp[0].second(x).silu() * b.mlp[2].second(x));
  return b.mlp[1].second(b.mlp[0].second(x).gelu());
}

Tensor CharGPT::operator()(const Tensor& tokens) const {
  if (tokens.ndim() != 2 || tokens.shape()[1] > cfg.block_size || tokens.shape()[1] == 0)
    throw ShapeError("[CharGPT] tokens must be (B, T) with 0 < T <= " + std::to_string(cfg.block_size) + ", got " +
                     shape_str(tokens.shape()));
  const int64_t T = tokens.shape()[1];
  Tensor x = wte(tokens);
  if (wpe) x = x + (*wpe)(Tensor::arange(T));
  std::optional<Tensor> freqs;
  if (cfg.llama) freqs = nn::precompute_freqs_cis(cfg.dim / cfg.n_heads, T);
  for (const Block& b : h) {
    Tensor a = x + attention(b, b.ln_1(x), freqs);
    x = a + feed_forward(b, b.ln_2(a));
  }
  return (*lm_head)(ln_f(x));
}

nn::StateDict CharGPT::state_dict() const {
  nn::StateDict sd;
  auto add = [&](const std::string& prefix, const nn::StateDict& part) {
    for (const auto& [k, t] : part) sd.push_back({prefix + k, t});
  };
  add("wte.", wte.state_dict());
  if (wpe) add("wpe.", wpe->state_dict());
  for (size_t i = 0; i < h.size(); ++i) {
    const std::string p = "h." + std::to_string(i) + ".";
    add(p + "ln_1.", h[i].ln_1.state_dict());
    for (const auto& [n, l] : h[i].attn) add(p + "attn." + n + ".", l.state_dict());
    add(p + "ln_2.", h[i].ln_2.state_dict());
    for (const auto& [n, l] : h[i].mlp) add(p + "mlp." + n + ".", l.state_dict());
  }
  add("ln_f.", ln_f.state_dict());
  add("lm_head.", lm_head->state_dict());
  return sd;
}

namespace {

// `batch` windows of block_size + 1 ids whose starts Tensor::randint draws: inputs and targets.
std::pair<Tensor, Tensor> draw_batch(const Corpus& c, int64_t batch, int64_t block) {
  const int64_t n = static_cast<int64_t>(c.ids.size());
  if (n < block + 2) throw ShapeError("[char_gpt] the corpus is shorter than one window");
  std::vector<double> starts = Tensor::randint({batch}, 0, n - block - 1).tolist();
  std::vector<int32_t> x, y;
  for (double s : starts) {
    const auto at = c.ids.begin() + static_cast<int64_t>(s);
    x.insert(x.end(), at, at + block);
    y.insert(y.end(), at + 1, at + block + 1);
  }
  return {Tensor::from_vector(x, {batch, block}), Tensor::from_vector(y, {batch, block})};
}

std::string sample(const CharGPT& model, const Corpus& c, const std::string& prompt, int64_t n) {
  std::vector<int32_t> ctx;
  for (char ch : prompt) {
    const size_t at = c.vocab.find(ch);
    if (at == std::string::npos) throw Error("[char_gpt] the prompt's character '" + std::string(1, ch) + "' is not in the corpus");
    ctx.push_back(static_cast<int32_t>(at));
  }
  std::string out = prompt;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t t = std::min<int64_t>(static_cast<int64_t>(ctx.size()), model.cfg.block_size);
    std::vector<int32_t> window(ctx.end() - t, ctx.end());
    Tensor logits = model(Tensor::from_vector(window, {1, t}))[{Index(0), Index(-1)}];
    const int64_t next = static_cast<int64_t>(logits.softmax().multinomial().item());
    ctx.push_back(static_cast<int32_t>(next));
    out.push_back(c.vocab.at(static_cast<size_t>(next)));
  }
  return out;
}

}  // namespace

CharRun train_char_gpt(const Corpus& corpus, GptConfig cfg, const CharTrainConfig& tc) {
  cfg.vocab_size = static_cast<int64_t>(corpus.vocab.size());
  Tensor::manual_seed(tc.seed);
  CharGPT model(cfg);
  optim::Adam opt(model.parameters(), tc.lr);
  CharRun run;
  {
    TrainingScope training;
    for (int64_t s = 0; s < tc.steps; ++s) {
      auto [x, y] = draw_batch(corpus, tc.batch, cfg.block_size);
      opt.zero_grad();
      Tensor loss = model(x).reshape({tc.batch * cfg.block_size, cfg.vocab_size})
                        .sparse_categorical_crossentropy(y.reshape({tc.batch * cfg.block_size}));
      loss.backward();
      opt.step();
      run.losses.push_back(loss.to_vector<float>().at(0));
    }
  }
  run.sample = sample(model, corpus, tc.prompt, tc.sample_chars);
  {
    TrainingScope eval(false);
    std::vector<int32_t> first(corpus.ids.begin(), corpus.ids.begin() + cfg.block_size);
    run.inference_digest = tensors_digest(kInferenceTag, {model(Tensor::from_vector(first, {1, cfg.block_size}))});
  }
  run.loss_digest = loss_trace_digest(run.losses);
  run.sample_digest = sha256_hex(run.sample);
  run.weights_digest = weights_digest(model.state_dict());
  return run;
}

}  // namespace maroon::models
