// Training an MNIST model with the data-parallel step on synthetic data: shared by the test suite
// (one process) and maroon-dist-train (many), so both run exactly the same program.
#pragma once
#include <string>
#include <vector>

#include "../mnist/synthetic.h"
#include "maroon/dist.h"
#include "maroon/models.h"

namespace maroon::disttest {

struct ShardedRun {
  std::string weights;        // models::weights_digest of the final state
  std::vector<float> losses;  // each step's loss
  int64_t correct = 0;        // summed over the steps
};

// `steps` steps of batch `batch` from model `kind` (seed 7), batch k taken at sample
// (k * batch) mod (n - batch + 1) as tests/mnist/models_test.cpp does; Adam with lr 1e-3.
inline ShardedRun train_sharded(const std::string& kind, int64_t shards, int steps, int64_t batch,
                                const mnisttest::Synthetic& d, dist::Comm& comm) {
  auto model = models::make_model(kind, 7);
  models::TrainStep step(*model, 1e-3);  // owns the optimizer
  dist::DataParallel dp(step.optimizer(), shards, comm, model->batchnorms());
  ShardedRun run;
  int64_t n = static_cast<int64_t>(d.labels.size());
  for (int s = 0; s < steps; ++s) {
    int64_t at = (s * batch) % (n - batch + 1);
    dist::StepOutput out = dp.step(batch, [&](dist::Range r) {
      int64_t first = at + r.begin;
      models::ShardLoss l = models::shard_loss(*model, models::images_to_input(&d.images[first * 784], r.size()),
                                               models::labels_to_tensor(&d.labels[first], r.size()));
      return dist::ShardOutput{l.loss_sum, l.correct};
    });
    run.losses.push_back(out.loss.to_vector<float>().at(0));
    run.correct += out.count;
  }
  run.weights = models::weights_digest(model->state_dict());
  return run;
}

}  // namespace maroon::disttest
