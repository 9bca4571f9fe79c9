// tinygrad's nn layers (tinygrad/nn/__init__.py).
#include <cmath>

#include "core/fpenv.h"
#include "maroon/nn.h"
#include "maroon/primitives.h"

namespace maroon::nn {

namespace {
int64_t prod(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}
std::vector<int64_t> pair2(std::vector<int64_t> k) { return k.size() == 1 ? std::vector<int64_t>{k[0], k[0]} : k; }
void put(StateDict& sd, const std::string& k, const std::optional<Tensor>& t) {
  if (t) sd.push_back({k, *t});
}
}  // namespace

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto& [k, t] : state_dict()) out.push_back(t);
  return out;
}

namespace {
double inv_sqrt(int64_t n) {
  return in_ieee_env([&] { return 1 / std::sqrt(static_cast<double>(n)); });
}
}  // namespace

Linear::Linear(int64_t in, int64_t out, bool has_bias)
    : weight(Tensor::uniform({out, in}, -inv_sqrt(in), inv_sqrt(in))) {
  double bound = inv_sqrt(in);
  if (has_bias) bias = Tensor::uniform({out}, -bound, bound);
}
Tensor Linear::operator()(const Tensor& x) const { return x.linear(weight.transpose(), bias); }
StateDict Linear::state_dict() const {
  StateDict sd{{"weight", weight}};
  put(sd, "bias", bias);
  return sd;
}

Conv2d::Conv2d(int64_t in, int64_t out, std::vector<int64_t> k, std::vector<int64_t> stride_,
               std::vector<int64_t> padding_, std::vector<int64_t> dilation_, int64_t groups_, bool has_bias)
    : weight(Tensor::zeros({1})),
      kernel_size(pair2(std::move(k))),
      stride(std::move(stride_)),
      padding(std::move(padding_)),
      dilation(std::move(dilation_)),
      groups(groups_) {
  double scale = inv_sqrt(in * prod(kernel_size));
  Shape ws{out, in / groups};
  ws.insert(ws.end(), kernel_size.begin(), kernel_size.end());
  weight = Tensor::uniform(ws, -scale, scale);
  if (has_bias) bias = Tensor::uniform({out}, -scale, scale);
}
Tensor Conv2d::operator()(const Tensor& x) const {
  return x.conv2d(weight, bias, groups, stride, dilation, padding);
}
StateDict Conv2d::state_dict() const {
  StateDict sd{{"weight", weight}};
  put(sd, "bias", bias);
  return sd;
}

BatchNorm::BatchNorm(int64_t sz, double eps_, bool affine, bool track, double momentum_)
    : eps(eps_), momentum(momentum_), track_running_stats(track), num_batches_tracked(Tensor::zeros({}, DType::Int64)) {
  if (affine) {
    weight = Tensor::ones({sz});
    bias = Tensor::zeros({sz});
  }
  if (track) {
    running_mean = Tensor::zeros({sz});
    running_var = Tensor::ones({sz});
  }
}

Tensor BatchNorm::operator()(const Tensor& x) {
  Shape shape_mask{1, -1};
  shape_mask.insert(shape_mask.end(), x.ndim() - 2, 1);
  Tensor batch_mean = Tensor::zeros({1}), batch_var = Tensor::zeros({1});
  if (track_running_stats && !Tensor::training()) {
    batch_mean = *running_mean;
    batch_var = running_var->reshape(shape_mask);
  } else {
    std::vector<int64_t> axes;
    for (int64_t i = 0; i < x.ndim(); ++i)
      if (i != 1) axes.push_back(i);
    batch_mean = x.mean(Axis(axes));
    // The variance treats the mean as a constant (detach), as tinygrad.
    Tensor y = x - batch_mean.detach().reshape(shape_mask);
    batch_var = (y * y).mean(Axis(axes));
  }
  if (track_running_stats && Tensor::training()) {
    BatchStats s{batch_mean.detach(), batch_var.detach(), x.numel()};
    if (defer_running)
      defer_running->push_back(std::move(s));
    else
      update_running(s);
  }
  return x.batchnorm(weight, bias, batch_mean, batch_var.add(eps).rsqrt());
}

void BatchNorm::update_running(const BatchStats& s) {
  if (!running_mean || !running_var) throw ShapeError("[BatchNorm] update_running needs track_running_stats");
  if (s.mean.shape() != running_mean->shape() || s.var.shape() != running_mean->shape())
    throw ShapeError("[BatchNorm] batch statistics of shape " + shape_str(s.mean.shape()) + " for running ones of " +
                     shape_str(running_mean->shape()));
  running_mean->assign((1 - momentum) * *running_mean + momentum * s.mean);
  // Python evaluates momentum * numel / (numel - C) left to right in doubles.
  double n = static_cast<double>(s.numel), c = static_cast<double>(running_mean->shape()[0]);
  running_var->assign((1 - momentum) * *running_var + momentum * n / (n - c) * s.var);
  num_batches_tracked.assign(num_batches_tracked + 1);
}

StateDict BatchNorm::state_dict() const {
  StateDict sd;
  put(sd, "weight", weight);
  put(sd, "bias", bias);
  put(sd, "num_batches_tracked", num_batches_tracked);
  put(sd, "running_mean", running_mean);
  put(sd, "running_var", running_var);
  return sd;
}

std::vector<Tensor> BatchNorm::parameters() const {
  std::vector<Tensor> out;
  if (weight) out.push_back(*weight);
  if (bias) out.push_back(*bias);
  return out;
}

LayerNorm::LayerNorm(Shape ns, double eps_, bool affine) : normalized_shape(std::move(ns)), eps(eps_) {
  if (affine) {
    weight = Tensor::ones(normalized_shape);
    bias = Tensor::zeros(normalized_shape);
  }
}
Tensor LayerNorm::operator()(const Tensor& x) const {
  int64_t n = static_cast<int64_t>(normalized_shape.size());
  bool ok = x.ndim() >= n && Shape(x.shape().end() - n, x.shape().end()) == normalized_shape;
  if (!ok)
    throw ShapeError("[LayerNorm] last dimensions of " + shape_str(x.shape()) + " must match " +
                     shape_str(normalized_shape));
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < n; ++i) axes.push_back(-1 - i);
  Tensor y = x.layernorm(Axis(axes), eps);
  if (!weight || !bias) return y;
  return y * *weight + *bias;
}
StateDict LayerNorm::state_dict() const {
  StateDict sd;
  put(sd, "weight", weight);
  put(sd, "bias", bias);
  return sd;
}

GroupNorm::GroupNorm(int64_t g, int64_t c, double eps_, bool affine) : num_groups(g), num_channels(c), eps(eps_) {
  if (affine) {
    weight = Tensor::ones({c});
    bias = Tensor::zeros({c});
  }
}
Tensor GroupNorm::operator()(const Tensor& x) const {
  Tensor y = x.reshape({x.shape()[0], num_groups, -1}).layernorm(-1, eps).reshape(x.shape());
  if (!weight || !bias) return y;
  Shape s{1, -1};
  s.insert(s.end(), x.ndim() - 2, 1);
  return y * weight->reshape(s) + bias->reshape(s);
}
StateDict GroupNorm::state_dict() const {
  StateDict sd;
  put(sd, "weight", weight);
  put(sd, "bias", bias);
  return sd;
}

Embedding::Embedding(int64_t v, int64_t e) : vocab_size(v), embed_size(e), weight(Tensor::glorot_uniform({v, e})) {}
Tensor Embedding::operator()(const Tensor& idx) const {
  if (!is_int(idx.dtype()))
    throw DTypeError("[Embedding] expected an integer index dtype, got " + std::string(dtype_name(idx.dtype())));
  // tinygrad's (arange == idx[..., None])[..., None].where(weight, 0).sum(-2), as one GATHER of
  // weight's rows: the same bits but for -0 weights; an index outside [0, vocab) gives a zero row
  // as there (docs/spec.md §15).
  Shape out = idx.shape();
  out.push_back(weight.shape()[1]);
  return prim::gather(weight, idx.reshape({idx.numel(), 1}), 0).reshape(out);
}
StateDict Embedding::state_dict() const { return {{"weight", weight}}; }

StateDict get_state_dict(const std::vector<std::pair<std::string, const Module*>>& modules) {
  StateDict out;
  for (auto& [name, m] : modules)
    for (auto& [k, t] : m->state_dict()) out.push_back({name.empty() ? k : name + "." + k, t});
  return out;
}

std::vector<Tensor> get_parameters(const std::vector<const Module*>& modules) {
  std::vector<Tensor> out;
  for (const Module* m : modules)
    for (const Tensor& t : m->parameters()) out.push_back(t);
  return out;
}

std::vector<Tensor> load_state_dict(const StateDict& into, const std::map<std::string, Tensor>& from, bool strict) {
  std::vector<Tensor> out;
  for (auto [k, t] : into) {
    auto it = from.find(k);
    if (it == from.end()) {
      if (strict) throw ShapeError("[load_state_dict] missing key '" + k + "'");
      continue;
    }
    if (it->second.shape() != t.shape())
      throw ShapeError("[load_state_dict] shape mismatch for '" + k + "': " + shape_str(t.shape()) + " vs " +
                       shape_str(it->second.shape()));
    t.assign(it->second.cast(t.dtype()));
    out.push_back(t);
  }
  return out;
}

}  // namespace maroon::nn
