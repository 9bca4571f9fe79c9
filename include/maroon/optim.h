// tinygrad's optimizers (tinygrad/nn/optim.py) with its exact update formulas.
#pragma once
#include <utility>
#include <vector>

#include "maroon/tensor.h"

namespace maroon::optim {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  void zero_grad();
  // Applies one update to every parameter from its .grad (needs Tensor::training(), as
  // tinygrad's TRAINING). Parameters are assigned in place: every copy of a handle sees them.
  void step();
  const std::vector<Tensor>& params() const { return params_; }
  Tensor lr;  // a float32 tensor of shape (1,)

 protected:
  Optimizer(std::vector<Tensor> params, double lr);
  // Called once per step before any parameter's update (LAMB advances b1^t and b2^t).
  virtual void begin_step() {}
  // The update `up` for parameter i from its gradient (its own state's new values handed to
  // assign_after, if any); step() applies t <- t.detach() - up before asking for the next
  // parameter's.
  virtual Tensor update(size_t i, const Tensor& grad) = 0;
  // Assigns `value` to `state` once the parameter's new value is realized, in the same schedule:
  // the state's and the parameter's values are then one kernel's outputs (cpu/plan.cpp). The
  // update reads `value`, not `state`.
  void assign_after(Tensor& state, const Tensor& value) { pending_.push_back({&state, value}); }
  std::vector<Tensor> params_;

 private:
  std::vector<std::pair<Tensor*, Tensor>> pending_;
};

// LARS; SGD is LARS(tcoef=0, pre_wd=true, classic=false).
class LARS : public Optimizer {
 public:
  LARS(std::vector<Tensor> params, double lr = 0.001, double momentum = 0.9, double weight_decay = 1e-4,
       bool nesterov = false, bool classic = true, bool pre_wd = true, double tcoef = 0.001);
  std::vector<Tensor> b;  // momentum buffers

 protected:
  Tensor update(size_t i, const Tensor& grad) override;
  double momentum, wd;
  bool nesterov, classic, pre_wd;
  double tcoef;
};

class SGD : public LARS {
 public:
  SGD(std::vector<Tensor> params, double lr = 0.001, double momentum = 0.0, double weight_decay = 0.0,
      bool nesterov = false, bool classic = false)
      : LARS(std::move(params), lr, momentum, weight_decay, nesterov, classic, true, 0.0) {}
};

// LAMB; Adam and AdamW are LAMB(adam=true).
class LAMB : public Optimizer {
 public:
  LAMB(std::vector<Tensor> params, double lr = 0.001, double b1 = 0.9, double b2 = 0.999, double eps = 1e-6,
       double weight_decay = 0.0, bool adam = false);
  Tensor b1_t, b2_t;  // running products b1^t, b2^t (float32, shape (1,))
  std::vector<Tensor> m, v;

 protected:
  void begin_step() override;
  Tensor update(size_t i, const Tensor& grad) override;
  double b1, b2, eps, wd;
  bool adam;
};

class Adam : public LAMB {
 public:
  Adam(std::vector<Tensor> params, double lr = 0.001, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8)
      : LAMB(std::move(params), lr, b1, b2, eps, 0.0, true) {}
};

class AdamW : public LAMB {
 public:
  AdamW(std::vector<Tensor> params, double lr = 0.001, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
        double weight_decay = 0.01)
      : LAMB(std::move(params), lr, b1, b2, eps, weight_decay, true) {}
};

}  // namespace maroon::optim
