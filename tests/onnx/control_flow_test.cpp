// If, Loop and Scan (src/onnx/ops_control.cpp): a Loop and a Scan give exactly the bits of the
// same nodes unrolled (on the CPU backend and the reference executor), subgraphs read outer-scope
// values by name, and bad control flow is an OnnxError naming the node and the fault: an unknown
// name, wrong output counts, a negative or huge trip count, a condition that is not bool,
// mismatched carried values, and nesting deeper than the loader allows (100,000 nested Ifs
// included, which must not overflow the stack).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "maroon/backend.h"
#include "maroon/onnx.h"
#include "util.h"

using maroon::Tensor;
using maroon::onnx::OnnxError;
using namespace maroon::onnx_test;
using CfP = ::onnx::TensorProto;

namespace {

::onnx::ModelProto cf_model(int64_t opset) {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(opset);
  return m;
}

void cf_const_ints(::onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& v, std::vector<int64_t> dims) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(CfP::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t x : v) t->add_int64_data(x);
}

// A Constant node making a one-element tensor of type `elem` (bool, float or int64).
void cf_constant(::onnx::GraphProto* g, const std::string& out, int elem, double value) {
  auto* n = add_node(g, "Constant", {}, {out});
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(::onnx::AttributeProto::TENSOR);
  auto* t = a->mutable_t();
  t->set_data_type(elem);
  if (elem == CfP::FLOAT) t->add_float_data(static_cast<float>(value));
  else if (elem == CfP::INT64) t->add_int64_data(static_cast<int64_t>(value));
  else t->add_int32_data(static_cast<int32_t>(value));
}

constexpr int64_t kCfSteps = 5, kCfWidth = 4;
constexpr int kCfMaxDepth = 32;  // docs/onnx.md: subgraphs nest at most 32 levels

// y' = Tanh(y·A + X2[i]) with X2 = X·1.5 computed outside the body (an outer-scope node output
// the body reads by name), s = Sqrt(|y'|) + y' the scan output. Loop form when `unrolled` is
// false; else the same nodes written out kCfSteps times and the scan outputs concatenated.
std::string cf_recurrence(bool unrolled) {
  ::onnx::ModelProto m = cf_model(13);
  auto* g = m.mutable_graph();
  set_type(g->add_input(), "y0", CfP::FLOAT, {std::to_string(kCfWidth)});
  set_type(g->add_output(), "y", CfP::FLOAT, {});
  set_type(g->add_output(), "s", CfP::FLOAT, {});
  add_raw_floats(g, "X", lcg_floats(kCfSteps * kCfWidth, 3), {kCfSteps, kCfWidth});
  add_raw_floats(g, "A", lcg_floats(kCfWidth, 4), {kCfWidth});
  add_raw_floats(g, "k", {1.5f}, {});
  add_node(g, "Mul", {"X", "k"}, {"X2"});
  // One step from `y` at index `i` (a graph value) to `y_out` and `s_out`, in graph `b`.
  auto step = [](::onnx::GraphProto* b, const std::string& y, const std::string& i, const std::string& p) {
    auto* gather = add_node(b, "Gather", {"X2", i}, {p + "xi"});
    set_attr(gather, "axis", int64_t{0});
    add_node(b, "Mul", {y, "A"}, {p + "ya"});
    add_node(b, "Add", {p + "ya", p + "xi"}, {p + "pre"});
    add_node(b, "Tanh", {p + "pre"}, {p + "y"});
    add_node(b, "Abs", {p + "y"}, {p + "abs"});
    add_node(b, "Sqrt", {p + "abs"}, {p + "sq"});
    add_node(b, "Add", {p + "sq", p + "y"}, {p + "s"});
  };
  if (!unrolled) {
    cf_const_ints(g, "M", {kCfSteps}, {});
    auto* loop = add_node(g, "Loop", {"M", "", "y0"}, {"y", "s"}, "loop");
    auto* b = add_graph_attr(loop, "body");
    set_type(b->add_input(), "i", CfP::INT64, {});
    set_type(b->add_input(), "c", CfP::BOOL, {});
    set_type(b->add_input(), "y_in", CfP::FLOAT, {std::to_string(kCfWidth)});
    step(b, "y_in", "i", "b_");
    add_node(b, "Identity", {"c"}, {"c_out"});
    set_type(b->add_output(), "c_out", CfP::BOOL, {});
    set_type(b->add_output(), "b_y", CfP::FLOAT, {});
    set_type(b->add_output(), "b_s", CfP::FLOAT, {});
    return m.SerializeAsString();
  }
  std::string y = "y0";
  std::vector<std::string> scans;
  for (int64_t i = 0; i < kCfSteps; ++i) {
    const std::string p = "u" + std::to_string(i) + "_";
    cf_const_ints(g, p + "i", {i}, {});
    step(g, y, p + "i", p);
    add_node(g, "Unsqueeze", {p + "s", "zero"}, {p + "s1"});
    y = p + "y";
    scans.push_back(p + "s1");
  }
  cf_const_ints(g, "zero", {0}, {1});
  add_node(g, "Identity", {y}, {"y"});
  auto* cat = add_node(g, "Concat", scans, {"s"});
  set_attr(cat, "axis", int64_t{0});
  return m.SerializeAsString();
}

template <class F>
std::string cf_error_of(F f) {
  try {
    f();
  } catch (const OnnxError& e) {
    return e.what();
  }
  return "(no error)";
}

// Loads and runs `m` with no inputs; the error, or "(no error)".
std::string cf_run_error(const ::onnx::ModelProto& m, const std::vector<Tensor>& in = {}) {
  return cf_error_of([&] { maroon::onnx::load_bytes(m.SerializeAsString()).run(in); });
}

void cf_expect(const std::string& e, const std::string& node, const std::string& what) {
  EXPECT_NE(e.find(node), std::string::npos) << e;
  EXPECT_NE(e.find(what), std::string::npos) << e;
}

// An If node over the graph input `cond`, whose branches each output a Constant of `elem`.
::onnx::ModelProto cf_if(int cond_elem, size_t then_outputs = 1) {
  ::onnx::ModelProto m = cf_model(13);
  auto* g = m.mutable_graph();
  set_type(g->add_input(), "cond", cond_elem, {});
  set_type(g->add_output(), "r", CfP::FLOAT, {});
  auto* n = add_node(g, "If", {"cond"}, {"r"}, "if");
  for (const char* br : {"then_branch", "else_branch"}) {
    auto* b = add_graph_attr(n, br);
    const size_t outs = std::string(br) == "then_branch" ? then_outputs : 1;
    for (size_t k = 0; k < outs; ++k) {
      const std::string o = std::string(br) + std::to_string(k);
      cf_constant(b, o, CfP::FLOAT, std::string(br) == "then_branch" ? 1.0 : -1.0);
      set_type(b->add_output(), o, CfP::FLOAT, {});
    }
  }
  return m;
}

// A Loop over M (int64 input) and cond (bool input) carrying y (float [2]); `edit` changes the body.
template <class F>
::onnx::ModelProto cf_loop(F edit) {
  ::onnx::ModelProto m = cf_model(13);
  auto* g = m.mutable_graph();
  set_type(g->add_input(), "M", CfP::INT64, {});
  set_type(g->add_input(), "cond", CfP::BOOL, {});
  set_type(g->add_input(), "y0", CfP::FLOAT, {"2"});
  set_type(g->add_output(), "y", CfP::FLOAT, {});
  auto* loop = add_node(g, "Loop", {"M", "cond", "y0"}, {"y"}, "loop");
  auto* b = add_graph_attr(loop, "body");
  set_type(b->add_input(), "i", CfP::INT64, {});
  set_type(b->add_input(), "c", CfP::BOOL, {});
  set_type(b->add_input(), "y_in", CfP::FLOAT, {"2"});
  add_node(b, "Identity", {"c"}, {"c_out"});
  add_node(b, "Neg", {"y_in"}, {"y_out"});
  set_type(b->add_output(), "c_out", CfP::BOOL, {});
  set_type(b->add_output(), "y_out", CfP::FLOAT, {});
  edit(g, loop, b);
  return m;
}

std::vector<Tensor> cf_loop_inputs(int64_t trip, bool cond, size_t width = 2) {
  return {Tensor::from_vector(std::vector<int64_t>{trip}, {}),
          Tensor::from_vector(std::vector<uint8_t>{cond}, {}, maroon::DType::Bool),
          Tensor::from_vector(std::vector<float>(width, 1.0f), {static_cast<int64_t>(width)})};
}

// `depth` Ifs, each the then_branch of the one outside it; the innermost branches output 7.
::onnx::ModelProto cf_nested_ifs(int depth) {
  ::onnx::ModelProto m = cf_model(13);
  auto* g = m.mutable_graph();
  set_type(g->add_input(), "c", CfP::BOOL, {});
  set_type(g->add_output(), "r", CfP::FLOAT, {});
  ::onnx::GraphProto* at = g;
  for (int d = 0; d < depth; ++d) {
    auto* n = add_node(at, "If", {"c"}, {"r"}, "if" + std::to_string(d));
    auto* e = add_graph_attr(n, "else_branch");
    cf_constant(e, "r", CfP::FLOAT, -1.0);
    set_type(e->add_output(), "r", CfP::FLOAT, {});
    at = add_graph_attr(n, "then_branch");
    set_type(at->add_output(), "r", CfP::FLOAT, {});
  }
  cf_constant(at, "r", CfP::FLOAT, 7.0);
  return m;
}

// protobuf's wire format, written out by hand so a test can build nesting deeper than
// protobuf's own serializer would recurse.
std::string cf_varint(uint64_t v) {
  std::string s;
  for (; v >= 0x80; v >>= 7) s.push_back(static_cast<char>((v & 0x7f) | 0x80));
  s.push_back(static_cast<char>(v));
  return s;
}
std::string cf_field(int number, const std::string& bytes) { return cf_varint(static_cast<uint64_t>(number) << 3 | 2) + cf_varint(bytes.size()) + bytes; }

}  // namespace

TEST(OnnxControlFlow, LoopEqualsTheSameNodesUnrolledBitForBit) {
  maroon::onnx::Model loop = maroon::onnx::load_bytes(cf_recurrence(false));
  maroon::onnx::Model flat = maroon::onnx::load_bytes(cf_recurrence(true));
  Tensor y0 = Tensor::from_vector(lcg_floats(kCfWidth, 9), {kCfWidth});
  const maroon::Backend saved = maroon::backend();
  maroon::set_backend("ref");  // the oracle: the unrolled nodes on the reference executor
  std::vector<Tensor> want = flat.run({y0});
  ASSERT_EQ(want[1].shape(), (maroon::Shape{kCfSteps, kCfWidth}));
  for (const char* b : {"ref", "cpu"}) {
    maroon::set_backend(b);
    std::vector<Tensor> got = loop.run({y0});
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[1].shape(), want[1].shape());
    EXPECT_EQ(got[0].bytes(), want[0].bytes()) << b;
    EXPECT_EQ(got[1].bytes(), want[1].bytes()) << b;
  }
  maroon::set_backend(saved);
}

// Scan with a reversed scan input along axis 1 and a reversed scan output along axis 1, against
// the same operations written with the Tensor API.
TEST(OnnxControlFlow, ScanAxesAndDirectionsEqualTheTensorApiUnrolled) {
  ::onnx::ModelProto m = cf_model(16);
  auto* g = m.mutable_graph();
  set_type(g->add_input(), "s0", CfP::FLOAT, {"3"});
  set_type(g->add_input(), "x", CfP::FLOAT, {"3", "4"});
  set_type(g->add_output(), "s", CfP::FLOAT, {});
  set_type(g->add_output(), "z", CfP::FLOAT, {});
  auto* n = add_node(g, "Scan", {"s0", "x"}, {"s", "z"}, "scan");
  set_attr(n, "num_scan_inputs", int64_t{1});
  set_attr(n, "scan_input_axes", std::vector<int64_t>{-1});
  set_attr(n, "scan_input_directions", std::vector<int64_t>{1});
  set_attr(n, "scan_output_axes", std::vector<int64_t>{1});
  set_attr(n, "scan_output_directions", std::vector<int64_t>{1});
  auto* b = add_graph_attr(n, "body");
  set_type(b->add_input(), "st", CfP::FLOAT, {"3"});
  set_type(b->add_input(), "xt", CfP::FLOAT, {"3"});
  add_node(b, "Mul", {"st", "xt"}, {"m"});
  add_node(b, "Sin", {"m"}, {"sn"});
  add_node(b, "Add", {"sn", "xt"}, {"st_out"});
  add_node(b, "Exp", {"st_out"}, {"z_out"});
  set_type(b->add_output(), "st_out", CfP::FLOAT, {"3"});
  set_type(b->add_output(), "z_out", CfP::FLOAT, {"3"});
  maroon::onnx::Model model = maroon::onnx::load_bytes(m.SerializeAsString());
  Tensor s0 = Tensor::from_vector(lcg_floats(3, 5), {3});
  Tensor x = Tensor::from_vector(lcg_floats(12, 6), {3, 4});
  const maroon::Backend saved = maroon::backend();
  maroon::set_backend("ref");
  Tensor s = s0;
  std::vector<Tensor> zs;
  for (int64_t t = 3; t >= 0; --t) {  // the input reversed
    Tensor xt = x[{maroon::slice(), maroon::Index(t)}];
    s = (s * xt).sin() + xt;
    zs.insert(zs.begin(), s.exp());  // the output reversed too
  }
  Tensor z = Tensor::stack_all(zs, 1);
  std::vector<uint8_t> want_s = s.bytes(), want_z = z.bytes();
  for (const char* be : {"ref", "cpu"}) {
    maroon::set_backend(be);
    std::vector<Tensor> got = model.run(std::vector<Tensor>{s0, x});
    EXPECT_EQ(got[1].shape(), (maroon::Shape{3, 4}));
    EXPECT_EQ(got[0].bytes(), want_s) << be;
    EXPECT_EQ(got[1].bytes(), want_z) << be;
  }
  maroon::set_backend(saved);
}

TEST(OnnxControlFlow, IfRunsTheChosenBranchAndNestsToTheLimit) {
  maroon::onnx::Model m = maroon::onnx::load_bytes(cf_if(CfP::BOOL).SerializeAsString());
  for (bool c : {true, false})
    EXPECT_EQ(m.run({Tensor::from_vector(std::vector<uint8_t>{c}, {}, maroon::DType::Bool)})[0].item(), c ? 1.0 : -1.0);
  maroon::onnx::Model deep = maroon::onnx::load_bytes(cf_nested_ifs(kCfMaxDepth).SerializeAsString());
  EXPECT_EQ(deep.run({Tensor::from_vector(std::vector<uint8_t>{1}, {}, maroon::DType::Bool)})[0].item(), 7.0);
}

TEST(OnnxControlFlow, NestingPastTheLimitIsRefused) {
  std::string e = cf_error_of([] {
    maroon::onnx::load_bytes(cf_nested_ifs(kCfMaxDepth + 1).SerializeAsString());
  });
  EXPECT_NE(e.find("subgraphs nest deeper than"), std::string::npos) << e;
  // 100,000 nested Ifs, written inside out: each level a graph holding one If whose then_branch
  // is the level inside. Refused by the parser's recursion limit, never a stack overflow.
  const int levels = 100000;
  std::vector<size_t> graph_len(levels + 1, 0);
  auto node_fixed = [] { return cf_field(4, "If") + cf_field(1, "c") + cf_field(2, "r"); };
  auto attr_fixed = [] { return cf_field(1, "then_branch") + cf_varint(20 << 3) + cf_varint(5); };
  const std::string nf = node_fixed(), af = attr_fixed();
  auto hdr = [](int number, size_t len) { return cf_varint(static_cast<uint64_t>(number) << 3 | 2) + cf_varint(len); };
  std::vector<size_t> attr_len(levels + 1), node_len(levels + 1);
  for (int k = 1; k <= levels; ++k) {
    attr_len[k] = af.size() + hdr(6, graph_len[k - 1]).size() + graph_len[k - 1];
    node_len[k] = nf.size() + hdr(5, attr_len[k]).size() + attr_len[k];
    graph_len[k] = hdr(1, node_len[k]).size() + node_len[k];
  }
  std::string bytes = cf_field(8, cf_varint(2 << 3) + cf_varint(13));  // opset_import { version: 13 }
  bytes += hdr(7, graph_len[levels]);
  for (int k = levels; k >= 1; --k) bytes += hdr(1, node_len[k]) + nf + hdr(5, attr_len[k]) + af + hdr(6, graph_len[k - 1]);
  e = cf_error_of([&] { maroon::onnx::load_bytes(bytes); });
  EXPECT_NE(e.find("nested deeper than"), std::string::npos) << e;
}

TEST(OnnxControlFlow, SubgraphsReadOuterValuesDefinedBeforeTheirNode) {
  ::onnx::ModelProto m = cf_if(CfP::BOOL);
  auto* then_g = m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g();
  add_node(then_g, "Neg", {"nowhere"}, {"unused"}, "neg");
  cf_expect(cf_run_error(m), "node 'if' (If) attribute 'then_branch'", "input 'nowhere' is not defined");
  // A value the graph defines only after the If is not in the If's outer scope.
  ::onnx::ModelProto later = cf_if(CfP::BOOL);
  auto* g = later.mutable_graph();
  add_node(g->mutable_node(0)->mutable_attribute(1)->mutable_g(), "Neg", {"late"}, {"unused"}, "neg");
  cf_constant(g, "late", CfP::FLOAT, 2.0);
  cf_expect(cf_run_error(later), "node 'neg' (Neg)", "input 'late' is not defined");
}

TEST(OnnxControlFlow, OutputCountsMustMatch) {
  cf_expect(cf_run_error(cf_if(CfP::BOOL, 2)), "node 'if' (If)", "then_branch has outputs: 2, expected 1");
  ::onnx::ModelProto m = cf_loop([](auto*, auto*, auto* b) { set_type(b->add_output(), "c", CfP::BOOL, {}); });
  cf_expect(cf_run_error(m, cf_loop_inputs(2, true)), "node 'loop' (Loop)", "outputs (carried values, scan outputs): 1, expected 2");
  ::onnx::ModelProto no_end = cf_loop([](auto*, auto* loop, auto*) {
    loop->set_input(0, "");
    loop->set_input(1, "");
  });
  cf_expect(cf_run_error(no_end), "node 'loop' (Loop)", "neither a trip count M nor a condition");
}

TEST(OnnxControlFlow, TripCountsAndConditionsAreChecked) {
  auto plain = cf_loop([](auto*, auto*, auto*) {});
  maroon::onnx::Model loop = maroon::onnx::load_bytes(plain.SerializeAsString());
  EXPECT_EQ(loop.run(cf_loop_inputs(3, true))[0].tolist()[0], -1.0);  // negated three times
  EXPECT_EQ(loop.run(cf_loop_inputs(3, false))[0].tolist()[0], 1.0);   // the condition stops it first
  cf_expect(cf_error_of([&] { loop.run(cf_loop_inputs(-1, true)); }), "node 'loop' (Loop)", "trip count M is negative");
  auto for_loop = cf_loop([](auto*, auto* l, auto*) { l->set_input(1, ""); });
  cf_expect(cf_run_error(for_loop, cf_loop_inputs(INT64_MAX, true)),
            "node 'loop' (Loop)", "exceeds Maroon's limit");
  // A float condition, into If and out of a Loop body.
  cf_expect(cf_run_error(cf_if(CfP::FLOAT), {Tensor::from_vector(std::vector<float>{1}, {})}), "node 'if' (If)",
            "the condition must be bool, got float32");
  auto float_cond = cf_loop([](auto*, auto*, auto* b) {
    b->mutable_node(0)->set_op_type("Cast");
    set_attr(b->mutable_node(0), "to", int64_t{CfP::FLOAT});
    b->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(CfP::FLOAT);
  });
  cf_expect(cf_run_error(float_cond, cf_loop_inputs(2, true)), "node 'loop' (Loop)", "must be bool, got float32");
}

TEST(OnnxControlFlow, CarriedValuesAndScanInputsMustAgree) {
  auto plain = cf_loop([](auto*, auto*, auto*) {});
  plain.mutable_graph()->mutable_input(2)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("W");
  cf_expect(cf_run_error(plain, cf_loop_inputs(2, true, 3)), "subgraph 'body' (iteration 0) input 'y_in'",
            "dimension 0 must be 2");
  // The body turns the carried float into int64 (its output undeclared, so only the carry checks).
  auto retyped = cf_loop([](auto*, auto*, auto* b) {
    auto* cast = add_node(b, "Cast", {"y_out"}, {"y_int"});
    set_attr(cast, "to", int64_t{CfP::INT64});
    b->mutable_output(1)->set_name("y_int");
    b->mutable_output(1)->clear_type();
  });
  cf_expect(cf_run_error(retyped, cf_loop_inputs(2, true)), "node 'loop' (Loop)", "carried value 0 is float32 but iteration 0 computes int64");
  // Scan inputs of different lengths.
  ::onnx::ModelProto m = cf_model(16);
  auto* g = m.mutable_graph();
  set_type(g->add_output(), "z", CfP::FLOAT, {});
  add_raw_floats(g, "a", lcg_floats(3, 1), {3});
  add_raw_floats(g, "b", lcg_floats(4, 2), {4});
  auto* n = add_node(g, "Scan", {"a", "b"}, {"z"}, "scan");
  set_attr(n, "num_scan_inputs", int64_t{2});
  auto* body = add_graph_attr(n, "body");
  set_type(body->add_input(), "at", CfP::FLOAT, {});
  set_type(body->add_input(), "bt", CfP::FLOAT, {});
  add_node(body, "Add", {"at", "bt"}, {"zt"});
  set_type(body->add_output(), "zt", CfP::FLOAT, {});
  cf_expect(cf_run_error(m), "node 'scan' (Scan)", "scan input 1 has 4 steps along axis 0, scan input 0 has 3");
}

// The fuzzer's control-flow seed (fuzz/make_corpus_onnx.cpp): a Loop whose body's If reads the
// outer W, its scan output summed by a reversed Scan, against the Tensor API written out.
TEST(OnnxControlFlow, TheFuzzSeedRunsAsWrittenOut) {
  maroon::onnx::Model m = maroon::onnx::load(std::string(MAROON_SOURCE_DIR) + "/fuzz/corpus/onnx/control-flow");
  Tensor y0 = Tensor::from_vector(std::vector<float>{1.1f, -2.3f}, {2});
  Tensor w = Tensor::from_vector(std::vector<float>{0.5f, -1.25f}, {2});
  std::vector<Tensor> ys{y0 * w};
  for (int i = 1; i < 3; ++i) ys.push_back(ys.back() * w);
  Tensor total = ((y0 + ys[2]) + ys[1]) + ys[0];
  std::vector<Tensor> got = m.run(std::vector<Tensor>{Tensor::from_vector(std::vector<int64_t>{3}, {}), y0});
  EXPECT_EQ(got[0].bytes(), ys[2].bytes());
  EXPECT_EQ(got[1].bytes(), total.bytes());
}

// Every truncation and byte flip of that seed loads into a model or is an OnnxError (the fuzz
// harness's contract, over every position once); the truncations that load also run.
TEST(OnnxControlFlow, EveryTruncationAndFlipOfTheSeedIsAnErrorOrAModel) {
  std::string bytes;
  {
    std::ifstream f(std::string(MAROON_SOURCE_DIR) + "/fuzz/corpus/onnx/control-flow", std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(f), {});
  }
  ASSERT_GT(bytes.size(), 100u);
  const std::vector<Tensor> in{Tensor::from_vector(std::vector<int64_t>{2}, {}),
                               Tensor::from_vector(std::vector<float>{1, 2}, {2})};
  int refused = 0;
  for (size_t len = 0; len < bytes.size(); ++len) {
    try {
      maroon::onnx::load_bytes(bytes.substr(0, len)).run(in);
    } catch (const OnnxError&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, static_cast<int>(bytes.size()) / 2);
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    try {
      maroon::onnx::load_bytes(bad);
    } catch (const OnnxError&) {
    }
  }
}
