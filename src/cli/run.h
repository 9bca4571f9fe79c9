// A training run: its configuration, the loop that replays it step by step, and the record a
// run leaves (run.json) so that `maroon verify` can replay it and compare every step.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "maroon/datasets.h"
#include "maroon/models.h"

namespace maroon::cli {

struct RunConfig {
  std::string dataset = "mnist";  // "mnist" or "fashion"
  std::string model = "mlp";      // "mlp" or "cnn"
  int64_t epochs = 1, batch = 128, seed = 0;
  int64_t max_steps = 0;          // 0: every step of every epoch; otherwise stop after this many
  int64_t checkpoint_every = 50;  // a weights digest every this many steps (and after the last)
  double lr = 1e-3;
  double lr_decay = 0.5;  // epoch e (0-based) trains with lr * lr_decay^e
};

// The data directory for a dataset: `override` if not empty, else $MAROON_DATA_DIR/<name>, else
// the source tree's data/<name> (name: "mnist" or "fashion-mnist").
std::string data_dir(const std::string& dataset, const std::string& override);
// SHA-256 of the training split (images, then labels): a run record names the data it used.
std::string split_digest(const data::Split& s);

// Replays a run: the epoch's sample order is a Fisher-Yates shuffle driven by SplitMix64 seeded
// with (seed, epoch), so it is integer arithmetic and the same everywhere. Each epoch has
// floor(n / batch) steps; the last partial batch is dropped so every step has the same shape.
// The learning rate is set at the start of each epoch (a float32 tensor, from a double product).
class Run {
 public:
  Run(const RunConfig& cfg, const data::Split& train);
  int64_t steps_per_epoch() const { return per_epoch_; }
  int64_t total_steps() const { return total_; }
  int64_t done() const { return done_; }                // steps taken so far
  int64_t epoch() const { return done_ / per_epoch_; }  // the epoch the next step belongs to (0-based)
  models::StepResult step();
  models::MnistModel& model() { return *model_; }
  std::string weights_digest() const { return models::weights_digest(model_->state_dict()); }
  bool is_checkpoint(int64_t steps_done) const {
    return steps_done == total_ || steps_done % cfg_.checkpoint_every == 0;
  }

 private:
  RunConfig cfg_;
  const data::Split& train_;
  int64_t per_epoch_, total_, done_ = 0;
  std::unique_ptr<models::MnistModel> model_;
  std::unique_ptr<models::TrainStep> step_;
  std::vector<uint32_t> order_;
  std::vector<uint8_t> xb_, yb_;
};

struct Checkpoint {
  int64_t step;  // steps done (1-based count)
  std::string weights_sha256;
};

struct RunRecord {
  RunConfig cfg;
  std::string data_sha256;
  std::vector<float> losses;
  std::vector<Checkpoint> checkpoints;
  std::string weights_sha256, loss_trace_sha256;
  // Informational only (verify ignores them): where and how fast it ran.
  int threads = 0;
  double train_seconds = 0;
  std::string test_accuracy;
};

void write_record(const RunRecord& r, const std::string& path);
RunRecord read_record(const std::string& path);  // throws maroon::FormatError

}  // namespace maroon::cli
