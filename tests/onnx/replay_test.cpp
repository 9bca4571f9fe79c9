// Replayed model runs (src/onnx/replay.h): from the third run with one input signature a model's
// run replays its captured kernels. Each replay's outputs must have the bits of a plain run of
// the same inputs (memcmp); a model that decides anything on the host from its inputs' values
// must never replay (a stale shape, a skipped index check); a new signature (shape, rounding
// mode, backend) must not reuse another's capture; runs inside a user's capture stay plain.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "maroon/backend.h"
#include "maroon/jit.h"
#include "maroon/onnx.h"
#include "maroon/round.h"
#include "util.h"

using maroon::Tensor;
using maroon::onnx::Model;
using maroon::onnx::OnnxError;
using namespace maroon::onnx_test;
using RpP = ::onnx::TensorProto;

namespace {

::onnx::ModelProto rp_model() {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  return m;
}

// y = Softmax(Relu(x·W + b) / 3) and z = ReduceSum(y * x[:, :4]) over the last axis, with a
// dynamic batch: a product, a fused chain, a row kernel and a reduction, several realizes.
std::string rp_mlp() {
  ::onnx::ModelProto m = rp_model();
  auto* g = m.mutable_graph();
  set_type(g->add_input(), "x", RpP::FLOAT, {"batch", "6"});
  set_type(g->add_output(), "y", RpP::FLOAT, {"batch", "4"});
  set_type(g->add_output(), "z", RpP::FLOAT, {"batch", "1"});
  add_raw_floats(g, "W", lcg_floats(24, 7), {6, 4});
  add_raw_floats(g, "b", lcg_floats(4, 8), {4});
  add_raw_floats(g, "three", {3.0f}, {});
  add_node(g, "MatMul", {"x", "W"}, {"xw"});
  add_node(g, "Add", {"xw", "b"}, {"h"});
  add_node(g, "Relu", {"h"}, {"r"});
  add_node(g, "Div", {"r", "three"}, {"s"});
  add_node(g, "Softmax", {"s"}, {"y"});
  auto* starts = g->add_initializer();
  starts->set_name("st"), starts->set_data_type(RpP::INT64), starts->add_dims(1), starts->add_int64_data(0);
  auto* ends = g->add_initializer();
  ends->set_name("en"), ends->set_data_type(RpP::INT64), ends->add_dims(1), ends->add_int64_data(4);
  auto* axes = g->add_initializer();
  axes->set_name("ax"), axes->set_data_type(RpP::INT64), axes->add_dims(1), axes->add_int64_data(1);
  add_node(g, "Slice", {"x", "st", "en", "ax"}, {"x4"});
  add_node(g, "Mul", {"y", "x4"}, {"p"});
  add_node(g, "ReduceSum", {"p", "ax"}, {"z"});
  return m.SerializeAsString();
}

Tensor rp_input(int64_t batch, uint32_t seed) {
  return Tensor::from_vector(lcg_floats(static_cast<size_t>(batch * 6), seed), {batch, 6});
}

void expect_same_bits(const std::vector<Tensor>& got, const std::vector<Tensor>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].shape(), want[i].shape()) << what << " output " << i;
    std::vector<uint8_t> a = got[i].bytes(), b = want[i].bytes();
    ASSERT_EQ(a.size(), b.size()) << what << " output " << i;
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size())) << what << " output " << i << ": bits differ";
  }
}

// Each run of `model` against a plain run of a second model (replays off) on the same input.
void expect_runs_match(const Model& model, const Model& plain, const std::vector<Tensor>& in, const std::string& what) {
  expect_same_bits(model.run(in), plain.run(in), what);
}

}  // namespace

TEST(OnnxReplay, ReplaysGiveThePlainRunsBitsOnEveryThreadCount) {
  for (int threads : {1, 2, 3}) {
    maroon::set_num_threads(threads);
    Model model = maroon::onnx::load_bytes(rp_mlp());
    Model plain = maroon::onnx::load_bytes(rp_mlp());
    plain.set_replay(false);
    for (uint32_t call = 0; call < 6; ++call)
      expect_runs_match(model, plain, {rp_input(5, 100 + call)},
                        "threads " + std::to_string(threads) + " call " + std::to_string(call));
    maroon::onnx::RunStats s = model.run_stats();
    EXPECT_EQ(s.plain, 1);  // the first run; the second captured, the other four replayed
    EXPECT_EQ(s.captures, 1);
    EXPECT_EQ(s.replays, 4);
    EXPECT_EQ(s.refused, 0);
    EXPECT_EQ(plain.run_stats().replays, 0);
  }
  maroon::set_num_threads(2);
}

TEST(OnnxReplay, EachSignatureHasItsOwnCapture) {
  Model model = maroon::onnx::load_bytes(rp_mlp());
  Model plain = maroon::onnx::load_bytes(rp_mlp());
  plain.set_replay(false);
  for (uint32_t call = 0; call < 4; ++call) {
    for (int64_t batch : {3, 7}) expect_runs_match(model, plain, {rp_input(batch, call * 10 + batch)}, "batch " + std::to_string(batch));
    // Another rounding mode is another graph (every node records its mode): never a replay of
    // the nearest-even capture.
    maroon::RoundingScope up(maroon::Round::Up);
    expect_runs_match(model, plain, {rp_input(3, call + 50)}, "rounding up");
  }
  EXPECT_EQ(model.run_stats().captures, 3);
  EXPECT_EQ(model.run_stats().replays, 6);
  maroon::set_backend(maroon::Backend::Ref);
  expect_runs_match(model, plain, {rp_input(3, 99)}, "reference executor");
  maroon::set_backend(maroon::Backend::Cpu);
  EXPECT_EQ(model.run_stats().replays, 6);  // the reference run did not replay the CPU capture
}

// Reshape's shape is a graph input: its values are read on the host each run. A replay would
// keep the captured shape, so the model must never replay.
TEST(OnnxReplay, AShapeReadFromAnInputIsNeverReplayed) {
  ::onnx::ModelProto m = rp_model();
  auto* g = m.mutable_graph();
  set_type(g->add_input(), "x", RpP::FLOAT, {"12"});
  set_type(g->add_input(), "shape", RpP::INT64, {"2"});
  set_type(g->add_output(), "y", RpP::FLOAT, {});
  add_node(g, "Reshape", {"x", "shape"}, {"y"});
  Model model = maroon::onnx::load_bytes(m.SerializeAsString());
  Tensor x = Tensor::from_vector(lcg_floats(12, 1), {12});
  for (auto [a, b] : std::vector<std::pair<int64_t, int64_t>>{{2, 6}, {2, 6}, {3, 4}, {4, 3}, {6, 2}}) {
    std::vector<Tensor> y = model.run(std::vector<Tensor>{x, Tensor::from_vector(std::vector<int64_t>{a, b}, {2})});
    EXPECT_EQ(y.at(0).shape(), (maroon::Shape{a, b}));
  }
  EXPECT_EQ(model.run_stats().replays, 0);
  EXPECT_EQ(model.run_stats().refused, 1);
}

// Gather checks its indices on the host (an index out of range is an error): with the indices
// an input, every run must check them, so an out-of-range index after two good runs still fails.
TEST(OnnxReplay, IndexChecksOnInputsStillRun) {
  ::onnx::ModelProto m = rp_model();
  auto* g = m.mutable_graph();
  set_type(g->add_input(), "i", RpP::INT64, {"3"});
  set_type(g->add_output(), "y", RpP::FLOAT, {});
  add_raw_floats(g, "table", lcg_floats(8, 2), {8});
  add_node(g, "Gather", {"table", "i"}, {"y"});
  Model model = maroon::onnx::load_bytes(m.SerializeAsString());
  auto idx = [](std::vector<int64_t> v) { return Tensor::from_vector(v, {3}); };
  model.run({idx({0, 1, 2})});
  model.run({idx({3, 4, 5})});
  std::vector<Tensor> y = model.run({idx({7, 6, -1})});
  const std::vector<float> t = lcg_floats(8, 2);
  EXPECT_EQ(y.at(0).tolist(), (std::vector<double>{t[7], t[6], t[7]}));
  EXPECT_THROW(model.run({idx({0, 8, 1})}), OnnxError);
  EXPECT_EQ(model.run_stats().replays, 0);
}

// Indices that are an initializer are read on the host too, but they are not the inputs': the
// model replays.
TEST(OnnxReplay, HostReadsOfConstantsStillReplay) {
  ::onnx::ModelProto m = rp_model();
  auto* g = m.mutable_graph();
  set_type(g->add_input(), "x", RpP::FLOAT, {"8"});
  set_type(g->add_output(), "y", RpP::FLOAT, {});
  auto* i = g->add_initializer();
  i->set_name("i"), i->set_data_type(RpP::INT64), i->add_dims(3);
  for (int64_t v : {5, 0, -2}) i->add_int64_data(v);
  add_node(g, "Gather", {"x", "i"}, {"y"});
  Model model = maroon::onnx::load_bytes(m.SerializeAsString());
  for (uint32_t call = 0; call < 4; ++call) {
    std::vector<float> v = lcg_floats(8, call);
    EXPECT_EQ(model.run({Tensor::from_vector(v, {8})}).at(0).tolist(), (std::vector<double>{v[5], v[0], v[6]}));
  }
  EXPECT_EQ(model.run_stats().replays, 2);
}

// A model run inside a user's capture is recorded by that capture (plainly), and the user's
// replays give the plain bits.
TEST(OnnxReplay, RunsInsideAUsersCaptureArePlain) {
  Model model = maroon::onnx::load_bytes(rp_mlp());
  Model plain = maroon::onnx::load_bytes(rp_mlp());
  plain.set_replay(false);
  maroon::TinyJit jit([&](const std::vector<Tensor>& in) { return model.run(in); });
  for (uint32_t call = 0; call < 4; ++call) {
    Tensor x = rp_input(4, 200 + call);
    expect_same_bits(jit({x}), plain.run({x}), "user's TinyJit call " + std::to_string(call));
  }
  EXPECT_EQ(model.run_stats().captures, 0);
  EXPECT_EQ(model.run_stats().replays, 0);
}

TEST(OnnxReplay, TurningReplaysOffRunsPlainly) {
  Model model = maroon::onnx::load_bytes(rp_mlp());
  for (uint32_t call = 0; call < 3; ++call) model.run({rp_input(2, call)});
  EXPECT_EQ(model.run_stats().replays, 1);
  model.set_replay(false);
  EXPECT_FALSE(model.replay());
  for (uint32_t call = 0; call < 3; ++call) model.run({rp_input(2, call)});
  EXPECT_EQ(model.run_stats().replays, 1);
}

// Two threads running one model at once: one replays while the other, finding the replays
// busy, runs plainly; every output keeps the plain bits.
TEST(OnnxReplay, ConcurrentRunsKeepThePlainBits) {
  Model model = maroon::onnx::load_bytes(rp_mlp());
  Model plain = maroon::onnx::load_bytes(rp_mlp());
  plain.set_replay(false);
  constexpr int kCalls = 12;
  std::vector<std::vector<std::vector<uint8_t>>> want(2);
  for (int t = 0; t < 2; ++t)
    for (int c = 0; c < kCalls; ++c) want[t].push_back(plain.run({rp_input(6, 1000 + 100 * t + c)}).at(1).bytes());
  std::vector<int> bad(2, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      for (int c = 0; c < kCalls; ++c)
        if (model.run({rp_input(6, 1000 + 100 * t + c)}).at(1).bytes() != want[t][c]) ++bad[t];
    });
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(bad[0] + bad[1], 0);
  maroon::onnx::RunStats s = model.run_stats();
  EXPECT_GT(s.replays, 0);
  EXPECT_LE(s.plain + s.captures + s.replays, 2 * kCalls);
}

// One tensor passed as two inputs: no capture is made of such a call (one leaf would stand for
// both inputs, and a replay given two tensors would read the first for both); later calls with
// two tensors capture and replay, each input read from its own tensor.
TEST(OnnxReplay, OneTensorAsTwoInputsIsNeverCaptured) {
  ::onnx::ModelProto m = rp_model();
  auto* g = m.mutable_graph();
  set_type(g->add_input(), "a", RpP::FLOAT, {"4"});
  set_type(g->add_input(), "b", RpP::FLOAT, {"4"});
  set_type(g->add_output(), "y", RpP::FLOAT, {});
  add_node(g, "Sub", {"a", "b"}, {"y"});
  Model model = maroon::onnx::load_bytes(m.SerializeAsString());
  const std::vector<float> xv = lcg_floats(4, 1), zv = lcg_floats(4, 2);
  Tensor x = Tensor::from_vector(xv, {4}), z = Tensor::from_vector(zv, {4});
  auto diff = [](const std::vector<float>& a, const std::vector<float>& b) {
    std::vector<double> d;
    for (size_t i = 0; i < a.size(); ++i) d.push_back(static_cast<double>(a[i] - b[i]));
    return d;
  };
  for (int call = 0; call < 3; ++call)
    EXPECT_EQ(model.run(std::vector<Tensor>{x, x}).at(0).tolist(), std::vector<double>(4, 0.0));
  EXPECT_EQ(model.run_stats().captures, 0);
  EXPECT_EQ(model.run(std::vector<Tensor>{x, z}).at(0).tolist(), diff(xv, zv));  // captured
  EXPECT_EQ(model.run(std::vector<Tensor>{z, x}).at(0).tolist(), diff(zv, xv));  // replayed
  EXPECT_EQ(model.run(std::vector<Tensor>{x, x}).at(0).tolist(), std::vector<double>(4, 0.0));  // replayed
  EXPECT_EQ(model.run_stats().captures, 1);
  EXPECT_EQ(model.run_stats().replays, 2);
}

// Outputs that are not computed from the inputs' kernels: the input itself, an initializer, a
// constant; and an input with no elements. Each replay's outputs are a plain run's.
TEST(OnnxReplay, OutputsThatAreInputsOrConstants) {
  ::onnx::ModelProto m = rp_model();
  auto* g = m.mutable_graph();
  set_type(g->add_input(), "x", RpP::FLOAT, {"n"});
  set_type(g->add_input(), "e", RpP::FLOAT, {"0"});
  for (const char* o : {"x", "W", "c", "y", "ee"}) set_type(g->add_output(), o, RpP::FLOAT, {});
  add_raw_floats(g, "W", lcg_floats(3, 9), {3});
  auto* cn = add_node(g, "Constant", {}, {"c"});
  auto* a = cn->add_attribute();
  a->set_name("value_float"), a->set_type(::onnx::AttributeProto::FLOAT), a->set_f(2.5f);
  add_node(g, "Mul", {"x", "c"}, {"y"});
  add_node(g, "Neg", {"e"}, {"ee"});
  Model model = maroon::onnx::load_bytes(m.SerializeAsString());
  Model plain = maroon::onnx::load_bytes(m.SerializeAsString());
  plain.set_replay(false);
  std::vector<std::vector<Tensor>> kept;
  for (uint32_t call = 0; call < 5; ++call) {
    std::vector<Tensor> in{Tensor::from_vector(lcg_floats(4, 300 + call), {4}), Tensor::zeros({0})};
    kept.push_back(model.run(in));
    expect_same_bits(kept.back(), plain.run(in), "call " + std::to_string(call));
  }
  EXPECT_EQ(model.run_stats().replays, 3);
  // What earlier calls returned keeps its bytes.
  for (uint32_t call = 0; call < 5; ++call)
    expect_same_bits(kept[call], plain.run(std::vector<Tensor>{Tensor::from_vector(lcg_floats(4, 300 + call), {4}), Tensor::zeros({0})}),
                     "kept output of call " + std::to_string(call));
}
