// TinyJit (maroon/jit.h): a captured step replays with the same bits as running the function,
// on the MNIST MLP and CNN with Adam, and refuses what a replay could not reproduce.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

#include "maroon/backend.h"
#include "maroon/maroon.h"
#include "maroon/models.h"

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

// A state the caller reassigns between calls is fed in by copy, and a tensor the step only reads
// (the learning rate) takes the new value in place: the next replay uses both.
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
  auto [x, y] = batch(3, 4);
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
}

}  // namespace
}  // namespace maroon
