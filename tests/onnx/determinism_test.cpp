// An ONNX CNN (Conv with groups and pads, Relu, MaxPool, BatchNormalization, Tanh,
// GlobalAveragePool, Gemm, LogSoftmax) gives the same bits on every SIMD target this machine
// runs, on 1 and 3 threads, and on the scalar reference executor (the oracle).
#include <gtest/gtest.h>

#include "maroon/backend.h"
#include "maroon/onnx.h"
#include "util.h"

using maroon::Tensor;
using namespace maroon::onnx_test;

namespace {

std::vector<float> values(size_t n, uint32_t seed, float scale, float offset = 0) {
  std::vector<float> v(n);
  for (float& f : v) {
    seed = seed * 1664525u + 1013904223u;
    f = offset + scale * (static_cast<float>(seed >> 8) / 16777216.0f - 0.5f);
  }
  return v;
}

std::string cnn() {
  ::onnx::ModelProto m;
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  set_type(g->add_input(), "X", ::onnx::TensorProto::FLOAT, {"N", "3", "12", "12"});
  set_type(g->add_output(), "Y", ::onnx::TensorProto::FLOAT, {"N", "10"});
  add_raw_floats(g, "W1", values(8 * 3 * 9, 1, 0.6f), {8, 3, 3, 3});
  add_raw_floats(g, "B1", values(8, 2, 0.2f), {8});
  add_raw_floats(g, "W2", values(8 * 4 * 9, 3, 0.4f), {8, 4, 3, 3});
  add_raw_floats(g, "scale", values(8, 4, 0.5f, 1.0f), {8});
  add_raw_floats(g, "bias", values(8, 5, 0.3f), {8});
  add_raw_floats(g, "mean", values(8, 6, 0.3f), {8});
  add_raw_floats(g, "var", values(8, 7, 0.5f, 1.0f), {8});
  add_raw_floats(g, "Wfc", values(10 * 8, 8, 0.8f), {10, 8});
  add_raw_floats(g, "Bfc", values(10, 9, 0.1f), {10});
  auto* c1 = add_node(g, "Conv", {"X", "W1", "B1"}, {"c1"});
  set_attr(c1, "pads", std::vector<int64_t>{1, 1, 1, 1});
  add_node(g, "Relu", {"c1"}, {"r1"});
  auto* p = add_node(g, "MaxPool", {"r1"}, {"p1"});
  set_attr(p, "kernel_shape", std::vector<int64_t>{2, 2});
  set_attr(p, "strides", std::vector<int64_t>{2, 2});
  auto* c2 = add_node(g, "Conv", {"p1", "W2"}, {"c2"});
  set_attr(c2, "group", int64_t{2});
  set_attr(c2, "pads", std::vector<int64_t>{1, 0, 1, 0});
  add_node(g, "BatchNormalization", {"c2", "scale", "bias", "mean", "var"}, {"bn"});
  add_node(g, "Tanh", {"bn"}, {"t"});
  add_node(g, "GlobalAveragePool", {"t"}, {"gap"});
  add_node(g, "Flatten", {"gap"}, {"f"});
  auto* fc = add_node(g, "Gemm", {"f", "Wfc", "Bfc"}, {"fc"});
  set_attr(fc, "transB", int64_t{1});
  add_node(g, "LogSoftmax", {"fc"}, {"Y"});
  return m.SerializeAsString();
}

// The backend, SIMD target and thread count, restored when it goes.
struct SavedSettings {
  std::string simd = maroon::simd_target();
  int threads = maroon::num_threads();
  maroon::Backend backend = maroon::backend();
  ~SavedSettings() {
    maroon::set_simd_target(simd);
    maroon::set_num_threads(threads);
    maroon::set_backend(backend);
  }
};

// Runs `model` on x on the CPU backend, on every SIMD target this machine has and 1 and 3 threads,
// `reps` times each (runs after the second replay), each output's bytes against `want`. Returns
// the runs.
int expect_everywhere(const maroon::onnx::Model& model, const Tensor& x, const std::vector<uint8_t>& want, int reps) {
  maroon::set_backend("cpu");
  int runs = 0;
  for (const std::string& target : maroon::available_simd_targets()) {
    maroon::set_simd_target(target);
    for (int threads : {1, 3}) {
      maroon::set_num_threads(threads);
      for (int run = 1; run <= reps; ++run, ++runs)
        EXPECT_EQ(model.run({x})[0].bytes(), want) << target << ", " << threads << " thread(s), run " << run;
    }
  }
  return runs;
}

}  // namespace

TEST(OnnxDeterminism, SameBitsOnEverySimdTargetThreadCountAndTheReference) {
  maroon::onnx::Model model = maroon::onnx::load_bytes(cnn());
  Tensor x = Tensor::from_vector(values(5 * 3 * 12 * 12, 10, 4.0f), {5, 3, 12, 12});
  const SavedSettings saved;
  maroon::set_backend("ref");
  std::vector<uint8_t> want = model.run({x})[0].bytes();
  ASSERT_EQ(want.size(), 5u * 10 * 4);
  EXPECT_GE(expect_everywhere(model, x, want, 1), 2);
}

// The same model under FusedScope (its Conv and Gemm as REDUCE_MULACC, docs/spec.md §14): other
// bits than the default's, and again the same on every target, thread count and the reference,
// also when later runs replay the captured kernels (run 3 of each configuration).
TEST(OnnxDeterminism, FusedProductsSameBitsEverywhereAndReplayed) {
  maroon::onnx::Model model = maroon::onnx::load_bytes(cnn());
  Tensor x = Tensor::from_vector(values(5 * 3 * 12 * 12, 10, 4.0f), {5, 3, 12, 12});
  const SavedSettings saved;
  maroon::set_backend("ref");
  const std::vector<uint8_t> plain = model.run({x})[0].bytes();
  maroon::FusedScope fused;
  const std::vector<uint8_t> want = model.run({x})[0].bytes();
  ASSERT_EQ(want.size(), plain.size());
  EXPECT_NE(want, plain) << "fusing the products changed no bit of this model";
  EXPECT_GE(expect_everywhere(model, x, want, 3), 6);
  EXPECT_GT(model.run_stats().replays, 0) << "no run replayed";
}
