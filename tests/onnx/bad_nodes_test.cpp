// Bad attributes and shapes for the operator families added for issue 16's refused list (RNN,
// GRU, LSTM, ReverseSequence, MaxUnpool, the window functions, the quantize operators,
// GridSample, NonMaxSuppression, Unique, Det, QLinearMatMul/Conv,
// RoiAlign): each is
// an OnnxError naming the node and the fault, never a crash. And the recurrences with every
// option the conformance data leaves out (both directions, sequence_lens, peepholes,
// linear_before_reset, batchwise layout) give the same bits on the reference executor and the
// CPU backend.
#include <gtest/gtest.h>

#include <string>

#include "maroon/backend.h"
#include "maroon/onnx.h"
#include "util.h"

using maroon::Tensor;
using maroon::onnx::OnnxError;
using namespace maroon::onnx_test;

namespace {

void add_raw_ints(::onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& v, std::vector<int64_t> dims) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(::onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * 8));
}

std::vector<float> ramp(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(static_cast<int>(i * 37 % 23) - 11) / 16.0f;
  return v;
}

// One node named "bad" over initializers (the graph has no inputs); `fill` adds them and the node.
template <class F>
std::string node_error_of(F fill, int64_t opset = 17) {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(opset);
  auto* g = m.mutable_graph();
  set_type(g->add_output(), "Y", ::onnx::TensorProto::FLOAT, {});
  fill(g);
  try {
    maroon::onnx::load_bytes(m.SerializeAsString()).run(std::vector<Tensor>{});
  } catch (const OnnxError& e) {
    return e.what();
  }
  return "(no error)";
}

void expect_named(const std::string& e, const std::string& op, const std::string& what) {
  EXPECT_NE(e.find("node 'bad' (" + op + ")"), std::string::npos) << e;
  EXPECT_NE(e.find(what), std::string::npos) << e;
}

TEST(OnnxBadNodes, RecurrencesCheckWeightShapes) {
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    std::string e = node_error_of([&](auto* g) {
      add_raw_floats(g, "X", ramp(12), {2, 2, 3});
      add_raw_floats(g, "W", ramp(15), {1, 5, 3});  // right for RNN with hidden 5 only
      add_raw_floats(g, "R", ramp(25), {1, 5, 5});
      auto* n = add_node(g, op, {"X", "W", "R"}, {"", "Y"}, "bad");
      set_attr(n, "hidden_size", std::string(op) == "RNN" ? 4 : 5);
    });
    expect_named(e, op, "W must be (1,");
  }
}

TEST(OnnxBadNodes, ReverseSequenceChecksLengths) {
  expect_named(node_error_of([](auto* g) {
                 add_raw_floats(g, "X", ramp(8), {4, 2});
                 add_raw_ints(g, "L", {4, 5}, {2});
                 add_node(g, "ReverseSequence", {"X", "L"}, {"Y"}, "bad");
               }),
               "ReverseSequence", "sequence_lens value 5 is outside [0, 4]");
}

TEST(OnnxBadNodes, MaxUnpoolChecksIndices) {
  expect_named(node_error_of([](auto* g) {
                 add_raw_floats(g, "X", ramp(4), {1, 1, 2, 2});
                 add_raw_ints(g, "I", {0, 3, 16, 5}, {1, 1, 2, 2});
                 auto* n = add_node(g, "MaxUnpool", {"X", "I"}, {"Y"}, "bad");
                 set_attr(n, "kernel_shape", std::vector<int64_t>{2, 2});
                 set_attr(n, "strides", std::vector<int64_t>{2, 2});
               }),
               "MaxUnpool", "16");
}

TEST(OnnxBadNodes, WindowsCheckTheSize) {
  expect_named(node_error_of([](auto* g) {
                 add_raw_ints(g, "N", {-3}, {});
                 add_node(g, "HannWindow", {"N"}, {"Y"}, "bad");
               }),
               "HannWindow", "size -3 is outside");
}

TEST(OnnxBadNodes, QuantizeChecksThePerAxisScale) {
  expect_named(node_error_of([](auto* g) {
                 add_raw_floats(g, "X", ramp(6), {2, 3});
                 add_raw_floats(g, "S", {0.5f, 0.25f}, {2});
                 add_node(g, "QuantizeLinear", {"X", "S"}, {"Y"}, "bad");
               }),
               "QuantizeLinear", "the scale has 2 values for axis 1 of size 3");
}

TEST(OnnxBadNodes, GridSampleChecksTheGrid) {
  expect_named(node_error_of([](auto* g) {
                 add_raw_floats(g, "X", ramp(8), {1, 2, 2, 2});
                 add_raw_floats(g, "G", ramp(6), {1, 1, 2, 3});
                 add_node(g, "GridSample", {"X", "G"}, {"Y"}, "bad");
               }),
               "GridSample", "grid must be (1, H_out, W_out, 2)");
}

TEST(OnnxBadNodes, NonMaxSuppressionChecksBoxes) {
  expect_named(node_error_of([](auto* g) {
                 add_raw_floats(g, "B", ramp(6), {1, 2, 3});
                 add_raw_floats(g, "S", ramp(2), {1, 1, 2});
                 add_node(g, "NonMaxSuppression", {"B", "S"}, {"Y"}, "bad");
               }),
               "NonMaxSuppression", "boxes must be (batch, boxes, 4)");
}

TEST(OnnxBadNodes, UniqueChecksTheAxis) {
  expect_named(node_error_of([](auto* g) {
                 add_raw_floats(g, "X", ramp(6), {2, 3});
                 set_attr(add_node(g, "Unique", {"X"}, {"Y"}, "bad"), "axis", int64_t{2});
               }),
               "Unique", "axis 2 is out of range for rank 2");
}

TEST(OnnxBadNodes, DetNeedsSquareMatrices) {
  expect_named(node_error_of([](auto* g) {
                 add_raw_floats(g, "X", ramp(6), {2, 3});
                 add_node(g, "Det", {"X"}, {"Y"}, "bad");
               }),
               "Det", "input must be float (..., M, M), got (2,3)");
}

TEST(OnnxBadNodes, QLinearConvChecksTheBias) {
  expect_named(node_error_of([](auto* g) {
                 auto u8 = [&](const std::string& name, std::vector<int64_t> dims, size_t n) {
                   auto* t = g->add_initializer();
                   t->set_name(name);
                   t->set_data_type(::onnx::TensorProto::UINT8);
                   for (int64_t d : dims) t->add_dims(d);
                   t->set_raw_data(std::string(n, '\x03'));
                 };
                 u8("X", {1, 1, 3, 3}, 9);
                 u8("W", {2, 1, 1, 1}, 2);
                 u8("Z", {}, 1);
                 add_raw_floats(g, "S", {0.5f}, {});
                 add_raw_floats(g, "B", {1.0f, 2.0f}, {2});  // float, where int32 is required
                 add_node(g, "QLinearConv", {"X", "S", "Z", "W", "S", "Z", "S", "Z", "B"}, {"Y"}, "bad");
               }),
               "QLinearConv", "B must be int32 with one value per output channel");
}

TEST(OnnxBadNodes, RoiAlignRefusesTheAdaptiveGrid) {
  expect_named(node_error_of([](auto* g) {
                 add_raw_floats(g, "X", ramp(16), {1, 1, 4, 4});
                 add_raw_floats(g, "R", {0, 0, 2, 2}, {1, 4});
                 add_raw_ints(g, "I", {0}, {1});
                 add_node(g, "RoiAlign", {"X", "R", "I"}, {"Y"}, "bad");
               }),
               "RoiAlign", "sampling_ratio 0 is refused");
}

// The recurrences' options on both backends: one model, every output, the same bytes.
TEST(OnnxBadNodes, RecurrenceOptionsGiveTheSameBitsOnEveryBackend) {
  struct Case { const char* op; int64_t gates; bool lbr, layout; };
  for (const Case& k : {Case{"RNN", 1, false, false}, Case{"GRU", 3, false, true}, Case{"GRU", 3, true, false},
                        Case{"LSTM", 4, false, true}}) {
    const int64_t h = 3, in = 2, seq = 4, batch = 3;
    ::onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(14);
    auto* g = m.mutable_graph();
    for (const char* o : {"Y", "Yh"}) set_type(g->add_output(), o, ::onnx::TensorProto::FLOAT, {});
    add_raw_floats(g, "X", ramp(seq * batch * in), k.layout ? std::vector<int64_t>{batch, seq, in} : std::vector<int64_t>{seq, batch, in});
    add_raw_floats(g, "W", ramp(2 * k.gates * h * in), {2, k.gates * h, in});
    add_raw_floats(g, "R", ramp(2 * k.gates * h * h), {2, k.gates * h, h});
    add_raw_floats(g, "B", ramp(4 * k.gates * h), {2, 2 * k.gates * h});
    auto* lens = g->add_initializer();
    lens->set_name("L");
    lens->set_data_type(::onnx::TensorProto::INT32);
    lens->add_dims(batch);
    for (int32_t v : {4, 2, 0}) lens->add_int32_data(v);
    std::vector<std::string> ins{"X", "W", "R", "B", "L"};
    if (std::string(k.op) == "LSTM") {
      add_raw_floats(g, "P", ramp(2 * 3 * h), {2, 3 * h});
      ins.insert(ins.end(), {"", "", "P"});
    }
    auto* n = add_node(g, k.op, ins, {"Y", "Yh"});
    set_attr(n, "hidden_size", h);
    set_attr(n, "layout", k.layout ? 1 : 0);
    set_attr(n, "linear_before_reset", k.lbr ? 1 : 0);
    auto* d = n->add_attribute();
    d->set_name("direction");
    d->set_type(::onnx::AttributeProto::STRING);
    d->set_s("bidirectional");
    maroon::onnx::Model model = maroon::onnx::load_bytes(m.SerializeAsString());
    const maroon::Backend saved = maroon::backend();
    std::vector<std::vector<uint8_t>> want;
    for (const char* b : {"ref", "cpu"}) {
      maroon::set_backend(b);
      std::vector<Tensor> out = model.run(std::vector<Tensor>{});
      ASSERT_EQ(out.size(), 2u);
      EXPECT_EQ(out[0].shape(), (k.layout ? maroon::Shape{batch, seq, 2, h} : maroon::Shape{seq, 2, batch, h}));
      std::vector<std::vector<uint8_t>> got{out[0].bytes(), out[1].bytes()};
      if (want.empty()) want = got;
      EXPECT_EQ(got, want) << k.op << " on " << b;
    }
    maroon::set_backend(saved);
  }
}

}  // namespace
