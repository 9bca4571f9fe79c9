// The composites the models use (docs/spec-model.md), in float32: each forward result and the
// gradients of its inputs for a given upstream gradient g (Tensor::gradient seeded with g), the
// optimizers' updates over three steps, and the order in which a node's gradients are summed.
#include <cmath>
#include <functional>

#include "maroon/shuffle.h"
#include "vectors.h"

namespace maroon::vectors {

namespace {

const std::string kFile = "composites.safetensors";

// Exactly representable float32 values in [-range, range): 24-bit integers scaled by a power of
// two, from SplitMix64 (integer arithmetic only; no dependence on the engine's random stream).
Tensor values(const Shape& shape, uint64_t seed, double range = 2.0) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (float& x : v) {
    uint64_t z = data::splitmix64(s);
    x = static_cast<float>(static_cast<int64_t>(z >> 40) - (int64_t{1} << 23)) * static_cast<float>(range / 8388608.0);
  }
  return Tensor::from_vector(v, shape);
}

// A realized leaf with t's bytes: inputs carry no history.
Tensor leaf(const Tensor& t) {
  std::vector<uint8_t> b = t.bytes();
  return Tensor::from_bytes(b.data(), b.size(), t.shape(), t.dtype());
}

struct Arg {
  std::string name;
  Tensor t;
  bool grad = true;  // whether the vector records this input's gradient
};

// Records fn(inputs) and, when `grads`, the gradients of the inputs marked `grad` for an upstream
// gradient g of the output's shape (stored as the last input, "g").
void record(Book& book, const std::string& id, const std::string& args, std::vector<Arg> in,
            const std::function<Tensor(const std::vector<Tensor>&)>& fn, bool grads = true) {
  Entry e{id, id, "float32", "nearest", args, {}, {}};
  std::vector<Tensor> xs;
  for (Arg& a : in) {
    e.inputs.push_back(book.input(kFile, id + "/" + a.name, a.t));
    xs.push_back(leaf(a.t));
  }
  Tensor out = fn(xs);
  e.outputs.push_back(book.output(kFile, out));
  if (grads) {
    Tensor g = values(out.shape(), 1000 + book.size());
    e.inputs.push_back(book.input(kFile, id + "/g", g));
    std::vector<Tensor> targets;
    for (size_t i = 0; i < in.size(); ++i)
      if (in[i].grad) targets.push_back(xs[i]);
    for (const Tensor& gr : out.gradient(targets, g)) e.outputs.push_back(book.output(kFile, gr));
  }
  book.add(e);
}

Tensor specials_f32() {
  const float inf = INFINITY, nan = NAN;
  return Tensor::from_vector<float>({0.0f, -0.0f, 1e-45f, -1e-45f, 1.0f, -1.0f, 0.5f, 3.0f, -2.5f, 255.0f, 1e30f,
                                     -1e30f, 3.4028235e38f, inf, -inf, nan},
                                    {16});
}

void elementwise(Book& book) {
  // a / b is a * RECIPROCAL(b): on every pair of specials, in every rounding mode.
  Tensor s = specials_f32();
  Tensor a = s.reshape({16, 1}).expand({16, 16}).reshape({256}), b = s.reshape({1, 16}).expand({16, 16}).reshape({256});
  a = leaf(a), b = leaf(b);
  for (Round r : kAllRounds) {
    RoundingScope scope(r);
    Entry e{"div/specials/" + rn(r), "div", "float32", rn(r), "{}",
            {book.input(kFile, "div/specials_a", a), book.input(kFile, "div/specials_b", b)}, {book.output(kFile, a / b)}};
    book.add(e);
  }
  record(book, "div", "{}", {{"a", values({8}, 1)}, {"b", values({8}, 2)}}, [](auto& x) { return x[0] / x[1]; });
  record(book, "relu", "{}", {{"x", specials_f32()}}, [](auto& x) { return x[0].relu(); });
  record(book, "exp", "{}", {{"x", values({16}, 3, 8)}}, [](auto& x) { return x[0].exp(); });
  record(book, "log", "{}", {{"x", values({16}, 4, 8).abs()}}, [](auto& x) { return x[0].log(); });
  record(book, "sigmoid", "{}", {{"x", values({16}, 5, 8)}}, [](auto& x) { return x[0].sigmoid(); });
  record(book, "sqrt", "{}", {{"x", values({16}, 6, 8).abs()}}, [](auto& x) { return x[0].sqrt(); });
  record(book, "sum/float16", "{\"axis\": [1]}", {{"x", values({3, 40}, 7, 100).cast(DType::Float16)}, },
         [](auto& x) { return x[0].sum(1); }, false);
  record(book, "mean", "{\"axis\": [1]}", {{"x", values({4, 6}, 8)}}, [](auto& x) { return x[0].mean(1); });
  record(book, "mean/all", "{\"axis\": null}", {{"x", values({4, 6}, 9)}}, [](auto& x) { return x[0].mean(); });
}

void softmax_family(Book& book) {
  Tensor logits = values({4, 10}, 10, 8);
  std::vector<float> l = logits.to_vector<float>();
  l[3] = -INFINITY;  // a class that can never be chosen
  logits = Tensor::from_vector(l, {4, 10});
  record(book, "softmax", "{\"axis\": -1}", {{"x", logits}}, [](auto& x) { return x[0].softmax(-1); });
  record(book, "log_softmax", "{\"axis\": -1}", {{"x", logits}}, [](auto& x) { return x[0].log_softmax(-1); });
  Tensor y = Tensor::from_vector<int32_t>({1, 9, 0, 5, 7, 2}, {6});
  Tensor z = values({6, 10}, 11, 4);
  record(book, "sparse_categorical_crossentropy", "{\"reduction\": \"mean\"}", {{"logits", z}, {"labels", y, false}},
         [](auto& x) { return x[0].sparse_categorical_crossentropy(x[1]); });
  record(book, "cross_entropy", "{\"reduction\": \"mean\", \"label_smoothing\": 0.1}",
         {{"logits", z}, {"labels", y, false}}, [](auto& x) { return x[0].cross_entropy(x[1], Reduction::Mean, 0.1); });
}

void layers(Book& book) {
  Tensor a = values({3, 4}, 12), b = values({4, 5}, 13);
  record(book, "matmul", "{\"fused\": false}", {{"a", a}, {"b", b}}, [](auto& x) { return x[0].matmul(x[1]); });
  record(book, "matmul/fused", "{\"fused\": true}", {{"a", a}, {"b", b}},
         [](auto& x) { return x[0].matmul(x[1], std::nullopt, true); });
  record(book, "linear", "{\"weight\": \"(out, in) as nn.Linear, used transposed\"}",
         {{"x", a}, {"weight", values({5, 4}, 14)}, {"bias", values({5}, 15)}},
         [](auto& x) { return x[0].linear(x[1].transpose(), x[2]); });
  Tensor img = values({2, 2, 6, 6}, 16), w = values({3, 2, 3, 3}, 17), bias = values({3}, 18);
  record(book, "conv2d", "{\"stride\": 1, \"padding\": 0}", {{"x", img}, {"weight", w}, {"bias", bias}},
         [](auto& x) { return x[0].conv2d(x[1], x[2]); });
  record(book, "conv2d/stride2_pad1", "{\"stride\": 2, \"padding\": 1}", {{"x", img}, {"weight", w}, {"bias", bias}},
         [](auto& x) { return x[0].conv2d(x[1], x[2], 1, {2}, {1}, {1}); });
  // Quarter-integers in [-2, 2): many tied maxima, whose gradient is shared equally.
  Tensor pool_in = (values({1, 2, 4, 4}, 19) * 2).trunc() / 4;
  pool_in = leaf(pool_in);
  record(book, "max_pool2d", "{\"kernel\": [2, 2], \"stride\": [2, 2]}", {{"x", pool_in}},
         [](auto& x) { return x[0].max_pool2d(); });
}

// nn.BatchNorm(3) in training mode: the output, the gradients of x, weight and bias, and the
// running statistics after the step; then the same module in eval mode.
void batchnorm(Book& book) {
  Tensor x = values({4, 3, 2, 2}, 20, 4);
  nn::BatchNorm bn(3);
  bn.weight->assign(values({3}, 21));
  bn.bias->assign(values({3}, 22));
  Entry e{"batchnorm/train", "batchnorm/train", "float32", "nearest", "{\"eps\": 1e-05, \"momentum\": 0.1}", {}, {}};
  e.inputs = {book.input(kFile, "batchnorm/x", x), book.input(kFile, "batchnorm/weight", *bn.weight),
              book.input(kFile, "batchnorm/bias", *bn.bias)};
  Tensor g = values({4, 3, 2, 2}, 23);
  e.inputs.push_back(book.input(kFile, "batchnorm/g", g));
  Tensor w = *bn.weight, b = *bn.bias;
  {
    TrainingScope training;
    Tensor out = bn(x);
    e.outputs.push_back(book.output(kFile, out));
    for (const Tensor& gr : out.gradient({x, w, b}, g)) e.outputs.push_back(book.output(kFile, gr));
  }
  e.outputs.push_back(book.output(kFile, *bn.running_mean));
  e.outputs.push_back(book.output(kFile, *bn.running_var));
  book.add(e);
  TrainingScope eval(false);
  book.add({"batchnorm/eval", "batchnorm/eval", "float32", "nearest", "{\"after\": \"batchnorm/train\"}",
            {e.inputs[0]}, {book.output(kFile, bn(x))}});
}

// Three steps of each optimizer on one parameter, the gradients given: the parameter after each
// step, then the optimizer's state after the third.
void optimizers(Book& book) {
  Tensor p0 = values({2, 3}, 30);
  std::vector<Tensor> gs = {values({2, 3}, 31), values({2, 3}, 32, 1e-3), values({2, 3}, 33, 10)};
  struct Case {
    std::string id, args;
    std::function<std::unique_ptr<optim::Optimizer>(Tensor)> make;
  };
  std::vector<Case> cases = {
      {"adam", "{\"lr\": 0.001, \"b1\": 0.9, \"b2\": 0.999, \"eps\": 1e-08}",
       [](Tensor p) { return std::make_unique<optim::Adam>(std::vector<Tensor>{p}); }},
      {"adamw", "{\"lr\": 0.01, \"b1\": 0.9, \"b2\": 0.999, \"eps\": 1e-08, \"weight_decay\": 0.01}",
       [](Tensor p) { return std::make_unique<optim::AdamW>(std::vector<Tensor>{p}, 0.01); }},
      {"sgd", "{\"lr\": 0.01}", [](Tensor p) { return std::make_unique<optim::SGD>(std::vector<Tensor>{p}, 0.01); }},
      {"sgd/momentum_nesterov_wd", "{\"lr\": 0.01, \"momentum\": 0.9, \"nesterov\": true, \"weight_decay\": 0.1}",
       [](Tensor p) { return std::make_unique<optim::SGD>(std::vector<Tensor>{p}, 0.01, 0.9, 0.1, true); }},
  };
  TrainingScope training;
  for (const Case& c : cases) {
    Tensor p = leaf(p0);
    auto opt = c.make(p);
    Entry e{"optim/" + c.id, "optim/" + c.id, "float32", "nearest", c.args, {book.input(kFile, "optim/p0", p0)}, {}};
    for (size_t k = 0; k < gs.size(); ++k) {
      e.inputs.push_back(book.input(kFile, "optim/g" + std::to_string(k + 1), gs[k]));
      p.set_grad(gs[k]);
      opt->step();
      e.outputs.push_back(book.output(kFile, p));
    }
    if (auto* adam = dynamic_cast<optim::LAMB*>(opt.get())) {
      for (const Tensor& t : {adam->m[0], adam->v[0], adam->b1_t, adam->b2_t}) e.outputs.push_back(book.output(kFile, t));
    } else if (auto* sgd = dynamic_cast<optim::LARS*>(opt.get()); sgd && !sgd->b.empty()) {
      e.outputs.push_back(book.output(kFile, sgd->b[0]));
    }
    book.add(e);
  }
}

// x feeds three multiplies whose gradients, summed in two different orders, differ: the walk sums
// a node's contributions in the order its consumers are reached backwards (the last consumer in
// the forward topological order first), here (c + b) + a = 1, where (a + b) + c would be 0.
void gradient_order(Book& book) {
  Tensor x = Tensor::from_vector<float>({0.75f}, {1});
  Tensor k = Tensor::from_vector<float>({1.0f, 33554432.0f, -33554432.0f}, {3});
  record(book, "gradient_order", "{\"f\": \"(x*k[0] + x*k[1]) + x*k[2]\"}", {{"x", x}, {"k", k, false}},
         [](auto& v) { return (v[0] * v[1][0] + v[0] * v[1][1]) + v[0] * v[1][2]; });
}

}  // namespace

void add_composites(Book& book) {
  elementwise(book);
  softmax_family(book);
  layers(book);
  batchnorm(book);
  optimizers(book);
  gradient_order(book);
}

}  // namespace maroon::vectors
