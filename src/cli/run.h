// The MNIST command's training job as a client of src/verify: its configuration (the job's
// identity in a run record), and the program that runs one step of it, which train, verify,
// bisect and trace all use, so that a replay is the same code as the run.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "maroon/datasets.h"
#include "maroon/dist.h"
#include "maroon/models.h"
#include "maroon/verify.h"

namespace maroon::cli {

struct RunConfig {
  std::string dataset = "mnist";  // "mnist" or "fashion"
  std::string model = "mlp";      // "mlp" or "cnn"
  int64_t epochs = 1, batch = 128, seed = 0;
  int64_t max_steps = 0;  // 0: every step of every epoch; otherwise stop after this many
  int64_t shards = 1;     // the data-parallel step's shards (maroon/dist.h); 1: one batch
  double lr = 1e-3;
  double lr_decay = 0.5;  // epoch e (0-based) trains with lr * lr_decay^e
  // Products (linear layers, convolutions, and so their gradients) as REDUCE_MULACC, one FMA a
  // step (docs/spec.md §14, train --fused): other bits than the default's, as defined, the same
  // on every machine. The job's config says so ("products": "fused"), so verify, resume, bisect
  // and trace run the job the same way; a default job's config (and digests) are unchanged.
  bool fused = false;
};

// The data directory for a dataset: `override` if not empty, else $MAROON_DATA_DIR/<name>, else
// the source tree's data/<name> (name: "mnist" or "fashion-mnist").
std::string data_dir(const std::string& dataset, const std::string& override);

// One step of the job: the epoch's sample order is verify::EpochSampler's (a Fisher-Yates shuffle
// driven by SplitMix64 from (seed, epoch)); each epoch has floor(n / batch) steps. The learning
// rate is set at the start of each epoch (a float32 tensor, from a double product). A
// perturbation "STEP:TENSOR:ELEMENT:BIT" (train --perturb, for tests and demonstrations) flips
// that bit of model tensor TENSOR after step STEP's update. With more than one shard, or ranks in
// `comm`, each step is the data-parallel step over them (without `comm`, one process runs every
// shard, which gives the bits of any number of ranks: verify, bisect and trace replay so);
// `timeout_s` as in dist::DataParallel.
class MnistProgram {
 public:
  MnistProgram(const RunConfig& cfg, const data::Split& train, const std::string& perturbation = "",
               dist::Comm* comm = nullptr, double timeout_s = 600);
  int64_t steps_per_epoch() const { return sampler_.batches_per_epoch(); }
  int64_t total_steps() const { return total_; }
  int64_t shards() const { return cfg_.shards; }
  bool fused() const { return cfg_.fused; }
  models::StepResult step(int64_t k);  // step k (1-based)
  models::MnistModel& model() { return *model_; }
  void set_jit(bool on) { step_->set_jit(on); }  // models::TrainStep::set_jit
  verify::StateBinding binding();
  verify::Program program();

 private:
  RunConfig cfg_;
  const data::Split& train_;
  int64_t total_;
  std::unique_ptr<models::MnistModel> model_;
  std::unique_ptr<models::TrainStep> step_;
  dist::SelfComm self_;
  std::unique_ptr<dist::DataParallel> dp_;
  verify::EpochSampler sampler_;
  std::vector<uint8_t> xb_, yb_;
  int64_t perturb_step_ = -1, perturb_element_ = 0;
  int perturb_bit_ = 0;
  std::string perturb_tensor_;
};

// The job's identity: its configuration, its data files (dir: where they are) and the model's
// architecture digest (the forward graph of `model` on a batch, in eval mode). "shards" is in the
// configuration only when above 1, so a one-process job keeps the digest it had before sharding.
verify::Job mnist_job(const RunConfig& cfg, const std::string& dir, models::MnistModel& model);
// The configuration a record's job names; throws FormatError naming the field when it is not one
// of this command's.
RunConfig config_of(const verify::Job& job, const std::string& what);

// A recorded run of this command's job: its record (the file named, or the one beside a weights
// file) and configuration.
struct RecordedRun {
  std::string path;
  verify::RunRecord rec;
  RunConfig cfg;
  std::string perturbation() const;  // what train --perturb recorded, or ""
};
RecordedRun open_run(const std::string& given);

}  // namespace maroon::cli
