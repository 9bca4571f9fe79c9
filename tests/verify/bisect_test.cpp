// bisect: a run perturbed at one step (a parameter bit flipped, a faulty node, a tampered input)
// is localised to that step and to the node or state tensor, and the referee sides with the
// honest run; at most (distance to the checkpoint) + 2 step replays.
#include "job.h"

using namespace maroon;
using namespace maroon::verify;
using maroon::verifytest::TestJob;
using maroon::verifytest::data;

namespace {

constexpr int64_t kSteps = 7, kEvery = 3, kBad = 5;

struct Dispute {
  std::string dir;
  TestJob honest{data(), "mlp", 8}, perturbed{data(), "mlp", 8};
  RunRecord a, b;
  explicit Dispute(const std::string& name) : dir(verifytest::scratch(name)) {}
  void run() {
    a = honest.run(dir + "/a.run.json", kSteps, kEvery);
    b = perturbed.run(dir + "/b.run.json", kSteps, kEvery);
  }
  BisectReport bisect() {
    // Fresh programs: the parties replay from their checkpoints, not from where the runs ended.
    TestJob pa(data(), "mlp", 8), pb(data(), "mlp", 8);
    pb.before_forward = perturbed.before_forward, pb.after_step = perturbed.after_step, pb.fault = perturbed.fault;
    Program qa = pa.program(), qb = pb.program();
    BisectReport r = verify::bisect(a, dir + "/a.run.json", qa, b, dir + "/b.run.json", qb);
    for (auto& l : r.lines) std::printf("  %s\n", l.c_str());
    return r;
  }
};

std::string op_of(const TraceNode& n) { return n.op; }

// A party that flips `bit` of element `element` of its model's tensor number `tensor` at step kBad.
std::function<void(TestJob&, int64_t)> flip_at_bad_step(size_t tensor, int64_t element, int bit) {
  return [=](TestJob& j, int64_t k) {
    if (k == kBad) flip_bit(j.model->state_dict()[tensor].second, element, bit);
  };
}

}  // namespace

TEST(VerifyBisect, FlippedParameterBitAfterTheUpdateIsLocalisedToTheStepTensorAndOp) {
  Dispute d("flip");
  d.perturbed.after_step = flip_at_bad_step(2, 123, 20);  // l2.weight, after the update
  d.run();
  BisectReport r = d.bisect();
  EXPECT_EQ(r.step, kBad);
  EXPECT_EQ(r.node, -1) << "every node of the step agrees";
  EXPECT_EQ(r.state_tensor, "model.l2.weight");
  EXPECT_GE(r.state_node, 0) << "the node that computed l2.weight in a's trace";
  EXPECT_EQ(r.referee_says, "a");
  EXPECT_EQ(r.from_checkpoint, 3);
  EXPECT_EQ(r.checkpoint_loads, 1);
  EXPECT_EQ(r.step_replays, (kBad - 1 - 3) + 2);
  bool verdict = false;
  for (auto& l : r.lines) verdict |= l.rfind("verdict: b is wrong at step 5, state tensor model.l2.weight", 0) == 0;
  EXPECT_TRUE(verdict);
}

TEST(VerifyBisect, FaultyNodeIsTheFirstDifferingNodeAndTheRefereeRecomputesIt) {
  // The node: the first ReLU (a WHERE) of a step, found in a trace of step 2 (step 1's graph has
  // more nodes: the initial moments are constants). A matmul's product node is traced too, but
  // the matmul kernel reads its factors, not the product, so a fault there would not propagate.
  TestJob probe(data(), "mlp", 8);
  probe.step(1);
  Trace t = trace([&] { probe.step(2); }, nullptr);
  int64_t mul = -1;
  for (size_t i = 0; i < t.nodes.size() && mul < 0; ++i)
    if (t.nodes[i].op == "WHERE" && t.nodes[i].shape == Shape{8, 512}) mul = static_cast<int64_t>(i);
  ASSERT_GE(mul, 0);
  Dispute d("fault");
  d.perturbed.fault = {{kBad, Fault{mul, 5, 30}}};
  d.run();
  BisectReport r = d.bisect();
  EXPECT_EQ(r.step, kBad);
  EXPECT_EQ(r.node, mul);
  EXPECT_EQ(op_of(r.node_a), "WHERE");
  EXPECT_NE(r.node_a.digest, r.node_b.digest);
  EXPECT_EQ(r.referee_digest, hex(r.node_a.digest));
  EXPECT_EQ(r.referee_says, "a");
}

TEST(VerifyBisect, TamperedInputStateIsTheFirstDifferingLeaf) {
  Dispute d("input");
  d.perturbed.before_forward = flip_at_bad_step(0, 7, 30);  // l1.weight, before the step reads it
  d.run();
  BisectReport r = d.bisect();
  EXPECT_EQ(r.step, kBad);
  ASSERT_GE(r.node, 0);
  EXPECT_EQ(r.node_a.op, "BUFFER");
  EXPECT_EQ(r.node_a.label, "model.l1.weight");
  EXPECT_EQ(r.referee_says, "a");
}

TEST(VerifyBisect, IdenticalRunsAgreeAndOtherJobsAreRefused) {
  Dispute d("same");
  d.run();
  BisectReport r = d.bisect();
  EXPECT_TRUE(r.same);
  EXPECT_EQ(r.step, -1);
  EXPECT_EQ(r.step_replays, 0);
  TestJob other(data(), "mlp", 16), po(data(), "mlp", 16), pa(data(), "mlp", 8);
  RunRecord c = other.run(d.dir + "/c.run.json", 3, 0);
  Program qa = pa.program(), qo = po.program();
  try {
    verify::bisect(d.a, d.dir + "/a.run.json", qa, c, d.dir + "/c.run.json", qo);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("job.config.batch is \"8\" and \"16\""), std::string::npos) << e.what();
  }
}
