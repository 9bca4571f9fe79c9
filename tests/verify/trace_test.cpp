// Per-node traces: what they record, that they are the same on every backend, their file format,
// and the referee's recomputation.
#include "io/files.h"
#include "job.h"
#include "maroon/backend.h"

using namespace maroon;
using namespace maroon::verify;

namespace {

Tensor small_graph() {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor w = Tensor::from_vector<float>({0.5f, -1, 0.25f, 2, 1.5f, 0.125f}, {3, 2});
  return (x.matmul(w).relu() + 1).sum(1).exp();
}

}  // namespace

TEST(VerifyTrace, RecordsEveryNodeInScheduleOrderWithItsDigest) {
  Tensor out = small_graph();
  Trace t = trace([&] { out.realize(); });
  ASSERT_GT(t.nodes.size(), 8u);
  EXPECT_EQ(t.nodes.back().digest, tensor_digest(out));
  int64_t leaves = 0;
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    const TraceNode& n = t.nodes[i];
    for (int64_t s : n.src) EXPECT_LT(s, static_cast<int64_t>(i)) << "sources come first";
    if (n.op == "BUFFER") {
      ++leaves;
      EXPECT_EQ(n.label, "input");
      EXPECT_TRUE(n.src.empty());
    }
  }
  EXPECT_EQ(leaves, 2);
  bool has_mul = false, has_reduce = false;
  for (auto& n : t.nodes) has_mul |= n.op == "MUL", has_reduce |= n.op == "REDUCE" && n.arg.find("ADD") == 0;
  EXPECT_TRUE(has_mul && has_reduce) << "the matmul is traced as its primitives";
}

TEST(VerifyTrace, IsTheSameOnTheReferenceAndCpuBackendsAndAnyThreadCount) {
  Backend saved = backend();
  int threads = num_threads();
  std::vector<std::string> json;
  for (auto [b, n] : {std::pair{Backend::Cpu, 1}, {Backend::Cpu, 3}, {Backend::Ref, 1}}) {
    set_backend(b);
    set_num_threads(n);
    Tensor out = small_graph();
    json.push_back(trace_json(trace([&] { out.realize(); })));
  }
  set_backend(saved);
  set_num_threads(threads);
  EXPECT_EQ(json[0], json[1]);
  EXPECT_EQ(json[0], json[2]);
}

TEST(VerifyTrace, FileRoundTripsAndBadFilesAreNamed) {
  std::string dir = verifytest::scratch("trace");
  Tensor out = small_graph();
  Trace t = trace([&] { out.realize(); });
  t.step = 3;
  t.state_out.push_back({"model.w", tensor_digest(out), static_cast<int64_t>(t.nodes.size() - 1)});
  write_trace(t, dir + "/t.json");
  Trace back = read_trace(dir + "/t.json");
  EXPECT_EQ(trace_json(back), trace_json(t));
  std::string good = io::read_file(dir + "/t.json", "test"), bad = dir + "/bad.json";
  auto expect = [&](const std::string& bytes, const std::string& needle) {
    verifytest::expect_format_error(bad, bytes, read_trace, needle);
  };
  expect(good.substr(0, good.size() / 2), "bad.json");
  expect(verifytest::edited(good, "\"src\": [0", "\"src\": [9"), "not an earlier node");
  expect(verifytest::edited(good, "float32", "float99"), "unknown dtype");
  expect(verifytest::edited(good, "maroon-trace/1", "maroon-trace/9"), "expected \"maroon-trace/1\"");
}

TEST(VerifyTrace, FaultIsSeenByEveryReaderAndOnlyComputedNodesTakeOne) {
  Tensor clean = small_graph();
  Trace good = trace([&] { clean.realize(); });
  int64_t mul = -1;
  for (size_t i = 0; i < good.nodes.size() && mul < 0; ++i)
    if (good.nodes[i].op == "MUL") mul = static_cast<int64_t>(i);
  ASSERT_GE(mul, 0);
  Tensor out = small_graph();
  Trace bad = trace([&] { out.realize(); }, nullptr, Fault{mul, 1, 28});
  ASSERT_EQ(bad.nodes.size(), good.nodes.size());
  EXPECT_EQ(bad.nodes[static_cast<size_t>(mul) - 1].digest, good.nodes[static_cast<size_t>(mul) - 1].digest);
  EXPECT_NE(bad.nodes[static_cast<size_t>(mul)].digest, good.nodes[static_cast<size_t>(mul)].digest);
  EXPECT_NE(bad.nodes.back().digest, good.nodes.back().digest);
  EXPECT_THROW(trace([&] { small_graph().realize(); }, nullptr, Fault{0, 0, 0}), Error);  // a leaf
}

TEST(VerifyGraphDigest, DependsOnTheComputationNotTheValues) {
  Tensor::manual_seed(1);
  Tensor w1 = Tensor::rand({4, 3}).realize(), w2 = Tensor::rand({4, 3}).realize();
  Tensor x = Tensor::zeros({2, 4});
  Digest a = graph_digest({x.matmul(w1).relu()}, {{"w", w1}});
  Digest b = graph_digest({x.matmul(w2).relu()}, {{"w", w2}});
  Digest c = graph_digest({x.matmul(w1).sigmoid()}, {{"w", w1}});
  Digest d = graph_digest({x.matmul(w1).relu()}, {{"v", w1}});
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, d);
}
