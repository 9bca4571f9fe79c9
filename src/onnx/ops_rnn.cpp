// RNN, GRU and LSTM: the recurrence unrolled over the time steps on the host, each step a few
// unfused matmuls (left-fold sums), adds and the activation methods, in the order of ONNX's
// reference (onnx/backend/test/case/node/{rnn,gru,lstm}.py), so the bits are those of that
// composition. sequence_lens masks each batch row: past its length the state is held and Y is 0
// (so the reverse direction starts at each row's own last step).
#include <functional>
#include <optional>
#include <set>

#include "onnx/graph.h"

namespace maroon::onnx {

namespace {

Tensor k(const Tensor& like, double v) { return Tensor::full({}, v, like.dtype()); }

// One activation of the `activations` attribute, with its alpha and beta.
struct Act {
  std::string name;
  std::optional<double> alpha, beta;
  Tensor operator()(const Tensor& x) const {
    auto a = [&](double d) { return k(x, alpha.value_or(d)); };
    auto b = [&](double d) { return k(x, beta.value_or(d)); };
    if (name == "Sigmoid") return x.sigmoid();
    if (name == "Tanh") return x.tanh();
    if (name == "Relu") return x.relu();
    if (name == "LeakyRelu") return x.lt(0.0).where(x.mul(a(0.01)), x);
    if (name == "ThresholdedRelu") return x.gt(a(1.0)).where(x, 0.0);
    if (name == "HardSigmoid") return x.mul(a(0.2)).add(b(0.5)).maximum(0.0).minimum(1.0);
    if (name == "Affine") return x.mul(a(1.0)).add(b(0.0));
    if (name == "ScaledTanh") return x.mul(b(1.0)).tanh().mul(a(1.0));
    if (name == "Elu") return x.elu(alpha.value_or(1.0));
    if (name == "Softsign") return x.softsign();
    return x.softplus();  // "Softplus"; names are checked in activations()
  }
};

struct Rnn {
  const OpCtx& c;
  int64_t gates, hidden = 0, dirs = 1, seq = 0, batch = 0;
  bool batchwise = false;
  Tensor x;                       // (seq, batch, input)
  std::optional<Tensor> lens;     // (batch, 1) int64
  std::vector<Act> acts;          // per direction, `per_dir` each
  std::vector<Tensor> init;       // initial_h (and initial_c): (dirs, batch, hidden)

  Rnn(const OpCtx& ctx, int64_t g) : c(ctx), gates(g), x(ctx.input(0)) {}

  void check(const Tensor& t, const Shape& want, const char* what) const {
    if (t.shape() != want) c.fail(std::string(what) + " must be " + shape_str(want) + ", got " + shape_str(t.shape()));
  }

  void setup(std::vector<std::string> default_acts) {
    if (!is_float(x.dtype()) || x.ndim() != 3) c.fail("X must be a 3-D float tensor, got " + shape_str(x.shape()));
    batchwise = c.attr_i("layout", 0) != 0;
    if (batchwise) x = x.transpose(0, 1);
    seq = x.shape()[0];
    batch = x.shape()[1];
    std::string dir = c.attr_s("direction", "forward");
    if (dir == "bidirectional") dirs = 2;
    else if (dir != "forward" && dir != "reverse") c.fail("unknown direction '" + dir + "'");
    hidden = c.attr_i("hidden_size", c.input(2).shape().back());
    if (hidden < 1) c.fail("hidden_size must be positive");
    if (c.has_attr("clip")) c.fail("the 'clip' attribute is refused");
    check(c.input(1), {dirs, gates * hidden, x.shape()[2]}, "W");
    check(c.input(2), {dirs, gates * hidden, hidden}, "R");
    if (c.has(3)) check(c.input(3), {dirs, 2 * gates * hidden}, "B");
    if (c.has(4)) {
      const Tensor& l = c.input(4);
      if (!is_int(l.dtype())) c.fail("sequence_lens must be integers");
      check(l, {batch}, "sequence_lens");
      for (int64_t v : c.ints(4))
        if (v < 0 || v > seq) c.fail("sequence_lens value " + std::to_string(v) + " is outside [0, " + std::to_string(seq) + "]");
      lens = l.cast(DType::Int64).reshape({batch, 1});
    }
    activations(std::move(default_acts));
  }

  void activations(std::vector<std::string> defaults) {
    std::vector<std::string> names = c.has_attr("activations") ? c.attr("activations")->strings : std::vector<std::string>{};
    if (names.empty())
      for (int64_t d = 0; d < dirs; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
    if (names.size() != defaults.size() * static_cast<size_t>(dirs))
      c.fail("activations must name " + std::to_string(defaults.size() * dirs) + " functions");
    std::vector<double> al = c.attr_floats("activation_alpha"), be = c.attr_floats("activation_beta");
    static const std::set<std::string> known{"Sigmoid", "Tanh", "Relu", "LeakyRelu", "ThresholdedRelu", "HardSigmoid",
                                              "Affine", "ScaledTanh", "Elu", "Softsign", "Softplus"};
    for (size_t i = 0; i < names.size(); ++i) {
      if (!known.count(names[i])) c.fail("unknown activation '" + names[i] + "'");
      Act a{names[i], {}, {}};
      if (i < al.size()) a.alpha = al[i];
      if (i < be.size()) a.beta = be[i];
      acts.push_back(a);
    }
  }

  // initial_h / initial_c (input `i`), zeros when omitted: (dirs, batch, hidden).
  void initial(size_t i) {
    if (!c.has(i)) {
      init.push_back(Tensor::zeros({dirs, batch, hidden}, x.dtype()));
      return;
    }
    Tensor t = c.input(i);
    if (batchwise) t = t.transpose(0, 1);
    check(t, {dirs, batch, hidden}, i == 5 ? "initial_h" : "initial_c");
    init.push_back(t);
  }

  // Columns [g·hidden, (g+n)·hidden) of the last axis.
  Tensor cols(const Tensor& t, int64_t g, int64_t n = 1) const {
    Pairs p;
    for (int64_t i = 0; i + 1 < t.ndim(); ++i) p.push_back({0, t.shape()[i]});
    p.push_back({g * hidden, (g + n) * hidden});
    return t.shrink(p);
  }

  using Step = std::function<std::vector<Tensor>(int64_t d, const Tensor& xt, const std::vector<Tensor>& s)>;

  // Runs every direction; returns Y (seq, dirs, batch, hidden) and the final states, each
  // (dirs, batch, hidden), in the layout the node asked for.
  std::vector<Tensor> run(const Step& step) {
    std::vector<Tensor> ys;
    std::vector<std::vector<Tensor>> finals(init.size());
    for (int64_t d = 0; d < dirs; ++d) {
      const bool reverse = dirs == 2 ? d == 1 : c.attr_s("direction", "forward") == "reverse";
      std::vector<Tensor> s;
      for (const Tensor& t : init) s.push_back(t.shrink({{d, d + 1}, {0, batch}, {0, hidden}}).reshape({batch, hidden}));
      std::vector<std::optional<Tensor>> y(static_cast<size_t>(seq));
      for (int64_t i = 0; i < seq; ++i) {
        const int64_t t = reverse ? seq - 1 - i : i;
        Tensor xt = x.shrink({{t, t + 1}, {0, batch}, {0, x.shape()[2]}}).reshape({batch, x.shape()[2]});
        std::vector<Tensor> n = step(d, xt, s);
        if (lens) {
          Tensor live = lens->gt(Tensor::full({}, t, DType::Int64));
          for (size_t j = 0; j < n.size(); ++j) n[j] = live.where(n[j], s[j]);
          y[static_cast<size_t>(t)] = live.where(n[0], 0.0);
        } else {
          y[static_cast<size_t>(t)] = n[0];
        }
        s = n;
      }
      std::vector<Tensor> steps;
      for (auto& t : y) steps.push_back(*t);
      ys.push_back(Tensor::stack_all(steps, 0));
      for (size_t j = 0; j < s.size(); ++j) finals[j].push_back(s[j]);
    }
    Tensor y = Tensor::stack_all(ys, 1);
    std::vector<Tensor> out{batchwise ? y.permute({2, 0, 1, 3}) : y};
    for (auto& f : finals) {
      Tensor h = Tensor::stack_all(f, 0);
      out.push_back(batchwise ? h.transpose(0, 1) : h);
    }
    return out;
  }

  // x·Wᵀ and h·Rᵀ for direction d (all gates at once: each column its own left-fold dot product).
  Tensor xw(int64_t d, const Tensor& xt) const { return xt.matmul(dir_row(c.input(1), d).transpose(0, 1)); }
  Tensor hr(int64_t d, const Tensor& h) const { return h.matmul(dir_row(c.input(2), d).transpose(0, 1)); }
  static Tensor dir_row(const Tensor& t, int64_t d) {
    Pairs p{{d, d + 1}};
    for (int64_t i = 1; i < t.ndim(); ++i) p.push_back({0, t.shape()[i]});
    Shape s(t.shape().begin() + 1, t.shape().end());
    return t.shrink(p).reshape(s);
  }
  // The biases Wb, Rb of direction d ((gates·hidden) each), zeros when B is omitted.
  Tensor wb(int64_t d) const { return bias(d, 0); }
  Tensor rb(int64_t d) const { return bias(d, 1); }
  Tensor bias(int64_t d, int64_t half) const {
    if (!c.has(3)) return Tensor::zeros({gates * hidden}, x.dtype());
    Tensor b = dir_row(c.input(3), d);
    return b.shrink({{half * gates * hidden, (half + 1) * gates * hidden}});
  }
};

// Hₜ = f(Xₜ·Wᵀ + Hₜ₋₁·Rᵀ + (Wb + Rb))
std::vector<Tensor> rnn(const OpCtx& c) {
  Rnn r(c, 1);
  r.setup({"Tanh"});
  r.initial(5);
  return r.run([&](int64_t d, const Tensor& xt, const std::vector<Tensor>& s) {
    return std::vector<Tensor>{r.acts[d](r.xw(d, xt).add(r.hr(d, s[0])).add(r.wb(d).add(r.rb(d))))};
  });
}

// Gates z, r, h; linear_before_reset picks where r applies.
std::vector<Tensor> gru(const OpCtx& c) {
  Rnn r(c, 3);
  r.setup({"Sigmoid", "Tanh"});
  r.initial(5);
  const bool lbr = c.attr_i("linear_before_reset", 0) != 0;
  return r.run([&](int64_t d, const Tensor& xt, const std::vector<Tensor>& s) {
    const Act &f = r.acts[2 * d], &g = r.acts[2 * d + 1];
    const Tensor& h = s[0];
    Tensor gw = r.xw(d, xt), gr = r.hr(d, h), wb = r.wb(d), rb = r.rb(d);
    Tensor z = f(r.cols(gw, 0).add(r.cols(gr, 0)).add(r.cols(wb, 0)).add(r.cols(rb, 0)));
    Tensor rr = f(r.cols(gw, 1).add(r.cols(gr, 1)).add(r.cols(wb, 1)).add(r.cols(rb, 1)));
    // Rₕ: rows [2·hidden, 3·hidden) of R[d], for (r ⊙ Hₜ₋₁)·Rₕᵀ.
    auto rh = [&] { return Rnn::dir_row(c.input(2), d).shrink({{2 * r.hidden, 3 * r.hidden}, {0, r.hidden}}); };
    Tensor hh = lbr ? g(r.cols(gw, 2).add(rr.mul(r.cols(gr, 2).add(r.cols(rb, 2)))).add(r.cols(wb, 2)))
                    : g(r.cols(gw, 2).add(rr.mul(h).matmul(rh().transpose(0, 1))).add(r.cols(wb, 2)).add(r.cols(rb, 2)));
    // (1 − z)·h̃ + z·Hₜ₋₁
    return std::vector<Tensor>{k(z, 1.0).sub(z).mul(hh).add(z.mul(h))};
  });
}

// Gates i, o, f, c with optional peepholes P (i, o, f); input_forget couples f to 1 − i.
std::vector<Tensor> lstm(const OpCtx& c) {
  Rnn r(c, 4);
  r.setup({"Sigmoid", "Tanh", "Tanh"});
  if (c.attr_i("input_forget", 0) != 0) c.fail("input_forget=1 is refused");
  r.initial(5);
  r.initial(6);
  if (c.has(7)) r.check(c.input(7), {r.dirs, 3 * r.hidden}, "P");
  return r.run([&](int64_t d, const Tensor& xt, const std::vector<Tensor>& s) {
    const Act &f = r.acts[3 * d], &g = r.acts[3 * d + 1], &hf = r.acts[3 * d + 2];
    const Tensor &h = s[0], &cprev = s[1];
    Tensor gates = r.xw(d, xt).add(r.hr(d, h)).add(r.wb(d).add(r.rb(d)));
    auto peep = [&](Tensor gate, int64_t j, const Tensor& cell) {
      if (!c.has(7)) return gate;
      return gate.add(r.cols(Rnn::dir_row(c.input(7), d), j).mul(cell));
    };
    Tensor i = f(peep(r.cols(gates, 0), 0, cprev));
    Tensor fg = f(peep(r.cols(gates, 2), 2, cprev));
    Tensor cc = g(r.cols(gates, 3));
    Tensor cell = fg.mul(cprev).add(i.mul(cc));
    Tensor o = f(peep(r.cols(gates, 1), 1, cell));
    return std::vector<Tensor>{o.mul(hf(cell)), cell};
  });
}

}  // namespace

void add_rnn_ops(OpTable& t) {
  t["RNN"] = rnn;
  t["GRU"] = gru;
  t["LSTM"] = lstm;
}

}  // namespace maroon::onnx
