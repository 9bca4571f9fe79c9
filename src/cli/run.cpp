// The replayable training loop and the run record (see run.h).
#include "cli/run.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include "data/json.h"
#include "io/files.h"
#include "maroon/sha256.h"

namespace maroon::cli {

namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A uniform integer in [0, bound) by rejection: no modulo bias, only integer arithmetic.
uint64_t below(uint64_t& state, uint64_t bound) {
  uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  uint64_t x;
  do x = splitmix64(state);
  while (x >= limit);
  return x % bound;
}

std::string hex32(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  char b[9];
  std::snprintf(b, sizeof b, "%08x", u);
  return b;
}

}  // namespace

std::string data_dir(const std::string& dataset, const std::string& override) {
  if (!override.empty()) return override;
  std::string name = dataset == "fashion" ? "fashion-mnist" : "mnist";
  if (const char* env = std::getenv("MAROON_DATA_DIR"); env && *env) return std::string(env) + "/" + name;
  return std::string(MAROON_SOURCE_DIR) + "/data/" + name;
}

std::string split_digest(const data::Split& s) {
  Sha256 h;
  h.update(s.images.data(), s.images.size());
  h.update(s.labels.data(), s.labels.size());
  return h.finish_hex();
}

Run::Run(const RunConfig& cfg, const data::Split& train) : cfg_(cfg), train_(train) {
  if (cfg.batch <= 0 || cfg.batch > train.n)
    throw Error("[train] batch " + std::to_string(cfg.batch) + " must be between 1 and the " + std::to_string(train.n) +
                " training samples");
  if (cfg.epochs <= 0) throw Error("[train] epochs must be positive, got " + std::to_string(cfg.epochs));
  if (cfg.checkpoint_every <= 0) throw Error("[train] checkpoint interval must be positive");
  if (!(cfg.lr > 0) || !(cfg.lr_decay > 0) || cfg.lr_decay > 1)
    throw Error("[train] lr must be positive and lr decay in (0, 1]");
  per_epoch_ = train.n / cfg.batch;
  total_ = per_epoch_ * cfg.epochs;
  if (cfg.max_steps > 0 && cfg.max_steps < total_) total_ = cfg.max_steps;
  model_ = models::make_model(cfg.model, static_cast<uint64_t>(cfg.seed));
  step_ = std::make_unique<models::TrainStep>(*model_, cfg.lr);
  xb_.resize(static_cast<size_t>(cfg.batch * 784));
  yb_.resize(static_cast<size_t>(cfg.batch));
}

models::StepResult Run::step() {
  int64_t in_epoch = done_ % per_epoch_;
  if (in_epoch == 0) {
    order_.resize(static_cast<size_t>(train_.n));
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<uint32_t>(i);
    uint64_t state = static_cast<uint64_t>(cfg_.seed) * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(epoch());
    for (size_t i = order_.size() - 1; i > 0; --i) std::swap(order_[i], order_[below(state, i + 1)]);
    double lr = cfg_.lr;
    for (int64_t e = 0; e < epoch(); ++e) lr *= cfg_.lr_decay;
    step_->optimizer().lr.assign(Tensor::full({1}, lr, DType::Float32));
  }
  for (int64_t k = 0; k < cfg_.batch; ++k) {
    uint32_t s = order_[static_cast<size_t>(in_epoch * cfg_.batch + k)];
    std::memcpy(&xb_[static_cast<size_t>(k * 784)], &train_.images[static_cast<size_t>(s) * 784], 784);
    yb_[static_cast<size_t>(k)] = train_.labels[s];
  }
  models::StepResult r =
      (*step_)(models::images_to_input(xb_.data(), cfg_.batch), models::labels_to_tensor(yb_.data(), cfg_.batch));
  ++done_;
  return r;
}

void write_record(const RunRecord& r, const std::string& path) {
  const std::string who = "[run record]";
  auto q = [&](const std::string& s) { return json::quote(s, who); };
  char lr[40], decay[40], secs[40];
  std::snprintf(lr, sizeof lr, "%.17g", r.cfg.lr);
  std::snprintf(decay, sizeof decay, "%.17g", r.cfg.lr_decay);
  std::snprintf(secs, sizeof secs, "%.3f", r.train_seconds);
  std::string j = "{\n";
  j += "  \"format\": \"maroon-run/1\",\n";
  j += "  \"dataset\": " + q(r.cfg.dataset) + ",\n  \"model\": " + q(r.cfg.model) + ",\n";
  j += "  \"epochs\": " + std::to_string(r.cfg.epochs) + ",\n  \"batch\": " + std::to_string(r.cfg.batch) +
       ",\n  \"seed\": " + std::to_string(r.cfg.seed) + ",\n  \"max_steps\": " + std::to_string(r.cfg.max_steps) +
       ",\n  \"checkpoint_every\": " + std::to_string(r.cfg.checkpoint_every) + ",\n";
  j += "  \"lr\": " + q(lr) + ",\n  \"lr_decay\": " + q(decay) + ",\n";
  j += "  \"data_sha256\": " + q(r.data_sha256) + ",\n";
  j += "  \"weights_sha256\": " + q(r.weights_sha256) + ",\n";
  j += "  \"loss_trace_sha256\": " + q(r.loss_trace_sha256) + ",\n";
  j += "  \"threads\": " + std::to_string(r.threads) + ",\n  \"train_seconds\": " + q(secs) + ",\n";
  j += "  \"test_accuracy\": " + q(r.test_accuracy) + ",\n";
  j += "  \"checkpoints\": [";
  for (size_t i = 0; i < r.checkpoints.size(); ++i)
    j += std::string(i ? "," : "") + "\n    [" + std::to_string(r.checkpoints[i].step) + ", " +
         q(r.checkpoints[i].weights_sha256) + "]";
  j += "\n  ],\n  \"losses_f32_bits\": [";
  for (size_t i = 0; i < r.losses.size(); ++i)
    j += std::string(i % 8 ? ", " : (i ? ",\n    " : "\n    ")) + q(hex32(r.losses[i]));
  j += "\n  ]\n}\n";
  io::write_file_atomic(path, j, "[train] run record");
}

RunRecord read_record(const std::string& path) {
  std::string s = io::read_file(path, "[verify] run record", uint64_t{64} << 20);
  const std::string who = "[verify] '" + path + "':";
  json::Value v = json::parse(s, who);
  auto fail = [&](const std::string& what) { return FormatError(who + " " + what); };
  if (v.kind != json::Value::Kind::Object) throw fail("not a JSON object");
  auto field = [&](const char* k, json::Value::Kind kind) -> const json::Value& {
    const json::Value* x = v.find(k);
    if (!x || x->kind != kind) throw fail(std::string("missing or mistyped field \"") + k + "\"");
    return *x;
  };
  auto str = [&](const char* k) { return field(k, json::Value::Kind::String).str; };
  auto num = [&](const char* k) {
    uint64_t u;
    if (!field(k, json::Value::Kind::Number).as_u64(u) || u > (uint64_t{1} << 62))
      throw fail(std::string("field \"") + k + "\" is not a non-negative integer");
    return static_cast<int64_t>(u);
  };
  auto is_sha = [](const std::string& h) {
    return h.size() == 64 && h.find_first_not_of("0123456789abcdef") == std::string::npos;
  };
  if (str("format") != "maroon-run/1") throw fail("unknown format \"" + str("format") + "\"");
  RunRecord r;
  r.cfg.dataset = str("dataset");
  r.cfg.model = str("model");
  r.cfg.epochs = num("epochs");
  r.cfg.batch = num("batch");
  r.cfg.seed = num("seed");
  r.cfg.max_steps = num("max_steps");
  r.cfg.checkpoint_every = num("checkpoint_every");
  auto real = [&](const char* k) {
    std::string s = str(k);
    char* end = nullptr;
    double x = std::strtod(s.c_str(), &end);
    if (s.empty() || *end) throw fail(std::string(k) + " \"" + s + "\" is not a number");
    return x;
  };
  r.cfg.lr = real("lr");
  r.cfg.lr_decay = real("lr_decay");
  r.data_sha256 = str("data_sha256");
  r.weights_sha256 = str("weights_sha256");
  r.loss_trace_sha256 = str("loss_trace_sha256");
  if (!is_sha(r.data_sha256) || !is_sha(r.weights_sha256) || !is_sha(r.loss_trace_sha256))
    throw fail("a sha256 field is not 64 lowercase hex digits");
  for (auto& c : field("checkpoints", json::Value::Kind::Array).items) {
    uint64_t step;
    if (c.kind != json::Value::Kind::Array || c.items.size() != 2 || !c.items[0].as_u64(step) ||
        c.items[1].kind != json::Value::Kind::String || !is_sha(c.items[1].str))
      throw fail("a checkpoint is not [step, \"sha256\"]");
    r.checkpoints.push_back({static_cast<int64_t>(step), c.items[1].str});
  }
  for (auto& l : field("losses_f32_bits", json::Value::Kind::Array).items) {
    if (l.kind != json::Value::Kind::String || l.str.size() != 8 ||
        l.str.find_first_not_of("0123456789abcdef") != std::string::npos)
      throw fail("a loss is not 8 lowercase hex digits");
    uint32_t u = static_cast<uint32_t>(std::strtoul(l.str.c_str(), nullptr, 16));
    float x;
    std::memcpy(&x, &u, 4);
    r.losses.push_back(x);
  }
  return r;
}

}  // namespace maroon::cli
