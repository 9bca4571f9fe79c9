// The ONNX seeds of fuzz/make_corpus.cpp, built with protobuf's API (ONNX's generated classes):
// small models that load, each reaching a different part of the loader (raw and typed
// initializers, attributes of every kind, dynamic dimensions, a Shape->Reshape chain, a
// convolution, integer and bool tensors, an opset-6 model with legacy broadcasting, subgraphs:
// a Loop whose body holds an If reading outer values, and a Scan).
#include <filesystem>
#include <fstream>

#include "maroon/onnx.h"
#include "util.h"  // tests/onnx/util.h

using namespace maroon::onnx_test;
namespace fs = std::filesystem;

namespace {

::onnx::ModelProto model(int64_t opset) {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("make_corpus");
  m.add_opset_import()->set_version(opset);
  return m;
}

void put(const fs::path& d, const std::string& name, const ::onnx::ModelProto& m) {
  maroon::onnx::load_bytes(m.SerializeAsString(), "", name);  // every seed loads
  std::ofstream(d / name, std::ios::binary) << m.SerializeAsString();
}

// Y = Relu(X) @ W + B, X (N, 3): W as raw_data, B in the typed float_data field.
::onnx::ModelProto mlp() {
  ::onnx::ModelProto m = model(17);
  auto* g = m.mutable_graph();
  set_type(g->add_input(), "X", ::onnx::TensorProto::FLOAT, {"N", "3"});
  set_type(g->add_output(), "Y", ::onnx::TensorProto::FLOAT, {"N", "2"});
  add_raw_floats(g, "W", {1.5f, -2, 0.25f, 3, 1, -1}, {3, 2});
  auto* b = g->add_initializer();
  b->set_name("B");
  b->set_data_type(::onnx::TensorProto::FLOAT);
  b->add_dims(2);
  b->add_float_data(0.5f);
  b->add_float_data(-0.125f);
  add_node(g, "Relu", {"X"}, {"R"});
  add_node(g, "MatMul", {"R", "W"}, {"M"});
  add_node(g, "Add", {"M", "B"}, {"Y"});
  return m;
}

// Conv (pads, strides, group attributes) -> MaxPool -> Flatten -> Softmax.
::onnx::ModelProto cnn() {
  ::onnx::ModelProto m = model(13);
  auto* g = m.mutable_graph();
  set_type(g->add_input(), "X", ::onnx::TensorProto::FLOAT, {"1", "2", "6", "6"});
  set_type(g->add_output(), "Y", ::onnx::TensorProto::FLOAT, {"1", "18"});
  std::vector<float> w(2 * 1 * 3 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 5) - 2;
  add_raw_floats(g, "W", w, {2, 1, 3, 3});
  auto* conv = add_node(g, "Conv", {"X", "W"}, {"C"});
  set_attr(conv, "pads", {1, 1, 1, 1});
  set_attr(conv, "strides", {1, 1});
  set_attr(conv, "group", int64_t{2});
  auto* pool = add_node(g, "MaxPool", {"C"}, {"P"});
  set_attr(pool, "kernel_shape", {2, 2});
  set_attr(pool, "strides", {2, 2});
  auto* flat = add_node(g, "Flatten", {"P"}, {"F"});
  set_attr(flat, "axis", int64_t{1});
  add_node(g, "Softmax", {"F"}, {"Y"});
  return m;
}

// Shape -> Gather -> Concat -> Reshape (folded at load), with int64 initializers.
::onnx::ModelProto reshape_chain() {
  ::onnx::ModelProto m = model(17);
  auto* g = m.mutable_graph();
  set_type(g->add_input(), "X", ::onnx::TensorProto::FLOAT, {"B", "4", "2"});
  set_type(g->add_output(), "Y", ::onnx::TensorProto::FLOAT, {"B", "8"});
  auto* idx = g->add_initializer();
  idx->set_name("zero");
  idx->set_data_type(::onnx::TensorProto::INT64);
  idx->add_dims(1);
  idx->add_int64_data(0);
  auto* rest = g->add_initializer();
  rest->set_name("rest");
  rest->set_data_type(::onnx::TensorProto::INT64);
  rest->add_dims(1);
  rest->add_int64_data(8);
  add_node(g, "Shape", {"X"}, {"S"});
  add_node(g, "Gather", {"S", "zero"}, {"B0"});
  auto* cat = add_node(g, "Concat", {"B0", "rest"}, {"T"});
  set_attr(cat, "axis", int64_t{0});
  add_node(g, "Reshape", {"X", "T"}, {"Y"});
  return m;
}

// Integer and bool tensors, a string attribute and a TENSOR attribute (Constant).
::onnx::ModelProto ints() {
  ::onnx::ModelProto m = model(17);
  auto* g = m.mutable_graph();
  set_type(g->add_input(), "A", ::onnx::TensorProto::INT32, {"3"});
  set_type(g->add_output(), "Y", ::onnx::TensorProto::INT32, {"3"});
  auto* c = add_node(g, "Constant", {}, {"K"});
  auto* a = c->add_attribute();
  a->set_name("value");
  a->set_type(::onnx::AttributeProto::TENSOR);
  auto* t = a->mutable_t();
  t->set_data_type(::onnx::TensorProto::INT32);
  t->add_dims(3);
  for (int v : {-7, 0, 5}) t->add_int32_data(v);
  add_node(g, "Greater", {"A", "K"}, {"G"});
  add_node(g, "Where", {"G", "A", "K"}, {"W"});
  auto* shift = add_node(g, "Mod", {"W", "K"}, {"Y"});
  set_attr(shift, "fmod", int64_t{1});
  auto* mask = g->add_initializer();
  mask->set_name("unused_mask");
  mask->set_data_type(::onnx::TensorProto::BOOL);
  mask->add_dims(2);
  mask->set_raw_data(std::string("\x01\x00", 2));
  return m;
}

// Opset 6: Add with the legacy broadcast and axis attributes.
::onnx::ModelProto legacy() {
  ::onnx::ModelProto m = model(6);
  auto* g = m.mutable_graph();
  set_type(g->add_input(), "X", ::onnx::TensorProto::FLOAT, {"2", "3"});
  set_type(g->add_output(), "Y", ::onnx::TensorProto::FLOAT, {"2", "3"});
  add_raw_floats(g, "b", {1, 2}, {2});
  auto* add = add_node(g, "Add", {"X", "b"}, {"Y"});
  set_attr(add, "broadcast", int64_t{1});
  set_attr(add, "axis", int64_t{0});
  return m;
}

// Loop (M, cond, carried y) whose body holds an If on an outer value and reads the outer W; the
// Loop's scan output feeds a Scan (opset 16, reversed input) summing its rows.
::onnx::ModelProto control_flow() {
  ::onnx::ModelProto m = model(16);
  auto* g = m.mutable_graph();
  set_type(g->add_input(), "M", ::onnx::TensorProto::INT64, {});
  set_type(g->add_input(), "y0", ::onnx::TensorProto::FLOAT, {"2"});
  set_type(g->add_output(), "y", ::onnx::TensorProto::FLOAT, {"2"});
  set_type(g->add_output(), "total", ::onnx::TensorProto::FLOAT, {"2"});
  add_raw_floats(g, "W", {0.5f, -1.25f}, {2});
  auto* t = g->add_initializer();
  t->set_name("yes");
  t->set_data_type(::onnx::TensorProto::BOOL);
  t->set_raw_data(std::string("\x01", 1));
  auto* loop = add_node(g, "Loop", {"M", "yes", "y0"}, {"y", "ys"});
  auto* body = add_graph_attr(loop, "body");
  set_type(body->add_input(), "i", ::onnx::TensorProto::INT64, {});
  set_type(body->add_input(), "c", ::onnx::TensorProto::BOOL, {});
  set_type(body->add_input(), "y_in", ::onnx::TensorProto::FLOAT, {"2"});
  add_node(body, "Identity", {"c"}, {"c_out"});
  auto* branch = add_node(body, "If", {"c"}, {"y_out"});
  auto* then_g = add_graph_attr(branch, "then_branch");
  add_node(then_g, "Mul", {"y_in", "W"}, {"t"});
  set_type(then_g->add_output(), "t", ::onnx::TensorProto::FLOAT, {"2"});
  auto* else_g = add_graph_attr(branch, "else_branch");
  set_type(else_g->add_output(), "y_in", ::onnx::TensorProto::FLOAT, {"2"});
  add_node(body, "Identity", {"y_out"}, {"scan"});
  set_type(body->add_output(), "c_out", ::onnx::TensorProto::BOOL, {});
  set_type(body->add_output(), "y_out", ::onnx::TensorProto::FLOAT, {"2"});
  set_type(body->add_output(), "scan", ::onnx::TensorProto::FLOAT, {"2"});
  auto* scan = add_node(g, "Scan", {"y0", "ys"}, {"total"});
  set_attr(scan, "num_scan_inputs", int64_t{1});
  set_attr(scan, "scan_input_directions", std::vector<int64_t>{1});
  auto* sb = add_graph_attr(scan, "body");
  set_type(sb->add_input(), "acc", ::onnx::TensorProto::FLOAT, {"2"});
  set_type(sb->add_input(), "row", ::onnx::TensorProto::FLOAT, {"2"});
  add_node(sb, "Add", {"acc", "row"}, {"acc_out"});
  set_type(sb->add_output(), "acc_out", ::onnx::TensorProto::FLOAT, {"2"});
  return m;
}

}  // namespace

void onnx_models(const fs::path& d) {
  fs::create_directories(d);
  put(d, "mlp", mlp());
  put(d, "cnn", cnn());
  put(d, "reshape-chain", reshape_chain());
  put(d, "ints", ints());
  put(d, "legacy-broadcast", legacy());
  put(d, "control-flow", control_flow());
}
