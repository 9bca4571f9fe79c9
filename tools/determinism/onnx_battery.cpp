// The ONNX workload (class onnx:infer): two small models built here with protobuf's API (ONNX's
// generated classes, as tests/onnx does), serialized, loaded back through maroon::onnx and run on
// a fixed batch. Building them in code keeps them out of the repository (no binary model file)
// and makes them the same in every configuration; weights and inputs are float bits drawn by
// integer code (Rng), never float arithmetic, so a caller FP state (--fpstate) cannot change them.
//   onnx.cnn      Conv (pads) -> BatchNormalization -> Relu -> MaxPool -> Conv (group 2,
//                 dilation 2) -> Sigmoid -> AveragePool (count_include_pad) -> Flatten -> Gemm ->
//                 Softmax: 4 images of 3x16x16
//   onnx.encoder  a pre-norm transformer encoder layer as exporters write it: LayerNormalization,
//                 two-head attention whose reshapes take the batch and length from a
//                 Shape -> Gather -> Concat subgraph, Softmax, residual adds, an Erf GELU MLP:
//                 2 sequences of 8 tokens of 16 features
// Class onnx:fused runs both again under FusedScope (Conv, Gemm and MatMul as REDUCE_MULACC,
// docs/spec.md §14: FMA tiles where the target has FMA, software steps elsewhere): onnx.*.fused.
// Each model's output bytes are the onnx.* lines; onnx.*.digest is the inference digest
// (tensors_digest(kInferenceTag, outputs), what `maroon run` prints). tests/data/
// onnx_battery_digest.txt holds the expected lines (checked by the ctest determinism_onnx_digests).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "battery.h"

#if defined(MAROON_WITH_ONNX)
#include "../../tests/onnx/util.h"
#include "maroon/digest.h"
#include "maroon/onnx.h"

namespace maroon::determinism {
namespace {

using namespace maroon::onnx_test;
using ::onnx::GraphProto;
using ::onnx::TensorProto;

// float32 bits with a random sign and mantissa and an exponent in [emin, emax] (unbiased): values
// of magnitude 2^emin .. 2^(emax+1), from integers only.
uint32_t float_bits(Rng& g, int emin, int emax) {
  const uint32_t e = static_cast<uint32_t>(127 + emin + static_cast<int>(g.next() % (emax - emin + 1)));
  return static_cast<uint32_t>(g.next() & 0x807fffffu) | (e << 23);
}

std::vector<float> floats(const std::string& key, size_t n, int emin, int emax) {
  Rng g(key);
  std::vector<float> v(n);
  for (float& f : v) {
    const uint32_t b = float_bits(g, emin, emax);
    std::memcpy(&f, &b, 4);
  }
  return v;
}

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

void weights(GraphProto* g, const std::string& name, std::vector<int64_t> dims, int emin, int emax) {
  size_t n = 1;
  for (int64_t d : dims) n *= static_cast<size_t>(d);
  add_raw_floats(g, name, floats("onnx/" + name, n, emin, emax), dims);
}

void int64s(GraphProto* g, const std::string& name, const std::vector<int64_t>& v) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(v.size()));
  for (int64_t x : v) t->add_int64_data(x);
}

std::string cnn_model() {
  ::onnx::ModelProto m;
  m.set_ir_version(8);  // what onnx.checker wants for the opsets below
  m.add_opset_import()->set_version(13);
  GraphProto* g = m.mutable_graph();
  g->set_name("battery_cnn");
  set_type(g->add_input(), "X", TensorProto::FLOAT, {"N", "3", "16", "16"});
  set_type(g->add_output(), "Y", TensorProto::FLOAT, {"N", "10"});
  weights(g, "W1", {8, 3, 3, 3}, -4, -2);
  weights(g, "B1", {8}, -5, -3);
  for (const char* bn : {"scale", "mean"}) weights(g, bn, {8}, -2, -1);
  weights(g, "bias", {8}, -4, -2);
  std::vector<float> var = floats("onnx/var", 8, -1, -1);  // magnitudes 0.5 .. 1, made positive
  for (float& f : var) f = std::fabs(f);
  add_raw_floats(g, "var", var, {8});
  weights(g, "W2", {16, 4, 3, 3}, -4, -2);
  weights(g, "Wfc", {10, 256}, -6, -4);
  weights(g, "Bfc", {10}, -5, -3);
  set_attr(add_node(g, "Conv", {"X", "W1", "B1"}, {"c1"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  add_node(g, "BatchNormalization", {"c1", "scale", "bias", "mean", "var"}, {"bn"});
  add_node(g, "Relu", {"bn"}, {"r1"});
  auto* p = add_node(g, "MaxPool", {"r1"}, {"p1"});
  set_attr(p, "kernel_shape", std::vector<int64_t>{2, 2});
  set_attr(p, "strides", std::vector<int64_t>{2, 2});
  auto* c2 = add_node(g, "Conv", {"p1", "W2"}, {"c2"});
  set_attr(c2, "group", int64_t{2});
  set_attr(c2, "dilations", std::vector<int64_t>{2, 2});
  set_attr(c2, "pads", std::vector<int64_t>{2, 2, 2, 2});
  add_node(g, "Sigmoid", {"c2"}, {"s"});
  auto* a = add_node(g, "AveragePool", {"s"}, {"ap"});
  set_attr(a, "kernel_shape", std::vector<int64_t>{3, 3});
  set_attr(a, "strides", std::vector<int64_t>{2, 2});
  set_attr(a, "pads", std::vector<int64_t>{1, 1, 1, 1});
  set_attr(a, "count_include_pad", int64_t{1});
  add_node(g, "Flatten", {"ap"}, {"f"});
  set_attr(add_node(g, "Gemm", {"f", "Wfc", "Bfc"}, {"fc"}), "transB", int64_t{1});
  set_attr(add_node(g, "Softmax", {"fc"}, {"Y"}), "axis", int64_t{1});
  return m.SerializeAsString();
}


// Scalar initializers by their bits (no float arithmetic, no rounding mode involved).
void scalar(GraphProto* g, const std::string& name, uint32_t bits) { add_raw_floats(g, name, {from_bits(bits)}, {}); }

// q, k or v of the attention: a projection, split into heads, [N, heads, T, 8] (perm 0,2,1,3) or
// k's [N, heads, 8, T] (perm 0,2,3,1).
void head_split(GraphProto* g, const std::string& x, const std::string& w, std::vector<int64_t> perm) {
  weights(g, "W" + w, {16, 16}, -4, -2);
  weights(g, "b" + w, {16}, -5, -3);
  add_node(g, "MatMul", {x, "W" + w}, {w + "0"});
  add_node(g, "Add", {w + "0", "b" + w}, {w + "1"});
  add_node(g, "Reshape", {w + "1", "shape4"}, {w + "2"});
  set_attr(add_node(g, "Transpose", {w + "2"}, {w + "h"}), "perm", perm);
}

void layer_norm(GraphProto* g, const std::string& x, const std::string& y) {
  weights(g, y + ".g", {16}, -1, 0);
  weights(g, y + ".b", {16}, -5, -3);
  set_attr(add_node(g, "LayerNormalization", {x, y + ".g", y + ".b"}, {y}), "axis", int64_t{-1});
}

std::string encoder_model() {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);  // LayerNormalization
  GraphProto* g = m.mutable_graph();
  g->set_name("battery_encoder");
  set_type(g->add_input(), "X", TensorProto::FLOAT, {"N", "T", "16"});
  set_type(g->add_output(), "Y", TensorProto::FLOAT, {"N", "T", "16"});
  int64s(g, "nt_idx", {0, 1});
  int64s(g, "heads", {2, 8});
  int64s(g, "model", {16});
  scalar(g, "sqrt8", 0x403504f3u);  // 2.828427f: sqrt(head size), rounded
  scalar(g, "sqrt2", 0x3fb504f3u);
  scalar(g, "one", 0x3f800000u);
  scalar(g, "half", 0x3f000000u);
  // The batch and length from the input's shape, as exporters write dynamic reshapes.
  add_node(g, "Shape", {"X"}, {"xs"});
  set_attr(add_node(g, "Gather", {"xs", "nt_idx"}, {"nt"}), "axis", int64_t{0});
  set_attr(add_node(g, "Concat", {"nt", "heads"}, {"shape4"}), "axis", int64_t{0});
  set_attr(add_node(g, "Concat", {"nt", "model"}, {"shape3"}), "axis", int64_t{0});
  layer_norm(g, "X", "ln1");
  head_split(g, "ln1", "q", {0, 2, 1, 3});
  head_split(g, "ln1", "k", {0, 2, 3, 1});
  head_split(g, "ln1", "v", {0, 2, 1, 3});
  add_node(g, "MatMul", {"qh", "kh"}, {"sc"});
  add_node(g, "Div", {"sc", "sqrt8"}, {"sd"});
  set_attr(add_node(g, "Softmax", {"sd"}, {"att"}), "axis", int64_t{-1});
  add_node(g, "MatMul", {"att", "vh"}, {"o"});
  set_attr(add_node(g, "Transpose", {"o"}, {"ot"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  add_node(g, "Reshape", {"ot", "shape3"}, {"om"});
  weights(g, "Wo", {16, 16}, -4, -2);
  add_node(g, "MatMul", {"om", "Wo"}, {"proj"});
  add_node(g, "Add", {"X", "proj"}, {"h"});
  layer_norm(g, "h", "ln2");
  weights(g, "W1", {16, 32}, -4, -2);
  weights(g, "b1", {32}, -5, -3);
  weights(g, "W2", {32, 16}, -5, -3);
  add_node(g, "MatMul", {"ln2", "W1"}, {"f0"});
  add_node(g, "Add", {"f0", "b1"}, {"f1"});
  // GELU as PyTorch exports it (opset < 20): x * (1 + erf(x / sqrt 2)) * 0.5.
  add_node(g, "Div", {"f1", "sqrt2"}, {"e0"});
  add_node(g, "Erf", {"e0"}, {"e1"});
  add_node(g, "Add", {"e1", "one"}, {"e2"});
  add_node(g, "Mul", {"f1", "e2"}, {"e3"});
  add_node(g, "Mul", {"e3", "half"}, {"gelu"});
  add_node(g, "MatMul", {"gelu", "W2"}, {"f2"});
  add_node(g, "Add", {"h", "f2"}, {"Y"});
  return m.SerializeAsString();
}

// One model's lines: its outputs (class onnx:infer, or onnx:fused with its products fused) and
// inference digest, each name suffixed ".fused" when fused; its inputs are drawn as unfused.
void run_onnx_workload(Recorder& rec, const std::string& name, const std::string& model, const Shape& shape,
                       bool fused) {
  const FusedScope scope(fused);
  const std::string tag = fused ? name + ".fused" : name;
  const onnx::Model m = onnx::load_bytes(model, "", name);
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  const Tensor input = Tensor::from_vector(floats(name + "/input", n, -3, 0), shape);
  const std::vector<Tensor> out = m.run({input});
  for (const Tensor& t : out) rec.add(fused ? "onnx:fused" : "onnx:infer", tag, t);
  const std::string digest = tensors_digest(kInferenceTag, out);
  rec.note(tag + ".digest", digest);
  // A run on other values (captured), then the input again: a replay of the capture
  // (src/onnx/replay.h), which must give the plain run's bits on this build too.
  m.run({Tensor::from_vector(floats(name + "/other", n, -3, 0), shape)});
  const std::string replayed = tensors_digest(kInferenceTag, m.run({input}));
  if (m.run_stats().replays != 1 || replayed != digest)
    throw Error(tag + ": the replayed run " + (m.run_stats().replays != 1 ? "did not replay" : "gave other bits") +
                " (digest " + replayed + ", plain " + digest + ")");
}

}  // namespace

bool run_onnx_battery(Recorder& rec) {
  struct Workload {
    std::string name, model;
    Shape input;
  };
  const Workload all[] = {{"onnx.cnn", cnn_model(), {4, 3, 16, 16}}, {"onnx.encoder", encoder_model(), {2, 8, 16}}};
  std::printf("# onnx: 2 models built in code (onnx_battery.cpp), loaded with maroon::onnx::load_bytes, "
              "unfused and fused\n");
  std::fflush(stdout);
  for (const bool fused : {false, true})
    for (const Workload& w : all) run_onnx_workload(rec, w.name, w.model, w.input, fused);
  return true;
}

}  // namespace maroon::determinism

#else

namespace maroon::determinism {
bool run_onnx_battery(Recorder&) { return false; }
}  // namespace maroon::determinism

#endif
