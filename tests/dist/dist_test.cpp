// The data-parallel step in one process: its fixed rules (parts, the shard tree), its equality
// with today's single-process step for one shard, its meaning for several (gradient accumulation
// with the loss scaled by the global batch, BatchNorm statistics in shard order), and its errors.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "maroon/dist.h"
#include "maroon/models.h"
#include "sharded_run.h"

using namespace maroon;
using dist::Range;

namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// The tree sum written down independently: C++ float additions (IEEE, nearest-even, no
// contraction) over the rule mid = lo + ceil(n / 2).
float reference_tree(const std::vector<float>& v, int64_t lo, int64_t hi) {
  if (hi - lo == 1) return v[static_cast<size_t>(lo)];
  int64_t mid = lo + (hi - lo + 1) / 2;
  return reference_tree(v, lo, mid) + reference_tree(v, mid, hi);
}

float tree_of(const std::vector<float>& v) {
  auto have = [&](Range r) -> std::optional<Tensor> {
    if (r.size() == 1) return Tensor::from_vector<float>({v[static_cast<size_t>(r.begin)]}, {1});
    return std::nullopt;
  };
  return dist::tree_sum({0, static_cast<int64_t>(v.size())}, have).to_vector<float>().at(0);
}

// A communicator of `size` ranks seen from rank 0, whose peers answer what the test says.
// By default every peer sends what rank 0 sends (its own slice 0 and its messages): enough to
// reach the checks when the halves of the parameters have one size.
struct ScriptedComm : dist::Comm {
  int n;
  std::function<std::vector<std::string>(const std::string&)> gather;
  std::function<std::string(const std::string&)> bcast;
  explicit ScriptedComm(int size) : n(size) {
    gather = [this](const std::string& s) { return std::vector<std::string>(static_cast<size_t>(n), s); };
    bcast = [](const std::string& s) { return s; };
  }
  int rank() const override { return 0; }
  int size() const override { return n; }
  std::vector<std::string> all_to_all(const std::vector<std::string>& send) override {
    return std::vector<std::string>(static_cast<size_t>(n), send.at(0));
  }
  std::vector<std::string> all_gather(const std::string& mine) override { return gather(mine); }
  std::string broadcast(const std::string& b, int) override { return bcast(b); }
};

// One TrainStep per step: today's single-process training.
disttest::ShardedRun train_plain(const std::string& kind, int steps, int64_t batch, const mnisttest::Synthetic& d) {
  auto model = models::make_model(kind, 7);
  models::TrainStep step(*model, 1e-3);
  disttest::ShardedRun run;
  int64_t n = static_cast<int64_t>(d.labels.size());
  for (int s = 0; s < steps; ++s) {
    int64_t at = (s * batch) % (n - batch + 1);
    models::StepResult r =
        step(models::images_to_input(&d.images[at * 784], batch), models::labels_to_tensor(&d.labels[at], batch));
    run.losses.push_back(r.loss);
    run.correct += r.correct;
  }
  run.weights = models::weights_digest(model->state_dict());
  return run;
}

void expect_same(const disttest::ShardedRun& a, const disttest::ShardedRun& b) {
  EXPECT_EQ(a.weights, b.weights);
  ASSERT_EQ(a.losses.size(), b.losses.size());
  for (size_t i = 0; i < a.losses.size(); ++i) EXPECT_EQ(bits_of(a.losses[i]), bits_of(b.losses[i])) << "step " << i;
  EXPECT_EQ(a.correct, b.correct);
}

}  // namespace

TEST(DistRules, PartCutsContiguouslyWithFloors) {
  EXPECT_EQ(dist::part(10, 3, 0), (Range{0, 3}));
  EXPECT_EQ(dist::part(10, 3, 1), (Range{3, 6}));
  EXPECT_EQ(dist::part(10, 3, 2), (Range{6, 10}));
  EXPECT_EQ(dist::part(2, 4, 0), (Range{0, 0}));  // more parts than items: some are empty
  EXPECT_EQ(dist::part(2, 4, 3), (Range{1, 2}));
  EXPECT_THROW(dist::part(5, 0, 0), Error);
  EXPECT_THROW(dist::part(5, 2, 2), Error);
  EXPECT_THROW(dist::part(int64_t{1} << 62, 8, 1), Error);
}

TEST(DistRules, TreeCoverIsTheLargestWholeSubtrees) {
  using V = std::vector<Range>;
  // 12 shards on 4 ranks: each rank's 3 shards are one subtree, so each sends one partial sum.
  for (int r = 0; r < 4; ++r) EXPECT_EQ(dist::tree_cover(12, dist::part(12, 4, r)), (V{dist::part(12, 4, r)}));
  // 12 shards on 3 ranks: [0,4) is [0,3) + [3,4) in the tree ([0,6) splits at 3, [3,6) at 5).
  EXPECT_EQ(dist::tree_cover(12, {0, 4}), (V{{0, 3}, {3, 4}}));
  EXPECT_EQ(dist::tree_cover(12, {4, 8}), (V{{4, 5}, {5, 6}, {6, 8}}));
  EXPECT_EQ(dist::tree_cover(5, {0, 5}), (V{{0, 5}}));
  EXPECT_EQ(dist::tree_cover(1, {0, 1}), (V{{0, 1}}));
  EXPECT_EQ(dist::tree_mid({3, 6}), 5);
}

TEST(DistRules, TreeSumIsTheWrittenTreeNotALeftFold) {
  // The spec's example: a left fold of [1e8, 1, -1e8, 1] gives 1; the tree (1e8+1) + (-1e8+1) gives 0.
  EXPECT_EQ(tree_of({1e8f, 1.0f, -1e8f, 1.0f}), 0.0f);
  // Three shards: (a + b) + c, not a + (b + c).
  EXPECT_EQ(tree_of({1.0f, 1e8f, -1e8f}), 0.0f);
  // One shard is its own value: no identity is added, so -0 stays -0.
  EXPECT_EQ(bits_of(tree_of({-0.0f})), 0x80000000u);
  // Every shape up to 13 leaves, on values whose sums round, against the reference above.
  uint32_t x = 12345;
  for (int s = 1; s <= 13; ++s) {
    std::vector<float> v;
    for (int i = 0; i < s; ++i) {
      x = x * 1664525u + 1013904223u;
      v.push_back(static_cast<float>(static_cast<int32_t>(x)) * 1e-3f * (i % 3 == 0 ? 1e4f : 1.0f));
    }
    EXPECT_EQ(bits_of(tree_of(v)), bits_of(reference_tree(v, 0, s))) << s << " shards";
  }
  auto none = [](Range) -> std::optional<Tensor> { return std::nullopt; };
  EXPECT_THROW(dist::tree_sum({0, 2}, none), Error);
}

// With one shard the data-parallel step is today's step, bit for bit: losses and weights.
TEST(DistStep, OneShardIsTheSingleProcessStep) {
  mnisttest::Synthetic d(64);
  dist::SelfComm self;
  expect_same(disttest::train_sharded("mlp", 1, 3, 16, d, self), train_plain("mlp", 3, 16, d));
  expect_same(disttest::train_sharded("cnn", 1, 2, 8, d, self), train_plain("cnn", 2, 8, d));
}

// Several shards mean gradient accumulation written out by hand: each shard's loss sum over the
// global batch, backward alone, the gradients summed as the tree says, one Adam step. For the
// CNN, BatchNorm's running statistics updated by each shard's forward in shard order.
TEST(DistStep, ShardsAreGradientAccumulationAlongTheTree) {
  mnisttest::Synthetic d(40);
  const int64_t batch = 13;  // 3 shards of 4, 4, 5 samples
  for (std::string kind : {"mlp", "cnn"}) {
    auto model = models::make_model(kind, 7);
    models::TrainStep step(*model, 1e-3);
    auto& opt = step.optimizer();
    std::vector<std::vector<Tensor>> g(3);
    {
      TrainingScope training;
      for (int64_t s = 0; s < 3; ++s) {
        Range r = dist::part(batch, 3, s);
        opt.zero_grad();
        models::ShardLoss l = models::shard_loss(*model, models::images_to_input(&d.images[r.begin * 784], r.size()),
                                                 models::labels_to_tensor(&d.labels[r.begin], r.size()));
        l.loss_sum.div(batch).backward();
        for (auto& p : opt.params()) g[s].push_back(p.grad()->realized_leaf());
      }
      for (size_t i = 0; i < opt.params().size(); ++i) {
        Tensor p = opt.params()[i];
        p.set_grad(((g[0][i] + g[1][i]) + g[2][i]).realized_leaf());
      }
      opt.step();
    }
    std::string by_hand = models::weights_digest(model->state_dict());
    dist::SelfComm self;
    EXPECT_EQ(disttest::train_sharded(kind, 3, 1, batch, d, self).weights, by_hand) << kind;
    EXPECT_NE(disttest::train_sharded(kind, 1, 1, batch, d, self).weights, by_hand) << kind;
  }
}

TEST(DistStep, BadSettingsAreErrors) {
  auto model = models::make_model("mlp", 1);
  models::TrainStep step(*model, 1e-3);
  ScriptedComm two(2);
  EXPECT_THROW(dist::DataParallel(step.optimizer(), 1, two), Error);  // fewer shards than ranks
  dist::SelfComm self;
  EXPECT_THROW(dist::DataParallel(step.optimizer(), 0, self), Error);
  dist::DataParallel dp(step.optimizer(), 4, self);
  auto fine = [&](Range r) {
    Tensor x = Tensor::zeros({r.size(), 1, 28, 28});
    return dist::ShardOutput{(*model)(x).sum(), std::nullopt};
  };
  EXPECT_THROW(dp.step(3, fine), ShapeError);  // 3 samples cannot make 4 shards
  EXPECT_THROW(dp.step(8, [&](Range r) { return dist::ShardOutput{(*model)(Tensor::zeros({r.size(), 784})), {}}; }),
               ShapeError);  // the loss is not a scalar
  EXPECT_THROW(dp.step(8, [&](Range r) {
                 auto o = fine(r);
                 o.count = Tensor::full({}, 1.5);
                 return o;
               }),
               ShapeError);  // a count that is not an integer
  // Parameters of two dtypes cannot be one flat gradient.
  Tensor a = Tensor::zeros({2}), b = Tensor::zeros({2}, DType::Float16);
  optim::SGD mixed({a, b}, 0.1);
  EXPECT_THROW(dist::DataParallel(mixed, 1, self), DTypeError);
}

TEST(DistStep, RanksThatDisagreeAreNamed) {
  auto model = models::make_model("mlp", 1);
  models::TrainStep step(*model, 1e-3);
  // Before the first step: rank 1 reports other settings.
  ScriptedComm two(2);
  two.gather = [](const std::string& s) { return std::vector<std::string>{s, s + "?"}; };
  try {
    dist::DataParallel dp(step.optimizer(), 2, two);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 has"), std::string::npos) << e.what();
  }
  // After a step: rank 0's parameters differ from this rank's (the MLP's 669,706 parameters
  // halve evenly, so the scripted peer's messages have the right sizes).
  ScriptedComm peer(2);
  peer.bcast = [](const std::string& s) { return std::string(s.size(), '0'); };
  dist::DataParallel dp(step.optimizer(), 2, peer);
  mnisttest::Synthetic d(4);
  try {
    dp.step(4, [&](Range r) {
      auto l = models::shard_loss(*model, models::images_to_input(&d.images[r.begin * 784], r.size()),
                                  models::labels_to_tensor(&d.labels[r.begin], r.size()));
      return dist::ShardOutput{l.loss_sum, l.correct};
    });
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("differ from rank 0's"), std::string::npos) << e.what();
  }
}
