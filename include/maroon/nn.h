// tinygrad's nn layers (tinygrad/nn/__init__.py) with its initialisation, and state dicts.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "maroon/tensor.h"

namespace maroon::nn {

// Named tensors in a fixed order (tinygrad's state_dict keys, e.g. "weight", "l1.bias").
using StateDict = std::vector<std::pair<std::string, Tensor>>;

// A layer: its state (parameters and buffers such as running statistics) by name, and the
// subset an optimizer trains (tinygrad's is_param).
class Module {
 public:
  virtual ~Module() = default;
  virtual StateDict state_dict() const = 0;
  virtual std::vector<Tensor> parameters() const;  // default: every state tensor
};

// Every tensor of `modules` under "<name>.<key>" (tinygrad's get_state_dict on an object).
StateDict get_state_dict(const std::vector<std::pair<std::string, const Module*>>& modules);
std::vector<Tensor> get_parameters(const std::vector<const Module*>& modules);
// Assigns each named tensor into the module's tensor of the same name (shapes and dtypes must
// match). strict: every key of the module must be present. Returns the loaded tensors.
std::vector<Tensor> load_state_dict(const StateDict& into, const std::map<std::string, Tensor>& from,
                                    bool strict = true);

class Linear : public Module {
 public:
  // weight (out, in) and bias (out,) ~ uniform(-1/sqrt(in), 1/sqrt(in)).
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor operator()(const Tensor& x) const;
  StateDict state_dict() const override;
  Tensor weight;
  std::optional<Tensor> bias;
};

class Conv2d : public Module {
 public:
  // weight (out, in/groups, kh, kw) and bias ~ uniform(+-1/sqrt(in*kh*kw)).
  Conv2d(int64_t in_channels, int64_t out_channels, std::vector<int64_t> kernel_size,
         std::vector<int64_t> stride = {1}, std::vector<int64_t> padding = {0},
         std::vector<int64_t> dilation = {1}, int64_t groups = 1, bool bias = true);
  Tensor operator()(const Tensor& x) const;
  StateDict state_dict() const override;
  Tensor weight;
  std::optional<Tensor> bias;
  std::vector<int64_t> kernel_size, stride, padding, dilation;
  int64_t groups;
};

class BatchNorm : public Module {
 public:
  explicit BatchNorm(int64_t sz, double eps = 1e-5, bool affine = true, bool track_running_stats = true,
                     double momentum = 0.1);
  // Training (Tensor::training()) uses batch statistics and updates the running ones; otherwise
  // the running statistics.
  Tensor operator()(const Tensor& x);
  StateDict state_dict() const override;
  std::vector<Tensor> parameters() const override;  // weight and bias only
  // One training forward's batch statistics (detached), and the input's element count that the
  // variance correction uses.
  struct BatchStats {
    Tensor mean, var;
    int64_t numel;
  };
  // The running-statistics update a training forward makes: running <- (1 - momentum) * running +
  // momentum * batch (the variance scaled by numel / (numel - C)), num_batches_tracked + 1.
  void update_running(const BatchStats& s);
  // While set, a training forward appends its statistics here instead of updating: the
  // data-parallel step (maroon/dist.h) applies every shard's in shard order.
  std::vector<BatchStats>* defer_running = nullptr;
  double eps, momentum;
  bool track_running_stats;
  std::optional<Tensor> weight, bias;
  std::optional<Tensor> running_mean, running_var;
  Tensor num_batches_tracked;
};
using BatchNorm2d = BatchNorm;

class LayerNorm : public Module {
 public:
  explicit LayerNorm(Shape normalized_shape, double eps = 1e-5, bool elementwise_affine = true);
  Tensor operator()(const Tensor& x) const;
  StateDict state_dict() const override;
  Shape normalized_shape;
  double eps;
  std::optional<Tensor> weight, bias;
};

class GroupNorm : public Module {
 public:
  GroupNorm(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true);
  Tensor operator()(const Tensor& x) const;
  StateDict state_dict() const override;
  int64_t num_groups, num_channels;
  double eps;
  std::optional<Tensor> weight, bias;
};

class Embedding : public Module {
 public:
  // weight ~ glorot_uniform(vocab_size, embed_size).
  Embedding(int64_t vocab_size, int64_t embed_size);
  Tensor operator()(const Tensor& idx) const;
  StateDict state_dict() const override;
  int64_t vocab_size, embed_size;
  Tensor weight;
};

}  // namespace maroon::nn
