// tinygrad's optimizers (tinygrad/nn/optim.py): SGD/LARS and Adam/AdamW/LAMB.
#include "maroon/optim.h"

#include <unordered_set>

namespace maroon::optim {

Optimizer::Optimizer(std::vector<Tensor> params, double lr_)
    : lr(Tensor::full({1}, lr_, DType::Float32).realized_leaf()) {
  if (lr_ < 0) throw ShapeError("[optimizer] invalid learning rate " + std::to_string(lr_));
  std::unordered_set<const TensorState*> seen;
  for (auto& p : params)
    if (seen.insert(p.state().get()).second) params_.push_back(p);
  if (params_.empty()) throw ShapeError("[optimizer] must have at least one param");
}

void Optimizer::zero_grad() {
  for (auto& p : params_) p.set_grad(std::nullopt);
}

void Optimizer::step() {
  if (!Tensor::training())
    throw Error("[optimizer] Tensor::training() must be on to use the optimizer (tinygrad's TRAINING)");
  std::vector<Tensor> grads;
  for (auto& p : params_) {
    if (!p.grad()) throw ShapeError("[optimizer] a parameter of shape " + shape_str(p.shape()) + " has no grad");
    grads.push_back(*p.grad());
  }
  begin_step();
  // Parameter by parameter, each with its states: one schedule computes the states' new values
  // and the parameter's, which the CPU backend runs as one kernel writing all three (cpu/plan.cpp
  // find_outputs; Adam's m, v and parameter: one pass over 7 streams of memory where a kernel
  // per value had 10). Parameter by parameter, the kernel reads what the last one left in cache
  // (all states first and then all parameters, the Adam update of the MNIST MLP's first layer
  // took 0.7-0.9 ms instead of 0.15-0.19 ms). Each parameter's update reads only its own
  // gradient and state and the shared scalars, and assign() gives each tensor a new buffer (the
  // graph of a later gradient still reads the old one), so the order changes no bit.
  pending_.clear();
  try {
    for (size_t i = 0; i < params_.size(); ++i) {
      Tensor next = params_[i].detach() - update(i, grads[i]);  // no other handle: it fuses (see LAMB)
      if (!pending_.empty()) next.realize();  // with the states' values (assign_after)
      for (auto& [state, value] : pending_) state->assign(value);
      pending_.clear();
      params_[i].assign(next);
    }
  } catch (...) {
    pending_.clear();
    throw;
  }
}

namespace {
std::vector<Tensor> zeros_for(const std::vector<Tensor>& params) {
  std::vector<Tensor> out;
  for (auto& p : params) out.push_back(Tensor::zeros(p.shape(), DType::Float32).realized_leaf());
  return out;
}
}  // namespace

LARS::LARS(std::vector<Tensor> params, double lr_, double momentum_, double wd_, bool nesterov_, bool classic_,
           bool pre_wd_, double tcoef_)
    : Optimizer(std::move(params), lr_),
      momentum(momentum_), wd(wd_), nesterov(nesterov_), classic(classic_), pre_wd(pre_wd_), tcoef(tcoef_) {
  if (momentum < 0) throw ShapeError("[LARS] invalid momentum " + std::to_string(momentum));
  if (momentum != 0) b = zeros_for(params_);
}

Tensor LARS::update(size_t i, const Tensor& grad) {
  Tensor t = params_[i], g = grad;
  std::optional<Tensor> r;  // the trust ratio; nullopt is tinygrad's float 1.0
  if (tcoef != 0) {
    Tensor r1 = t.detach().square().sum().sqrt();
    Tensor r2 = g.square().sum().sqrt();
    r = (r1 > 0).where((r2 > 0).where(tcoef * r1 / (r2 + wd * r1), 1.0), 1.0);
  }
  auto times_r = [&](const Tensor& x) { return r ? x * *r : x * 1.0; };
  if (pre_wd && wd > 0) g = g + wd * t.detach();
  if (classic) g = times_r(g) * lr;
  if (momentum != 0) {
    Tensor b_next = momentum * b[i] + g;  // a statement of its own: see LAMB::update
    assign_after(b[i], b_next);
    g = nesterov ? g + momentum * b_next : b_next;
  }
  if (!pre_wd && wd > 0) t = t.detach() * (1.0 - wd * lr);
  if (!classic) g = times_r(g) * lr;
  return g.cast(t.dtype());
}

LAMB::LAMB(std::vector<Tensor> params, double lr_, double b1_, double b2_, double eps_, double wd_, bool adam_)
    : Optimizer(std::move(params), lr_),
      b1_t(Tensor::ones({1}, DType::Float32).realized_leaf()),
      b2_t(Tensor::ones({1}, DType::Float32).realized_leaf()),
      b1(b1_), b2(b2_), eps(eps_), wd(wd_), adam(adam_) {
  if (wd < 0) throw ShapeError("[LAMB] invalid weight_decay " + std::to_string(wd));
  m = zeros_for(params_);
  v = zeros_for(params_);
}

void LAMB::begin_step() {
  b1_t.assign(b1_t * b1);
  b2_t.assign(b2_t * b2);
}

Tensor LAMB::update(size_t i, const Tensor& g) {
  const Tensor& t = params_[i];
  // Each new value is made in a statement of its own: a temporary of the expression (b1 * m[i]
  // in b1 * m[i] + ...) lives to the end of the full expression, and a node a live handle can
  // see when the step realizes is materialized instead of fused (cpu/plan.cpp), which split
  // each update into 4-6 kernels, each a pass over a parameter-sized array, instead of one.
  // The states are assigned after the parameter's value is realized with them (assign_after),
  // which reads their new values: the same ops, each rounded once, the same bits.
  Tensor m_next = (b1 * m[i] + (1.0 - b1) * g).cast(m[i].dtype());
  assign_after(m[i], m_next);
  Tensor v_next = (b2 * v[i] + (1.0 - b2) * (g * g)).cast(v[i].dtype());
  assign_after(v[i], v_next);
  Tensor m_hat = m_next / (1.0 - b1_t);
  Tensor v_hat = v_next / (1.0 - b2_t);
  Tensor up = m_hat / (v_hat.sqrt() + eps) + wd * t.detach();
  Tensor lr_r = lr * 1.0;
  if (!adam) {
    Tensor r1 = t.detach().square().sum().sqrt();
    Tensor r2 = up.square().sum().sqrt();
    lr_r = lr * (r1 > 0).where((r2 > 0).where(r1 / r2, 1.0), 1.0);
  }
  return (lr_r * up).cast(t.dtype());
}

}  // namespace maroon::optim
