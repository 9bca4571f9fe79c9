// nn layers and optimizers: initialisation against tinygrad's own values, updates and running
// statistics against PyTorch, state dicts, and small MLP/CNN training runs.
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include <unistd.h>

#include "util.h"
#include "maroon/primitives.h"

namespace maroon {
namespace {

using apitest::f32;

// Runs a Python snippet (PyTorch) that prints whitespace-separated floats; returns them.
std::vector<double> run_python(const std::string& code) {
  // Unique per process and test: ctest may run several of these at once.
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string stem = ::testing::TempDir() + "maroon_nn_" + std::to_string(::getpid()) + "_" +
                     (info ? std::string(info->name()) : std::string("case"));
  std::string script = stem + ".py", out = stem + ".txt";
  {
    std::ofstream f(script);
    f << code;
  }
  std::string cmd = std::string(MAROON_PYTHON) + " " + script + " > " + out;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(out);
  std::vector<double> v;
  std::string tok;
  while (in >> tok) v.push_back(std::strtod(tok.c_str(), nullptr));
  std::remove(script.c_str());
  std::remove(out.c_str());
  return v;
}

std::string pylist(const std::vector<double>& v) {
  std::string s = "[";
  char buf[64];
  for (double x : v) {
    std::snprintf(buf, sizeof buf, "float.fromhex('%a'),", x);
    s += buf;
  }
  return s + "]";
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double atol, double rtol,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], atol + rtol * std::fabs(want[i])) << what << " element " << i;
}

// ---- optimizers: 4 steps on L = sum(c * (p - t)^2), p (3,4), against torch.optim ----
struct OptCase {
  std::string name, torch_ctor;
  std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)> make;
};

TEST(Optim, MatchesTorchOptimizers) {
  std::vector<double> p0 = apitest::uniform_values(12, -1, 1, 11), tv = apitest::uniform_values(12, -1, 1, 12),
                      cv = apitest::uniform_values(12, 0.5, 2, 13);
  for (auto* v : {&p0, &tv, &cv})
    for (double& x : *v) x = static_cast<float>(x);
  std::vector<OptCase> cases = {
      {"SGD", "torch.optim.SGD([p], lr=0.05)",
       [](std::vector<Tensor> ps) { return std::make_unique<optim::SGD>(ps, 0.05); }},
      {"SGD momentum wd", "torch.optim.SGD([p], lr=0.05, momentum=0.9, weight_decay=0.01)",
       [](std::vector<Tensor> ps) { return std::make_unique<optim::SGD>(ps, 0.05, 0.9, 0.01); }},
      {"SGD nesterov", "torch.optim.SGD([p], lr=0.05, momentum=0.8, nesterov=True)",
       [](std::vector<Tensor> ps) { return std::make_unique<optim::SGD>(ps, 0.05, 0.8, 0.0, true); }},
      {"Adam", "torch.optim.Adam([p], lr=0.01)",
       [](std::vector<Tensor> ps) { return std::make_unique<optim::Adam>(ps, 0.01); }},
      {"AdamW", "torch.optim.AdamW([p], lr=0.01, weight_decay=0.1)",
       [](std::vector<Tensor> ps) { return std::make_unique<optim::AdamW>(ps, 0.01, 0.9, 0.999, 1e-8, 0.1); }},
  };
  const int kSteps = 4;
  for (auto& oc : cases) {
    SCOPED_TRACE(oc.name);
    Tensor p = f32(p0, {3, 4}), t = f32(tv, {3, 4}), c = f32(cv, {3, 4});
    auto opt = oc.make({p});
    TrainingScope training;
    for (int s = 0; s < kSteps; ++s) {
      opt->zero_grad();
      (c * (p - t).square()).sum().backward();
      opt->step();
    }
    std::string code = "import torch\np = torch.tensor(" + pylist(p0) + ").reshape(3,4).requires_grad_()\n" +
                       "t = torch.tensor(" + pylist(tv) + ").reshape(3,4)\nc = torch.tensor(" + pylist(cv) +
                       ").reshape(3,4)\nopt = " + oc.torch_ctor + "\nfor _ in range(" + std::to_string(kSteps) +
                       "):\n  opt.zero_grad()\n  (c * (p - t)**2).sum().backward()\n  opt.step()\n" +
                       "print(' '.join(float(v).hex() for v in p.detach().reshape(-1).tolist()))\n";
    // float32 updates in a different order of operations: a few ulps after 4 steps.
    expect_close(p.tolist(), run_python(code), 1e-6, 1e-5, oc.name);
  }
}

TEST(Optim, LambTrustRatioAndStateDependsOnlyOnFormula) {
  // LAMB has no torch counterpart: check one step against tinygrad's formula written out in
  // float64 (m = (1-b1) g, v = (1-b2) g^2, up = m_hat / (sqrt(v_hat) + eps) + wd t, r = |t|/|up|).
  std::vector<double> p0{0.5, -1.0, 2.0}, g0{0.1, 0.2, -0.3};
  Tensor p = apitest::f64(p0, {3});
  optim::LAMB opt({p}, 0.1, 0.9, 0.999, 1e-6, 0.01);
  TrainingScope training;
  (p * apitest::f64(g0, {3})).sum().backward();
  opt.step();
  double n_t = 0, n_up = 0;
  std::vector<double> up(3);
  for (int i = 0; i < 3; ++i) {
    double m = (1 - 0.9) * g0[i] / (1 - 0.9), v = (1 - 0.999) * g0[i] * g0[i] / (1 - 0.999);
    up[i] = m / (std::sqrt(v) + 1e-6) + 0.01 * p0[i];
    n_t += p0[i] * p0[i];
    n_up += up[i] * up[i];
  }
  double r = std::sqrt(n_t) / std::sqrt(n_up);
  std::vector<double> got = p.tolist();
  // lr and b1_t/b2_t are float32 tensors as in tinygrad: agreement to float32 precision.
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(got[i], p0[i] - 0.1 * r * up[i], 1e-6);
}

TEST(Optim, StepNeedsTrainingAndGrads) {
  Tensor p = Tensor::ones({2});
  optim::SGD opt({p}, 0.1);
  EXPECT_THROW(opt.step(), Error);
  TrainingScope training;
  EXPECT_THROW(opt.step(), ShapeError);  // no grad yet
}

// ---- layers ----
TEST(NN, BatchNormTrainingMatchesTorch) {
  std::vector<double> xs = apitest::uniform_values(2 * 3 * 2 * 2, -2, 2, 21);
  for (double& x : xs) x = static_cast<float>(x);
  Tensor x = f32(xs, {2, 3, 2, 2});
  nn::BatchNorm bn(3);
  std::vector<double> out;
  {
    TrainingScope training;
    bn(x);
    out = bn(x * 2.0).tolist();
  }
  std::vector<double> eval = bn(x).tolist();
  std::string code = "import torch\nx = torch.tensor(" + pylist(xs) + ").reshape(2,3,2,2)\n" +
                     "bn = torch.nn.BatchNorm2d(3)\nbn.train()\nbn(x)\ny = bn(x*2)\nbn.eval()\nz = bn(x)\n" +
                     "vals = y.reshape(-1).tolist() + bn.running_mean.tolist() + bn.running_var.tolist() + z.reshape(-1).tolist()\n" +
                     "print(' '.join(float(v).hex() for v in vals))\n";
  std::vector<double> ref = run_python(code);
  ASSERT_EQ(ref.size(), 24u + 3 + 3 + 24);
  expect_close(out, std::vector<double>(ref.begin(), ref.begin() + 24), 1e-5, 1e-4, "train output");
  expect_close(bn.running_mean->tolist(), std::vector<double>(ref.begin() + 24, ref.begin() + 27), 1e-6, 1e-5, "running_mean");
  expect_close(bn.running_var->tolist(), std::vector<double>(ref.begin() + 27, ref.begin() + 30), 1e-6, 1e-5, "running_var");
  expect_close(eval, std::vector<double>(ref.begin() + 30, ref.end()), 1e-5, 1e-4, "eval output");
  EXPECT_EQ(bn.num_batches_tracked.item(), 2.0);
}

TEST(NN, NormsAndEmbeddingMatchTorch) {
  std::vector<double> xs = apitest::uniform_values(2 * 4 * 3, -2, 2, 31);
  for (double& x : xs) x = static_cast<float>(x);
  Tensor x = f32(xs, {2, 4, 3});
  nn::LayerNorm ln({3});
  nn::GroupNorm gn(2, 4);
  Tensor::manual_seed(1);
  nn::Embedding emb(5, 3);
  Tensor idx = Tensor::from_vector<int32_t>({4, 0, 2, 2}, {2, 2});
  std::vector<double> got = ln(x).flatten().cat({gn(x).flatten(), emb(idx).flatten()}).tolist();
  std::string code = "import torch\nx = torch.tensor(" + pylist(xs) + ").reshape(2,4,3)\n" +
                     "w = torch.tensor(" + pylist(emb.weight.tolist()) + ").reshape(5,3)\n" +
                     "vals = torch.nn.LayerNorm(3)(x).reshape(-1).tolist() + torch.nn.GroupNorm(2,4)(x).reshape(-1).tolist()"
                     " + torch.nn.functional.embedding(torch.tensor([[4,0],[2,2]]), w).reshape(-1).tolist()\n"
                     "print(' '.join(float(v).hex() for v in vals))\n";
  expect_close(got, run_python(code), 1e-5, 1e-4, "layernorm/groupnorm/embedding");
}

TEST(NN, InitialisationBounds) {
  Tensor::manual_seed(4);
  nn::Linear lin(16, 5);
  nn::Conv2d conv(3, 4, {3, 3});
  for (double w : lin.weight.tolist()) EXPECT_LE(std::fabs(w), 0.25);
  EXPECT_EQ(conv.weight.shape(), (Shape{4, 3, 3, 3}));
  for (double w : conv.weight.tolist()) EXPECT_LE(std::fabs(w), 1 / std::sqrt(27.0));
  // Linear draws weight then bias from the stream, as tinygrad does.
  Tensor::manual_seed(4);
  Tensor w = Tensor::uniform({5, 16}, -0.25, 0.25), b = Tensor::uniform({5}, -0.25, 0.25);
  EXPECT_EQ(lin.weight.bits(), w.bits());
  EXPECT_EQ(lin.bias->bits(), b.bits());
}

TEST(NN, StateDictRoundTrip) {
  Tensor::manual_seed(9);
  nn::Linear a(3, 2), b(3, 2);
  nn::BatchNorm bn(2);
  auto sd = nn::get_state_dict({{"l", &a}, {"bn", &bn}});
  ASSERT_EQ(sd.size(), 7u);
  EXPECT_EQ(sd[0].first, "l.weight");
  EXPECT_EQ(sd[2].first, "bn.weight");
  std::map<std::string, Tensor> from;
  for (auto& [k, t] : nn::get_state_dict({{"l", &b}})) from.emplace(k, t);
  Tensor x = Tensor::ones({1, 3});
  EXPECT_NE(a(x).bits(), b(x).bits());
  nn::load_state_dict(nn::get_state_dict({{"l", &a}}), from);
  EXPECT_EQ(a(x).bits(), b(x).bits());
  from.erase("l.bias");
  EXPECT_THROW(nn::load_state_dict(nn::get_state_dict({{"l", &a}}), from), ShapeError);
  EXPECT_EQ(bn.parameters().size(), 2u);  // running statistics are not trained
}

// ---- training runs: the loss falls, and a rerun gives the same bits ----
std::vector<uint64_t> train_mlp(int steps, std::vector<double>* losses) {
  Tensor::manual_seed(0);
  nn::Linear l1(4, 16), l2(16, 3);
  std::vector<Tensor> params = nn::get_parameters({&l1, &l2});
  optim::Adam opt(params, 0.02);
  Tensor X = Tensor::randn({32, 4});
  // Labels from a fixed rule: the class is the argmax of three linear scores.
  Tensor Y = X.matmul(Tensor::arange(12).reshape({4, 3}).cast(DType::Float32).sub(5.5)).argmax(1);
  TrainingScope training;
  for (int s = 0; s < steps; ++s) {
    opt.zero_grad();
    Tensor loss = l2(l1(X).relu()).sparse_categorical_crossentropy(Y);
    loss.backward();
    opt.step();
    losses->push_back(loss.item());
  }
  return l2.weight.bits();
}

TEST(Training, MlpLearnsAndIsDeterministic) {
  std::vector<double> l1, l2;
  auto a = train_mlp(30, &l1);
  auto b = train_mlp(30, &l2);
  EXPECT_LT(l1.back(), 0.5 * l1.front());
  EXPECT_EQ(a, b);
  EXPECT_EQ(l1, l2);
}

TEST(Training, SmallCnnLearns) {
  Tensor::manual_seed(1);
  nn::Conv2d c1(1, 4, {3, 3}, {1}, {1});
  nn::BatchNorm bn(4);
  nn::Linear fc(4 * 3 * 3, 2);
  std::vector<Tensor> params = nn::get_parameters({&c1, &bn, &fc});
  optim::SGD opt(params, 0.1, 0.9);
  // Two classes of 6x6 images: bright in the top half or in the bottom half.
  Tensor noise = Tensor::rand({16, 1, 6, 6}).mul(0.5);
  Tensor cls = Tensor::arange(16).mod(Tensor::full({}, 2, DType::Int32));
  Tensor rows = Tensor::arange(6).reshape({1, 1, 6, 1});
  Tensor top = (rows < 3).cast(DType::Float32);
  Tensor bright = prim::where(cls.reshape({16, 1, 1, 1}).eq(0), top, 1 - top);
  Tensor X = noise + bright;
  TrainingScope training;
  std::vector<double> losses;
  for (int s = 0; s < 15; ++s) {
    opt.zero_grad();
    Tensor h = bn(c1(X)).relu().max_pool2d();
    Tensor loss = fc(h.flatten(1)).sparse_categorical_crossentropy(cls);
    loss.backward();
    opt.step();
    losses.push_back(loss.item());
  }
  EXPECT_LT(losses.back(), 0.3 * losses.front());
}

}  // namespace
}  // namespace maroon
