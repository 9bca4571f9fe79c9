// The fused matmul as users see it: the switch changes bits (and only when asked), FusedScope and
// the `fused` argument, errors, gradients that are fused reductions themselves, and a training
// run in fused mode with its own stored digest on every backend configuration.
#include <gtest/gtest.h>

#include <cstdio>
#include <unordered_set>

#include "core/graph.h"
#include "fused_util.h"
#include "maroon/nn.h"
#include "maroon/optim.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

// How many nodes of each kind of contraction the graph under `t` holds.
struct Contractions {
  int fused = 0;     // REDUCE_MULACC
  int unfused = 0;   // REDUCE ADD over MUL
};
Contractions count(const std::vector<Tensor>& ts) {
  Contractions c;
  std::unordered_set<const Node*> seen;
  std::vector<const Node*> stack;
  for (const Tensor& t : ts) stack.push_back(t.node().get());
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    if (n->op == Op::REDUCE_MULACC) ++c.fused;
    if (n->op == Op::REDUCE && n->arg.reduce_op == ReduceOp::ADD && n->src[0]->op == Op::MUL) ++c.unfused;
    for (const auto& s : n->src) stack.push_back(s.get());
  }
  return c;
}

std::vector<uint64_t> near_one(DType d, int64_t n, uint64_t seed) {
  Gen g(seed);
  std::vector<uint64_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = nearest_bits(d, static_cast<double>(g.next() % 4097) / 2048.0 - 1 + 1.0 / (3 + g.next() % 101));
  return v;
}

TEST(FusedApi, TheSwitchChangesBits) {
  // (1+2^-12)^2 = 1 + 2^-11 + 2^-24: rounded alone it is 1 + 2^-11 and cancels to 0; fused, the
  // 2^-24 survives.
  Tensor x = Tensor::from_vector<float>({-1.00048828125f, 1.000244140625f}, {1, 2});
  Tensor w = Tensor::from_vector<float>({1.f, 1.000244140625f}, {2, 1});
  EXPECT_EQ(x.matmul(w).to_vector<float>()[0], 0.f);
  EXPECT_EQ(x.matmul(w, std::nullopt, true).to_vector<float>()[0], 0x1p-24f);
  EXPECT_EQ(x.matmul(w, std::nullopt, false).to_vector<float>()[0], 0.f);
  // On ordinary data most outputs differ in their last bits, on every configuration.
  for (DType d : {DType::Float32, DType::Float64}) {
    Tensor a = tensor_of_bits(near_one(d, 64 * 64, 1), {64, 64}, d);
    Tensor b = tensor_of_bits(near_one(d, 64 * 64, 2), {64, 64}, d);
    std::vector<uint64_t> plain = a.matmul(b).bits(), fused = a.matmul(b, std::nullopt, true).bits();
    int differ = 0;
    for (size_t i = 0; i < plain.size(); ++i) differ += plain[i] != fused[i];
    EXPECT_GT(differ, 64 * 64 / 4) << dtype_name(d);
    std::printf("%s 64x64x64: %d of %d outputs differ between default and fused\n",
                std::string(dtype_name(d)).c_str(), differ, 64 * 64);
  }
}

TEST(FusedApi, OnlyWhenAsked) {
  Tensor a = tensor_of_bits(near_one(DType::Float32, 6 * 5, 3), {6, 5}, DType::Float32);
  Tensor b = tensor_of_bits(near_one(DType::Float32, 5 * 4, 4), {5, 4}, DType::Float32);
  EXPECT_FALSE(current_fused());
  Contractions plain = count({a.matmul(b), a.linear(b), prim::mul(a.reshape({6, 5, 1}), b.reshape({1, 5, 4})).sum(1)});
  EXPECT_EQ(plain.fused, 0);
  EXPECT_EQ(plain.unfused, 3);
  {
    FusedScope on;
    EXPECT_EQ(count({a.matmul(b)}).fused, 1);
    EXPECT_EQ(count({a.linear(b)}).fused, 1);
    EXPECT_EQ(count({a.matmul(b, std::nullopt, false)}).fused, 0);  // the call overrides the scope
    // The engine never contracts MUL + REDUCE on its own, scope or not.
    EXPECT_EQ(count({prim::mul(a.reshape({6, 5, 1}), b.reshape({1, 5, 4})).sum(1)}).fused, 0);
    EXPECT_EQ(a.matmul(b).bits(), a.matmul(b, std::nullopt, true).bits());
    // Integers have nothing to round: the scope leaves them alone.
    Tensor i = Tensor::from_vector<int32_t>({1, 2, 3, 4}, {2, 2});
    EXPECT_EQ(i.matmul(i).to_vector<int32_t>(), (std::vector<int32_t>{7, 10, 15, 22}));
    // nn layers follow the scope.
    Tensor::manual_seed(3);
    nn::Linear lin(5, 4);
    nn::Conv2d conv(2, 3, {3, 3});
    EXPECT_EQ(count({lin(a)}).fused, 1);
    EXPECT_EQ(count({conv(Tensor::rand({1, 2, 6, 6}))}).fused, 1);
  }
  EXPECT_FALSE(current_fused());
}

TEST(FusedApi, ErrorsNameTheOpAndShapes) {
  Tensor a = Tensor::full({2, 3}, 1.0, DType::Float32), b = Tensor::full({2, 4}, 1.0, DType::Float32);
  try {
    prim::fused_reduce(a, b, {1});
    ADD_FAILURE() << "no ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("[reduce_mulacc]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(2,3)"), std::string::npos) << e.what();
  }
  Tensor i = Tensor::full({2, 3}, 1, DType::Int32);
  EXPECT_THROW(prim::fused_reduce(i, i, {1}), DTypeError);
  EXPECT_THROW(prim::fused_reduce(a, a, {2}), IndexError);
  EXPECT_THROW(a.matmul(b, std::nullopt, true), ShapeError);
}

TEST(FusedGradient, BackwardOfAFusedMatmulIsFusedMatmuls) {
  for (DType d : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    Tensor x = tensor_of_bits(near_one(d, 5 * 7, 5), {5, 7}, d);
    Tensor w = tensor_of_bits(near_one(d, 7 * 3, 6), {7, 3}, d);
    Tensor g = tensor_of_bits(near_one(d, 5 * 3, 7), {5, 3}, d);
    std::vector<Tensor> grads = x.matmul(w, std::nullopt, true).gradient({x, w}, g);
    Contractions c = count(grads);
    EXPECT_EQ(c.fused, 2);
    EXPECT_EQ(c.unfused, 0);
    // dL/dx = g w^T and dL/dw = x^T g, each a fused matmul with its fold in increasing index.
    EXPECT_EQ(grads[0].bits(), g.matmul(w.permute({1, 0}), std::nullopt, true).bits());
    EXPECT_EQ(grads[1].bits(), x.permute({1, 0}).matmul(g, std::nullopt, true).bits());
    // The unfused matmul's backward stays unfused.
    Contractions p = count(x.matmul(w).gradient({x, w}, g));
    EXPECT_EQ(p.fused, 0);
    // Batched with a broadcast weight: the weight's gradient folds over batch and rows at once.
    Tensor xb = tensor_of_bits(near_one(d, 2 * 5 * 7, 8), {2, 5, 7}, d);
    Tensor gb = tensor_of_bits(near_one(d, 2 * 5 * 3, 9), {2, 5, 3}, d);
    std::vector<Tensor> bg = xb.matmul(w, std::nullopt, true).gradient({xb, w}, gb);
    EXPECT_EQ(count(bg).unfused, 0);
    EXPECT_EQ(bg[1].bits(), xb.reshape({10, 7}).permute({1, 0}).matmul(gb.reshape({10, 3}), std::nullopt, true).bits());
  }
  // conv2d: both gradients are single fused reductions (no separate sum over cout).
  Tensor x = tensor_of_bits(near_one(DType::Float32, 2 * 3 * 8 * 8, 10), {2, 3, 8, 8}, DType::Float32);
  Tensor w = tensor_of_bits(near_one(DType::Float32, 4 * 3 * 3 * 3, 11), {4, 3, 3, 3}, DType::Float32);
  Contractions c = count(x.conv2d(w, std::nullopt, 1, {1}, {1}, {0}, true).sum().gradient({x, w}));
  EXPECT_EQ(c.fused, 2);  // one per operand (the rule does not read the forward result)
  EXPECT_EQ(c.unfused, 0);
}

// FNV-1a over the bytes of every parameter: a digest any reader can recompute.
uint64_t digest(const std::vector<Tensor>& params) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const Tensor& p : params)
    for (uint8_t byte : p.bytes()) h = (h ^ byte) * 0x100000001b3ull;
  return h;
}

// An MLP (16-32-10, ReLU) trained with Adam on synthetic data for a few steps.
uint64_t train(bool fused) {
  Tensor::manual_seed(0);
  nn::Linear l1(16, 32), l2(32, 10);
  std::vector<Tensor> params = nn::get_parameters({&l1, &l2});
  optim::Adam opt(params, 1e-2);
  Tensor X = Tensor::randn({64, 16});
  Tensor Y = Tensor::randint({64}, 0, 10);
  TrainingScope training;
  FusedScope scope(fused);
  for (int s = 0; s < 4; ++s) {
    opt.zero_grad();
    Tensor loss = l2(l1(X).relu()).sparse_categorical_crossentropy(Y);
    loss.backward();
    opt.step();
    loss.realize();
  }
  return digest(params);
}

// Recorded once from the reference executor (soft-float, no hardware involved); every backend
// configuration must reproduce it.
constexpr uint64_t kFusedTrainingDigest = 0x2a40078f6f800202;

TEST(FusedTraining, DigestIsStoredAndEqualEverywhere) {
  BackendSettings keep;
  set_backend(Backend::Ref);
  const uint64_t ref = train(true);
  const uint64_t ref_plain = train(false);
  std::printf("fused training digest %016llx, default %016llx\n", static_cast<unsigned long long>(ref),
              static_cast<unsigned long long>(ref_plain));
  EXPECT_EQ(ref, kFusedTrainingDigest);
  EXPECT_NE(ref, ref_plain);
  set_backend(Backend::Cpu);
  int runs = 0;
  for (const std::string& target : available_simd_targets()) {
    set_simd_target(target);
    for (int threads : {1, 2, 3}) {
      set_num_threads(threads);
      const uint64_t got = train(true);
      EXPECT_EQ(got, kFusedTrainingDigest) << target << " with " << threads << " threads";
      runs += got == kFusedTrainingDigest;
    }
  }
  std::printf("fused training: %d backend runs reproduce the digest\n", runs);
}

}  // namespace
}  // namespace maroon::test
