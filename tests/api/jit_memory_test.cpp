// TinyJit's buffer lifetimes (src/core/jit_lifetimes.h): a replay drops each buffer of the step
// once its last reader has run, and the buffer cache hands those pages to the next kernels. The
// bits stay those of calling the function; the step stops taking fresh memory at its first
// replay and holds none of its intermediates between calls.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/buffer_cache.h"
#include "maroon/counters.h"
#include "maroon/maroon.h"
#include "maroon/models.h"

namespace maroon {
namespace {

constexpr int64_t kN = 48;  // every intermediate below is kN x kN floats: one size class

Tensor grid(int64_t k, double scale) {
  std::vector<float> v(static_cast<size_t>(kN * kN));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(static_cast<double>((i * 2654435761u + static_cast<size_t>(k) * 977) % 1009) * scale - 1.0);
  return Tensor::from_vector(v, {kN, kN});
}

// A step of three schedules (each realize() inside it ends one) whose intermediates all share
// one size class and have overlapping lifetimes: `a` is read by the second and third schedules,
// `t1` computed in the second and read in the third, outputs are views of early intermediates,
// and a state is assigned. A buffer dropped while something still reads it would be reused by a
// later kernel of the same size (wrong bits) or read as null (a crash).
struct Graph {
  Tensor state = Tensor::zeros({kN});
  std::vector<Tensor> step(const std::vector<Tensor>& in) {
    const Tensor& x = in[0];
    const Tensor& w = in[1];
    Tensor a = x * 3 - w;
    a.realize();
    Tensor t1 = a.matmul(w);
    Tensor t2 = t1.relu() * a;
    t2.realize();
    Tensor t3 = t2.matmul(w.transpose()) + t1 - a.permute({1, 0});
    Tensor out = t3.sum(0) + (t2 * 0.5).exp2().max(1) + a.sum(1);
    state.assign(state * 0.5 + t3.max(0));
    return {out, t2.permute({1, 0}), a.reshape({kN * kN}), t1, t3};
  }
};

std::vector<std::vector<uint8_t>> bytes(const std::vector<Tensor>& ts) {
  std::vector<std::vector<uint8_t>> out;
  for (const Tensor& t : ts) out.push_back(t.bytes());
  return out;
}

TEST(TinyJitMemory, ReplayedBuffersNeverOverlapLiveOnes) {
  Graph plain, jitted;
  TinyJit jit([&](const std::vector<Tensor>& in) { return jitted.step(in); });
  std::vector<std::pair<std::vector<Tensor>, std::vector<std::vector<uint8_t>>>> held;
  for (int k = 0; k < 6; ++k) {
    std::vector<std::vector<uint8_t>> want = bytes(plain.step({grid(k, 0.002), grid(k + 7, 0.001)}));
    std::vector<Tensor> got = jit({grid(k, 0.002), grid(k + 7, 0.001)});
    std::vector<std::vector<uint8_t>> have = bytes(got);
    ASSERT_EQ(have.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_TRUE(have[i].size() == want[i].size() && std::memcmp(have[i].data(), want[i].data(), want[i].size()) == 0)
          << "output " << i << " differs at call " << k;
    ASSERT_EQ(jitted.state.bytes(), plain.state.bytes()) << "the state differs after call " << k;
    held.push_back({got, have});
  }
  // What earlier calls returned keeps its bytes: no later replay wrote into it.
  for (size_t k = 0; k < held.size(); ++k) EXPECT_EQ(bytes(held[k].first), held[k].second) << "call " << k;
}

// One Adam step of the CNN (batch 4), returning the loss.
struct Cnn {
  std::unique_ptr<models::MnistModel> model = models::make_model("cnn", 3);
  optim::Adam opt{model->parameters(), 1e-3};
  std::vector<Tensor> step(const std::vector<Tensor>& in) {
    TrainingScope training;
    opt.zero_grad();
    Tensor loss = (*model)(in[0]).sparse_categorical_crossentropy(in[1]);
    loss.backward();
    opt.step();
    return {loss};
  }
};

std::vector<Tensor> cnn_batch(int64_t k) {
  constexpr int64_t b = 4;
  std::vector<uint8_t> px(static_cast<size_t>(b * 28 * 28)), lb(static_cast<size_t>(b));
  for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<uint8_t>((i * 2654435761u + k * 97) >> 7);
  for (size_t i = 0; i < lb.size(); ++i) lb[i] = static_cast<uint8_t>((i * 7 + k * 3) % 10);
  return {models::images_to_input(px.data(), b), models::labels_to_tensor(lb.data(), b)};
}

// From the first replay on, the step's buffers are the pages of the call before: no fresh
// memory. The first replay takes one more block per parameter, for its gradient: the last
// call's .grad tensors stay valid until the replay ends (a call of the function drops them
// first, in zero_grad()). Before the capture moved its .grad tensors off the recorded graph, the
// first replay took every buffer of the step fresh; before it dropped the states' earlier
// values, the second replay took one more copy of every state.
TEST(TinyJitMemory, ReplaysTakeNoFreshMemory) {
  Cnn c;
  TinyJit jit([&](const std::vector<Tensor>& in) { return c.step(in); });
  std::vector<uint64_t> fresh;
  for (int k = 0; k < 6; ++k) {
    jit(cnn_batch(k))[0].bytes();
    fresh.push_back(buffer_fresh_bytes());
  }
  for (int k = 3; k < 6; ++k) EXPECT_EQ(fresh[k], fresh[2]) << "call " << k + 1 << " took fresh memory";
  uint64_t grads = 0;
  for (const Tensor& p : c.model->parameters()) grads += static_cast<uint64_t>(p.numel()) * 4;
  EXPECT_LE(fresh[2] - fresh[0], 2 * grads + (uint64_t{64} << 10)) << "the capture and the first replay";
}

// Between calls the capture holds only what the step's own leaves alias (a state's new value a
// later schedule reads), and the live bytes are the same after every replay, below those after
// the first call, whose .grad tensors hold the step's graph.
TEST(TinyJitMemory, ReplayHoldsNoIntermediatesBetweenCalls) {
  Cnn c;
  TinyJit jit([&](const std::vector<Tensor>& in) { return c.step(in); });
  std::vector<int64_t> live;
  std::vector<size_t> held;
  for (int k = 0; k < 6; ++k) {
    jit(cnn_batch(k))[0].bytes();
    live.push_back(counters().mem_used);
    held.push_back(jit.capture().held_bytes());
  }
  for (int k = 3; k < 6; ++k) EXPECT_EQ(live[k], live[2]) << "call " << k + 1;
  EXPECT_LT(live[2], live[0]) << "the replay left intermediates alive";
  // Adam's moments are aliased (the update reads their new values): at most the parameters,
  // their moments and nothing else.
  uint64_t params = 0;
  for (const Tensor& p : c.model->parameters()) params += static_cast<uint64_t>(p.numel()) * 4;
  for (int k = 1; k < 6; ++k) EXPECT_LE(held[k], 3 * params) << "call " << k + 1;

  // The step of many intermediates above: nothing aliased, nothing held.
  Graph g;
  TinyJit gjit([&](const std::vector<Tensor>& in) { return g.step(in); });
  for (int k = 0; k < 4; ++k) {
    gjit({grid(k, 0.002), grid(k + 7, 0.001)});
    if (k > 0) {
      EXPECT_EQ(gjit.capture().held_bytes(), 0u) << "call " << k + 1;
    }
  }
}

// A replay's working set: each buffer is dropped after its last reader, so fewer are alive at
// once than in a call of the function, which holds the step's graph (and so every buffer it
// materialized) to its end.
TEST(TinyJitMemory, ReplayPeakIsBelowTheFunctionsPeak) {
  Cnn c;
  TinyJit jit([&](const std::vector<Tensor>& in) { return c.step(in); });
  std::vector<uint64_t> peak;
  for (int k = 0; k < 5; ++k) {
    std::vector<Tensor> in = cnn_batch(k);
    in[0].realize();
    in[1].realize();
    reset_buffer_peak();
    const uint64_t before = buffer_peak_bytes();
    jit(in)[0].bytes();
    peak.push_back(buffer_peak_bytes() - before);
  }
  for (int k = 3; k < 5; ++k) EXPECT_EQ(peak[k], peak[2]) << "call " << k + 1;
  EXPECT_LT(peak[2], peak[0] * 3 / 4) << "replay " << peak[2] << " bytes, the function " << peak[0];
}

}  // namespace
}  // namespace maroon
