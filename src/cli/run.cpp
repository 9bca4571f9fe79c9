// The MNIST job and its program (see run.h).
#include "cli/run.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>

#include "maroon/settings.h"

#include "cli/commands.h"

namespace maroon::cli {

std::string data_dir(const std::string& dataset, const std::string& override) {
  if (!override.empty()) return override;
  std::string name = dataset == "fashion" ? "fashion-mnist" : "mnist";
  if (std::optional<std::string> env = setting(SettingId::MAROON_DATA_DIR)) return *env + "/" + name;
  return std::string(MAROON_SOURCE_DIR) + "/data/" + name;
}

namespace {

int64_t steps_of(const RunConfig& cfg, const data::Split& train) {
  if (cfg.batch <= 0 || cfg.batch > train.n)
    throw Error("[train] batch " + std::to_string(cfg.batch) + " must be between 1 and the " + std::to_string(train.n) +
                " training samples");
  if (cfg.epochs <= 0) throw Error("[train] epochs must be positive, got " + std::to_string(cfg.epochs));
  if (!(cfg.lr > 0) || !(cfg.lr_decay > 0) || cfg.lr_decay > 1)
    throw Error("[train] lr must be positive and lr decay in (0, 1]");
  if (cfg.shards <= 0 || cfg.shards > cfg.batch)
    throw Error("[train] shards " + std::to_string(cfg.shards) + " must be between 1 and the batch size " +
                std::to_string(cfg.batch));
  int64_t total = 0;
  if (__builtin_mul_overflow(train.n / cfg.batch, cfg.epochs, &total))
    throw Error("[train] " + std::to_string(cfg.epochs) + " epochs of " + std::to_string(train.n / cfg.batch) +
                " steps is more steps than fit in 64 bits");
  return cfg.max_steps > 0 && cfg.max_steps < total ? cfg.max_steps : total;
}

std::string num(double x) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", x);
  return b;
}

}  // namespace

MnistProgram::MnistProgram(const RunConfig& cfg, const data::Split& train, const std::string& perturbation,
                           dist::Comm* comm, double timeout_s)
    : cfg_(cfg),
      train_(train),
      total_(steps_of(cfg, train)),
      model_(models::make_model(cfg.model, static_cast<uint64_t>(cfg.seed))),
      step_(std::make_unique<models::TrainStep>(*model_, cfg.lr)),
      sampler_(train.n, cfg.batch, static_cast<uint64_t>(cfg.seed)),
      xb_(static_cast<size_t>(cfg.batch * 784)),
      yb_(static_cast<size_t>(cfg.batch)) {
  if (cfg.shards > 1 || (comm && comm->size() > 1))
    dp_ = std::make_unique<dist::DataParallel>(step_->optimizer(), cfg.shards, comm ? *comm : self_,
                                               model_->batchnorms(), timeout_s);
  if (perturbation.empty()) return;
  char tensor[128];
  long long s, e;
  int b, used = 0;
  if (std::sscanf(perturbation.c_str(), "%lld:%127[^:]:%lld:%d%n", &s, tensor, &e, &b, &used) != 4 ||
      used != static_cast<int>(perturbation.size()) || s < 1)
    throw Error("--perturb needs STEP:TENSOR:ELEMENT:BIT (e.g. 700:l2.weight:123:30), got '" + perturbation + "'");
  perturb_step_ = s, perturb_tensor_ = tensor, perturb_element_ = e, perturb_bit_ = b;
  bool found = false;
  for (auto& [k, t] : model_->state_dict()) found = found || k == perturb_tensor_;
  if (!found) throw Error("--perturb: the " + cfg.model + " model has no tensor '" + perturb_tensor_ + "'");
}

models::StepResult MnistProgram::step(int64_t k) {
  const FusedScope products(cfg_.fused);  // the graphs built below (and captured by TinyJit)
  if (sampler_.position() != k - 1)
    throw Error("[train] internal: step " + std::to_string(k) + " after " + std::to_string(sampler_.position()));
  if ((k - 1) % steps_per_epoch() == 0) {
    double lr = cfg_.lr;
    for (int64_t e = 0; e < sampler_.epoch(); ++e) lr *= cfg_.lr_decay;
    step_->optimizer().lr.assign(Tensor::full({1}, lr, DType::Float32));
  }
  std::vector<uint32_t> order = sampler_.next();
  for (size_t i = 0; i < order.size(); ++i) {
    std::memcpy(&xb_[i * 784], &train_.images[static_cast<size_t>(order[i]) * 784], 784);
    yb_[i] = train_.labels[order[i]];
  }
  models::StepResult r;
  if (dp_) {
    // Each rank converts only the samples of its own shards.
    dist::StepOutput out = dp_->step(cfg_.batch, [&](dist::Range s) {
      models::ShardLoss l = models::shard_loss(*model_, models::images_to_input(&xb_[s.begin * 784], s.size()),
                                               models::labels_to_tensor(&yb_[s.begin], s.size()));
      return dist::ShardOutput{l.loss_sum, l.correct};
    });
    r = {out.loss.to_vector<float>().at(0), out.count};
  } else {
    r = (*step_)(models::images_to_input(xb_.data(), cfg_.batch), models::labels_to_tensor(yb_.data(), cfg_.batch));
  }
  if (k == perturb_step_)
    for (auto& [name, t] : model_->state_dict())
      if (name == perturb_tensor_) verify::flip_bit(t, perturb_element_, perturb_bit_);
  return r;
}

verify::StateBinding MnistProgram::binding() {
  return {model_->state_dict(), &step_->optimizer(), &sampler_, true, {}};
}

verify::Program MnistProgram::program() {
  return {binding(), [this](int64_t k) -> std::optional<float> { return step(k).loss; }, {}};
}

verify::Job mnist_job(const RunConfig& cfg, const std::string& dir, models::MnistModel& model) {
  verify::Job j;
  j.name = cfg.dataset + "-" + cfg.model;
  j.config = {{"dataset", cfg.dataset}, {"model", cfg.model}, {"epochs", std::to_string(cfg.epochs)},
              {"batch", std::to_string(cfg.batch)}, {"seed", std::to_string(cfg.seed)},
              {"steps", std::to_string(cfg.max_steps)}, {"lr", num(cfg.lr)}, {"lr_decay", num(cfg.lr_decay)}};
  if (cfg.shards > 1) j.config["shards"] = std::to_string(cfg.shards);
  if (cfg.fused) j.config["products"] = "fused";
  for (const char* f : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                        "t10k-labels-idx1-ubyte"}) {
    // Absolute: a record's relative paths are relative to the record, and --data or
    // MAROON_DATA_DIR may name a directory relative to this one.
    std::string path = std::filesystem::absolute(dir + "/" + f).lexically_normal().string();
    j.data.push_back({f, path, verify::hex(verify::file_digest(path, "[train] data"))});
  }
  TrainingScope eval(false);  // BatchNorm in training mode would update its statistics
  const FusedScope products(cfg.fused);  // the architecture as the job computes it
  std::vector<uint8_t> zeros(static_cast<size_t>(cfg.batch * 784));
  Tensor logits = model(models::images_to_input(zeros.data(), cfg.batch));
  j.arch_sha256 = verify::hex(verify::graph_digest({logits}, model.state_dict()));
  return j;
}

RunConfig config_of(const verify::Job& job, const std::string& what) {
  auto get = [&](const char* k) {
    auto it = job.config.find(k);
    if (it == job.config.end()) throw FormatError(what + ": job.config has no \"" + k + "\" (not a maroon train run)");
    return it->second;
  };
  auto integer = [&](const char* k) {
    std::string s = get(k);
    char* end = nullptr;
    long long v = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || *end || v < 0) throw FormatError(what + ": job.config." + k + " \"" + s + "\" is not an integer");
    return static_cast<int64_t>(v);
  };
  auto real = [&](const char* k) {
    std::string s = get(k);
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end) throw FormatError(what + ": job.config." + k + " \"" + s + "\" is not a number");
    return v;
  };
  RunConfig c;
  c.dataset = get("dataset");
  c.model = get("model");
  if ((c.dataset != "mnist" && c.dataset != "fashion") || (c.model != "mlp" && c.model != "cnn"))
    throw FormatError(what + ": job.config names dataset \"" + c.dataset + "\" and model \"" + c.model + "\"");
  c.epochs = integer("epochs"), c.batch = integer("batch"), c.seed = integer("seed"), c.max_steps = integer("steps");
  c.lr = real("lr"), c.lr_decay = real("lr_decay");
  // "shards" is there only for a sharded job (above 1); without it the job ran one batch a step.
  bool sharded = job.config.count("shards") > 0;
  if (sharded && ((c.shards = integer("shards")) < 2 || c.shards > c.batch))
    throw FormatError(what + ": job.config.shards \"" + get("shards") + "\" must be between 2 and the batch size");
  // "products" is there only for a fused job (train --fused).
  const bool fused = job.config.count("products") > 0;
  if (fused && get("products") != "fused")
    throw FormatError(what + ": job.config.products \"" + get("products") + "\" is not \"fused\"");
  c.fused = fused;
  if (job.config.size() != 8u + sharded + fused)
    throw FormatError(what + ": job.config has keys this command does not know");
  return c;
}

RecordedRun open_run(const std::string& given) {
  RecordedRun r;
  r.path = record_path_for(given);
  r.rec = verify::read_record(r.path);
  r.cfg = config_of(r.rec.job, "run record '" + r.path + "'");
  return r;
}

std::string RecordedRun::perturbation() const {
  auto it = rec.claims.find("perturbation");
  return it == rec.claims.end() ? "" : it->second;
}

}  // namespace maroon::cli
