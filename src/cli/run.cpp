// The replayable training loop and the run record (see run.h).
#include "cli/run.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "data/json.h"
#include "io/files.h"
#include "maroon/sha256.h"
#include "maroon/shuffle.h"
#include "maroon/settings.h"

namespace maroon::cli {

namespace {

std::string hex32(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  char b[9];
  std::snprintf(b, sizeof b, "%08x", u);
  return b;
}

// One field per line, long arrays eight items to a line (nlohmann's pretty print would put each
// of the thousands of losses on its own line).
std::string layout(const nlohmann::ordered_json& record) {
  std::string s = "{";
  for (auto it = record.begin(); it != record.end(); ++it) {
    s += (it == record.begin() ? "\n  " : ",\n  ") + nlohmann::ordered_json(it.key()).dump() + ": ";
    const nlohmann::ordered_json& v = it.value();
    if (!v.is_array() || v.size() <= 8) {
      s += v.dump();
      continue;
    }
    s += "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i == 0 ? "\n    " : i % 8 ? ", " : ",\n    ") + v[i].dump();
    s += "\n  ]";
  }
  return s + "\n}\n";
}

// The record's "losses" numbers must say what its bits say: a record that says two things is
// malformed, whichever of them is true.
template <class Fail>
void check_loss_numbers(const json::Value& numbers, const std::vector<float>& losses, const Fail& fail) {
  if (numbers.items.size() != losses.size())
    throw fail("\"losses\" has " + std::to_string(numbers.items.size()) + " numbers, \"losses_f32_bits\" " +
               std::to_string(losses.size()));
  for (size_t i = 0; i < losses.size(); ++i) {
    const json::Value& n = numbers.items[i];
    double want = losses[i], got = 0;
    bool same = n.kind == json::Value::Kind::Null ? !std::isfinite(want)
                : n.kind == json::Value::Kind::Number
                    ? (got = std::strtod(n.str.c_str(), nullptr), std::memcmp(&got, &want, sizeof got) == 0)
                    : false;
    if (!same)
      throw fail("loss " + std::to_string(i + 1) + " is written " + (n.kind == json::Value::Kind::Number ? n.str : "as a non-number") +
                 " but its bits are " + hex32(losses[i]));
  }
}

}  // namespace

std::string data_dir(const std::string& dataset, const std::string& override) {
  if (!override.empty()) return override;
  std::string name = dataset == "fashion" ? "fashion-mnist" : "mnist";
  if (std::optional<std::string> env = setting(SettingId::MAROON_DATA_DIR)) return *env + "/" + name;
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
    order_ = data::epoch_order(static_cast<uint64_t>(cfg_.seed), static_cast<uint64_t>(epoch()),
                               static_cast<uint32_t>(train_.n));
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
  // Numbers are JSON numbers; each loss is also kept as its float32 bits (hex), which are what
  // verify compares. A double prints in the shortest form that reads back to the same double, so
  // any JSON reader recovers each loss exactly (a non-finite loss is null; its bits say which).
  nlohmann::ordered_json j;
  j["format"] = "maroon-run/2";
  j["dataset"] = r.cfg.dataset;
  j["model"] = r.cfg.model;
  j["epochs"] = r.cfg.epochs;
  j["batch"] = r.cfg.batch;
  j["seed"] = r.cfg.seed;
  j["max_steps"] = r.cfg.max_steps;
  j["checkpoint_every"] = r.cfg.checkpoint_every;
  j["lr"] = r.cfg.lr;
  j["lr_decay"] = r.cfg.lr_decay;
  j["data_sha256"] = r.data_sha256;
  j["weights_sha256"] = r.weights_sha256;
  j["loss_trace_sha256"] = r.loss_trace_sha256;
  j["threads"] = r.threads;
  j["train_seconds"] = std::round(r.train_seconds * 1000) / 1000;
  j["test_accuracy"] = r.test_accuracy.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(std::stod(r.test_accuracy));
  j["checkpoints"] = nlohmann::ordered_json::array();
  for (const Checkpoint& c : r.checkpoints) j["checkpoints"].push_back({c.step, c.weights_sha256});
  j["losses"] = nlohmann::ordered_json::array();
  j["losses_f32_bits"] = nlohmann::ordered_json::array();
  for (float l : r.losses) {
    j["losses"].push_back(std::isfinite(l) ? nlohmann::ordered_json(static_cast<double>(l)) : nlohmann::ordered_json());
    j["losses_f32_bits"].push_back(hex32(l));
  }
  io::write_file_atomic(path, layout(j), "[train] run record");
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
  // maroon-run/1 wrote lr and lr_decay as strings and no "losses" numbers; it is still read.
  const std::string format = str("format");
  const bool v1 = format == "maroon-run/1";
  if (!v1 && format != "maroon-run/2") throw fail("unknown format \"" + format + "\"");
  RunRecord r;
  r.cfg.dataset = str("dataset");
  r.cfg.model = str("model");
  r.cfg.epochs = num("epochs");
  r.cfg.batch = num("batch");
  r.cfg.seed = num("seed");
  r.cfg.max_steps = num("max_steps");
  r.cfg.checkpoint_every = num("checkpoint_every");
  auto real = [&](const char* k) {
    std::string s = field(k, v1 ? json::Value::Kind::String : json::Value::Kind::Number).str;
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
  if (!v1) check_loss_numbers(field("losses", json::Value::Kind::Array), r.losses, fail);
  return r;
}

}  // namespace maroon::cli
