// TinyJit (maroon/jit.h): a captured step replays with the same bits as running the function,
// on the MNIST MLP and CNN with Adam, and refuses what a replay could not reproduce.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "maroon/backend.h"
#include "maroon/maroon.h"
#include "maroon/models.h"
#include "maroon/verify.h"

namespace maroon {
namespace {

// Batch k of `b` images: pixels and labels from a fixed integer recipe (no RNG: the step must
// not draw random numbers, and the batches must differ from step to step).
std::pair<Tensor, Tensor> batch(int64_t k, int64_t b) {
  std::vector<uint8_t> px(static_cast<size_t>(b * 28 * 28)), lb(static_cast<size_t>(b));
  for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<uint8_t>((i * 2654435761u + k * 97) >> 7);
  for (size_t i = 0; i < lb.size(); ++i) lb[i] = static_cast<uint8_t>((i * 7 + k * 3) % 10);
  return {models::images_to_input(px.data(), b), models::labels_to_tensor(lb.data(), b)};
}

// One Adam step of `model` as a function of (x, y), returning the loss.
struct Trainer {
  std::unique_ptr<models::MnistModel> model;
  optim::Adam opt;
  Trainer(const std::string& kind, double lr)
      : model(models::make_model(kind, 7)), opt(model->parameters(), lr) {}
  std::vector<Tensor> step(const std::vector<Tensor>& in) {
    TrainingScope training;
    opt.zero_grad();
    Tensor loss = (*model)(in[0]).sparse_categorical_crossentropy(in[1]);
    loss.backward();
    opt.step();
    return {loss};
  }
  std::vector<std::vector<uint8_t>> state() const {
    std::vector<std::vector<uint8_t>> out;
    for (auto& [name, t] : model->state_dict()) out.push_back(t.bytes());
    for (const Tensor& t : opt.m) out.push_back(t.bytes());
    for (const Tensor& t : opt.v) out.push_back(t.bytes());
    return out;
  }
};

// Trains two identical models for `steps` steps on the same batches, one through TinyJit;
// after every step the losses and every weight and moment are the same bytes.
void expect_jit_same_bits(const std::string& kind, int64_t b, int steps) {
  Trainer plain(kind, 1e-3), jitted(kind, 1e-3);
  TinyJit jit([&](const std::vector<Tensor>& in) { return jitted.step(in); });
  for (int k = 0; k < steps; ++k) {
    auto [x, y] = batch(k, b);
    std::vector<uint8_t> want = plain.step({x, y})[0].bytes();
    auto [x2, y2] = batch(k, b);
    std::vector<uint8_t> got = jit({x2, y2})[0].bytes();
    ASSERT_EQ(got, want) << kind << " loss differs at step " << k;
    auto a = plain.state(), j = jitted.state();
    ASSERT_EQ(a.size(), j.size());
    for (size_t i = 0; i < a.size(); ++i)
      ASSERT_TRUE(a[i].size() == j[i].size() && std::memcmp(a[i].data(), j[i].data(), a[i].size()) == 0)
          << kind << " state tensor " << i << " differs after step " << k;
  }
  EXPECT_EQ(jit.calls(), steps);
  EXPECT_TRUE(jit.capture().captured());
  EXPECT_GT(jit.capture().kernels(), 10u);
}

TEST(TinyJit, MlpAdamReplaysBitIdentical) { expect_jit_same_bits("mlp", 8, 5); }

TEST(TinyJit, CnnAdamReplaysBitIdentical) { expect_jit_same_bits("cnn", 2, 3); }

// The thread count and the reference backend give the same bits on replay too.
TEST(TinyJit, ReplayOnOneThreadAndOnTheReferenceBackendMatches) {
  int threads = num_threads();
  Trainer plain("mlp", 1e-3), jitted("mlp", 1e-3);
  TinyJit jit([&](const std::vector<Tensor>& in) { return jitted.step(in); });
  for (int k = 0; k < 4; ++k) {
    set_num_threads(k % 2 ? 1 : 2);
    auto [x, y] = batch(k, 8);
    plain.step({x, y});
    jit({x, y});
  }
  set_num_threads(threads);
  EXPECT_EQ(plain.state(), jitted.state());

  // The reference backend (scalar, slow): a small MLP.
  set_backend(Backend::Ref);
  struct Small {
    nn::Linear l1{784, 16}, l2{16, 10};
    optim::Adam opt{nn::get_parameters({&l1, &l2}), 1e-2};
    std::vector<Tensor> step(const std::vector<Tensor>& in) {
      TrainingScope training;
      opt.zero_grad();
      Tensor loss = l2(l1(in[0].flatten(1)).relu()).sparse_categorical_crossentropy(in[1]);
      loss.backward();
      opt.step();
      return {loss};
    }
    std::vector<std::vector<uint8_t>> state() const {
      return {l1.weight.bytes(), l2.weight.bytes(), l2.bias->bytes(), opt.m[0].bytes(), opt.v[3].bytes()};
    }
  };
  Tensor::manual_seed(1);
  Small rplain;
  Tensor::manual_seed(1);
  Small rjitted;
  TinyJit rjit([&](const std::vector<Tensor>& in) { return rjitted.step(in); });
  for (int k = 0; k < 3; ++k) {
    auto [x, y] = batch(k, 2);
    rplain.step({x, y});
    rjit({x, y});
  }
  EXPECT_EQ(rplain.state(), rjitted.state());
  auto [x, y] = batch(3, 2);
  set_backend(Backend::Cpu);
  try {
    rjit({x, y});
    ADD_FAILURE() << "a replay on another backend ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("captured on the ref backend"), std::string::npos) << e.what();
  }
}

// A state the caller reassigns between calls, and a tensor the step only reads (the learning
// rate) reassigned between calls: the next replay reads both new values.
TEST(TinyJit, StateReassignedOutsideTheStepIsSeen) {
  Trainer plain("mlp", 1e-3), jitted("mlp", 1e-3);
  TinyJit jit([&](const std::vector<Tensor>& in) { return jitted.step(in); });
  for (int k = 0; k < 5; ++k) {
    if (k == 3) {
      for (Trainer* t : {&plain, &jitted}) {
        dynamic_cast<models::MnistMLP&>(*t->model).l3.bias->assign(Tensor::full({10}, 0.25, DType::Float32));
        t->opt.lr.assign(t->opt.lr * 0.5);
      }
    }
    auto [x, y] = batch(k, 8);
    plain.step({x, y});
    jit({x, y});
  }
  EXPECT_EQ(plain.state(), jitted.state());
}

// A replay changes nothing anybody holds: the loss each call returned, the inputs it was given and
// each step's weights and moments, held as nodes the way verify::Run's commitments hold them, keep
// the bytes they had when taken; a parameter's .grad follows every call, as without the JIT.
TEST(TinyJit, EarlierTensorsKeepTheirBytesAndGradsFollow) {
  Trainer plain("mlp", 1e-3), jitted("mlp", 1e-3);
  TinyJit jit([&](const std::vector<Tensor>& in) { return jitted.step(in); });
  std::vector<std::pair<Tensor, std::vector<uint8_t>>> held;
  auto keep = [&](const Tensor& t) { held.push_back({t, t.bytes()}); };
  for (int k = 0; k < 6; ++k) {
    auto [x, y] = batch(k, 8);
    plain.step({x, y});
    Tensor loss = jit({x, y})[0];
    keep(loss);
    keep(x);
    for (auto& [name, t] : jitted.model->state_dict()) keep(Tensor(t.node()));
    for (const Tensor& t : jitted.opt.m) keep(Tensor(t.node()));
    std::vector<Tensor> pp = plain.model->parameters(), jp = jitted.model->parameters();
    for (size_t i = 0; i < pp.size(); ++i) {
      ASSERT_TRUE(pp[i].grad() && jp[i].grad()) << "parameter " << i;
      ASSERT_EQ(pp[i].grad()->bytes(), jp[i].grad()->bytes()) << "the .grad of parameter " << i << " after step " << k;
    }
  }
  for (size_t i = 0; i < held.size(); ++i) EXPECT_EQ(held[i].first.bytes(), held[i].second) << "held tensor " << i;
  EXPECT_EQ(plain.state(), jitted.state());
}

// A jitted loop under verify::Run (background hashing, checkpoints every 2 steps): the record's
// commitments are those of the loop without the JIT, and the record verifies by replaying every
// step, with or without the JIT on the verifier's side.
TEST(TinyJit, VerifyRunOfAJittedLoopVerifies) {
  struct Job {
    Trainer t{"mlp", 1e-3};
    verify::EpochSampler sampler{64, 8, 5};
    std::optional<TinyJit> jit;
    explicit Job(bool use_jit) {
      if (use_jit) jit.emplace([this](const std::vector<Tensor>& in) { return t.step(in); });
    }
    verify::StateBinding binding() { return {t.model->state_dict(), &t.opt, &sampler, true, {}}; }
    std::optional<float> step(int64_t) {
      std::pair<Tensor, Tensor> xy = batch(sampler.next()[0], 8);
      std::vector<Tensor> in{xy.first, xy.second};
      return static_cast<float>((jit ? (*jit)(in) : t.step(in))[0].item());
    }
    verify::Program program() {
      return {binding(), [this](int64_t k) { return step(k); }, {}};
    }
  };
  verify::Job id{"jit-test", {{"batch", "8"}}, {}, std::string(64, '0')};
  std::string dir = ::testing::TempDir() + "maroon_jit_verify_" + std::to_string(::getpid());
  std::vector<verify::RunRecord> recs;
  for (bool jit : {false, true}) {
    Job j(jit);
    verify::RunOptions o;
    o.record = dir + (jit ? "/jit.run.json" : "/plain.run.json"), o.steps = 7, o.checkpoint_every = 2;
    verify::Run run(id, j.binding(), o);
    recs.push_back(run.train([&](int64_t k) { return j.step(k); }));
  }
  EXPECT_EQ(recs[0].states, recs[1].states);
  EXPECT_EQ(recs[0].losses, recs[1].losses);
  for (bool jit : {false, true}) {
    Job fresh(jit);
    verify::Program p = fresh.program();
    verify::VerifyReport rep = verify::verify_run(recs[1], dir + "/jit.run.json", &p, {});
    std::string all;
    for (auto& f : rep.findings) all += f.message() + "\n";
    EXPECT_TRUE(rep.findings.empty()) << (jit ? "jitted verifier: " : "plain verifier: ") << all;
    EXPECT_EQ(rep.steps_replayed, 7);
  }
  std::filesystem::remove_all(dir);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(TinyJit, RefusesWhatAReplayCannotReproduce) {
  Trainer t("mlp", 1e-3);
  TinyJit jit([&](const std::vector<Tensor>& in) { return t.step(in); });
  for (int k = 0; k < 3; ++k) {
    auto [x, y] = batch(k, 8);
    jit({x, y});
  }
  // Not a structured binding: clang before 16 cannot capture one in a lambda.
  std::pair<Tensor, Tensor> small = batch(3, 4);
  Tensor x = small.first, y = small.second;
  EXPECT_NE(error_of([&] { jit({x, y}); }).find("input 0 is (4,1,28,28) float32, the captured call's was (8,1,28,28)"),
            std::string::npos);
  EXPECT_NE(error_of([&] { jit({x}); }).find("called with 1 input tensors, the captured call had 2"), std::string::npos);

  TinyJit rnd([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + Tensor::rand(in[0].shape())}; });
  Tensor a = Tensor::from_vector<float>({1, 2, 3}, {3});
  rnd({a});
  EXPECT_NE(error_of([&] { rnd({a}); }).find("cannot capture random numbers"), std::string::npos);

  Tensor s = Tensor::zeros({3}).contiguous().realize();
  TinyJit from_input([&](const std::vector<Tensor>& in) {
    s.assign(in[0]);
    return std::vector<Tensor>{};
  });
  from_input({a});
  EXPECT_NE(error_of([&] { from_input({a}); }).find("assigned a tensor the step did not compute"), std::string::npos);

  TinyJit inner([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 2}; });
  TinyJit outer([&](const std::vector<Tensor>& in) { return inner(in); });
  outer({a});
  EXPECT_NE(error_of([&] { outer({a}); }).find("inside another capture"), std::string::npos);

  // One buffer as two inputs (the same tensor, or two views of one): the capture would hold one
  // leaf for both, and a replay given two tensors would read the first's values for both.
  TinyJit sub([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] - in[1]}; });
  sub({a, a});
  EXPECT_NE(error_of([&] { sub({a, a}); }).find("inputs 0 and 1 share one buffer"), std::string::npos);
  Tensor ab = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {6});
  sub({ab.shrink({{0, 3}}), ab.shrink({{3, 6}})});
  EXPECT_NE(error_of([&] { sub({ab.shrink({{0, 3}}), ab.shrink({{3, 6}})}); }).find("share one buffer"),
            std::string::npos);
  // Distinct tensors capture; a replay may then be given one tensor twice.
  Tensor b = Tensor::from_vector<float>({10, 20, 30}, {3});
  sub({a, b});
  sub({a, b});
  EXPECT_EQ(sub({b, a})[0].tolist(), (std::vector<double>{9, 18, 27}));
  EXPECT_EQ(sub({b, b})[0].tolist(), (std::vector<double>{0, 0, 0}));
}

}  // namespace
}  // namespace maroon
