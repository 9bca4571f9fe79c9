// The rewrites the ONNX operators make for speed keep the Tensor API's bits: Conv over a padded
// input written out first (so the CPU planner runs it as a matmul in place) against conv2d with
// the padding in its view, and Pow with an exponent of 2 as x * x against POW, each on the
// reference executor and the CPU backend, on values that tell signs of zero, NaN, infinities,
// subnormals and overflow apart; and the pools whose windows tile the input, cut by a reshape,
// against pool()'s windows.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "maroon/backend.h"
#include "maroon/onnx.h"
#include "util.h"

using maroon::Tensor;
using namespace maroon::onnx_test;

namespace {

std::vector<float> values(size_t n, uint32_t seed) {
  const float specials[] = {-0.0f, 0.0f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(), 1e-40f, -3e-39f, 1e20f, -2e19f, 1e-30f};
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = i % 7 == 3 ? specials[(seed >> 8) % 10] : 4.0f * (static_cast<float>(seed >> 8) / 16777216.0f - 0.5f);
  }
  return v;
}

// Runs `model` and `api` on the reference executor and the CPU backend; all four must agree.
void expect_same_bits(const maroon::onnx::Model& model, const std::vector<Tensor>& in,
                      const std::function<Tensor()>& api) {
  const maroon::Backend saved = maroon::backend();
  std::vector<uint8_t> want;
  for (const char* b : {"ref", "cpu"}) {
    maroon::set_backend(b);
    std::vector<uint8_t> direct = api().bytes(), onnx = model.run(in)[0].bytes();
    if (want.empty()) want = direct;
    EXPECT_EQ(direct, want) << b << ": the Tensor API";
    EXPECT_EQ(onnx, want) << b << ": the ONNX model";
  }
  maroon::set_backend(saved);
  EXPECT_FALSE(want.empty());
}

TEST(OnnxDecompose, PaddedConvKeepsTheBitsOfConv2d) {
  struct Case { std::vector<int64_t> pads, strides, dilations; int64_t group; };
  const Case cases[] = {{{1, 1, 1, 1}, {1, 1}, {1, 1}, 1},
                        {{2, 0, 1, 3}, {2, 1}, {1, 2}, 1},
                        {{0, 1, 0, 1}, {1, 2}, {1, 1}, 2}};
  for (const Case& k : cases) {
    ::onnx::ModelProto m;
    m.add_opset_import()->set_version(13);
    auto* g = m.mutable_graph();
    set_type(g->add_input(), "X", ::onnx::TensorProto::FLOAT, {"2", "4", "9", "8"});
    set_type(g->add_output(), "Y", ::onnx::TensorProto::FLOAT, {});
    std::vector<float> w = values(6 * (4 / k.group) * 9, 2), b = values(6, 3);
    add_raw_floats(g, "W", w, {6, 4 / k.group, 3, 3});
    add_raw_floats(g, "B", b, {6});
    auto* c = add_node(g, "Conv", {"X", "W", "B"}, {"Y"});
    set_attr(c, "pads", k.pads);
    set_attr(c, "strides", k.strides);
    set_attr(c, "dilations", k.dilations);
    set_attr(c, "group", k.group);
    maroon::onnx::Model model = maroon::onnx::load_bytes(m.SerializeAsString());
    Tensor x = Tensor::from_vector(values(2 * 4 * 9 * 8, 1), {2, 4, 9, 8});
    // The Tensor API's padding: last axis first, (before, after) each.
    std::vector<int64_t> pads{k.pads[1], k.pads[3], k.pads[0], k.pads[2]};
    expect_same_bits(model, {x}, [&] {
      return x.conv2d(Tensor::from_vector(w, {6, 4 / k.group, 3, 3}), Tensor::from_vector(b, {6}), k.group, k.strides,
                      k.dilations, pads, false);
    });
  }
}

// MaxPool and AveragePool whose windows tile the input (stride = kernel, no padding) cut them by
// a reshape instead of pool()'s views: the same bits as pool() and the same reduction, on sizes
// the kernel divides and sizes it does not (floor mode drops the rest), over +0/-0 and NaN.
TEST(OnnxDecompose, TiledPoolKeepsTheBitsOfPool) {
  struct Case { std::vector<int64_t> kernel; std::string h, w; };
  const Case cases[] = {{{2, 2}, "8", "8"}, {{2, 2}, "9", "7"}, {{3, 2}, "9", "8"}, {{1, 4}, "5", "9"}};
  for (const Case& k : cases)
    for (const char* op : {"MaxPool", "AveragePool"}) {
      ::onnx::ModelProto m;
      m.add_opset_import()->set_version(13);
      auto* g = m.mutable_graph();
      set_type(g->add_input(), "X", ::onnx::TensorProto::FLOAT, {"2", "3", k.h, k.w});
      set_type(g->add_output(), "Y", ::onnx::TensorProto::FLOAT, {});
      auto* n = add_node(g, op, {"X"}, {"Y"});
      set_attr(n, "kernel_shape", k.kernel);
      set_attr(n, "strides", k.kernel);
      maroon::onnx::Model model = maroon::onnx::load_bytes(m.SerializeAsString());
      const int64_t h = std::stoll(k.h), w = std::stoll(k.w);
      Tensor x = Tensor::from_vector(values(static_cast<size_t>(6 * h * w), 11), {2, 3, h, w});
      const maroon::Axis axes(std::vector<int64_t>{-2, -1});
      expect_same_bits(model, {x}, [&] {
        Tensor win = x.pool(k.kernel, k.kernel, {1});
        if (std::string(op) == "MaxPool") return win.max(axes);
        Tensor ones = Tensor::full({1, 1, h, w}, 1.0, maroon::DType::Float32).pool(k.kernel, k.kernel, {1});
        return win.sum(axes).div(ones.sum(axes));
      });
    }
}

TEST(OnnxDecompose, PowOfTwoKeepsTheBitsOfPow) {
  for (const std::vector<int64_t>& exp_dims : {std::vector<int64_t>{}, std::vector<int64_t>{1, 1}}) {
    ::onnx::ModelProto m;
    m.add_opset_import()->set_version(13);
    auto* g = m.mutable_graph();
    set_type(g->add_input(), "X", ::onnx::TensorProto::FLOAT, {"3", "50"});
    set_type(g->add_output(), "Y", ::onnx::TensorProto::FLOAT, {});
    add_raw_floats(g, "E", {2.0f}, exp_dims);
    add_node(g, "Pow", {"X", "E"}, {"Y"});
    maroon::onnx::Model model = maroon::onnx::load_bytes(m.SerializeAsString());
    Tensor x = Tensor::from_vector(values(150, 7), {3, 50});
    expect_same_bits(model, {x}, [&] { return x.pow(Tensor::full({}, 2.0, maroon::DType::Float32)); });
  }
}

}  // namespace
