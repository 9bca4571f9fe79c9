// Tensor state, backward() and the graph-only markers (detach, contiguous, assign).
#include <mutex>
#include <unordered_set>

#include "core/gradient.h"
#include "core/graph.h"
#include "core/jit_hooks.h"
#include "maroon/tensor.h"
#include "ref/scalar.h"
#include "maroon/primitives.h"

namespace maroon {

namespace {

// Every live TensorState, so backward() can fill .grad for each float tensor of the graph the
// way tinygrad walks its `all_tensors` weak set. Dead entries are pruned as the list grows.
struct Registry {
  std::mutex mu;
  std::vector<std::weak_ptr<TensorState>> states;
  size_t prune_at = 1024;

  void add(const std::shared_ptr<TensorState>& s) {
    std::lock_guard<std::mutex> lock(mu);
    if (states.size() >= prune_at) {
      std::erase_if(states, [](const std::weak_ptr<TensorState>& w) { return w.expired(); });
      prune_at = std::max<size_t>(1024, states.size() * 2);
    }
    states.push_back(s);
  }
  std::vector<std::shared_ptr<TensorState>> live() {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<std::shared_ptr<TensorState>> out;
    for (auto& w : states)
      if (auto s = w.lock()) out.push_back(std::move(s));
    return out;
  }
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: tensors may outlive static teardown
  return *r;
}

}  // namespace

std::vector<std::shared_ptr<TensorState>> live_tensor_states() { return registry().live(); }

Tensor::Tensor(std::shared_ptr<Node> node) : st_(std::make_shared<TensorState>()) {
  st_->node = std::move(node);
  registry().add(st_);
}

Index::Index(const Tensor& v) : kind(Kind::Tensor), t(std::make_shared<Tensor>(v)) {}

bool Tensor::is_floating_point() const { return is_float(dtype()); }

std::optional<Tensor> Tensor::grad() const {
  if (!st_->grad) return std::nullopt;
  Tensor g(st_->grad->node);
  g.st_ = st_->grad;  // the same state: assigning to the grad is seen through .grad()
  return g;
}

void Tensor::set_grad(std::optional<Tensor> g) {
  if (g && g->shape() != shape())
    throw ShapeError("[set_grad] gradient shape " + shape_str(g->shape()) +
                     " does not match tensor shape " + shape_str(shape()));
  st_->grad = g ? g->st_ : nullptr;
}

std::vector<Tensor> Tensor::gradient(const std::vector<Tensor>& targets,
                                     std::optional<Tensor> gradient) const {
  if (!gradient && ndim() != 0)
    throw ShapeError("[gradient] when no gradient is provided, the tensor must be a scalar, not " +
                     shape_str(shape()));
  if (!is_floating_point())
    throw DTypeError("[gradient] only float tensors have a gradient, not " +
                     std::string(dtype_name(dtype())));
  for (const Tensor& t : targets)
    if (!t.is_floating_point())
      throw DTypeError("[gradient] only float tensors have a gradient, not " +
                       std::string(dtype_name(t.dtype())));
  if (gradient && gradient->shape() != shape())
    throw ShapeError("[gradient] gradient shape " + shape_str(gradient->shape()) +
                     " does not match " + shape_str(shape()));
  Tensor seed = gradient ? *gradient : const_like(1.0);
  std::vector<const Node*> nodes;
  for (const Tensor& t : targets) nodes.push_back(t.node().get());
  auto grads = compute_gradient(*this, seed, nodes);
  std::vector<Tensor> out;
  for (const Tensor& t : targets) {
    auto it = grads.find(t.node().get());
    out.push_back(it != grads.end() ? it->second : t.const_like(0));
  }
  return out;
}

Tensor& Tensor::backward(std::optional<Tensor> gradient) {
  std::vector<Node*> topo = toposort_all(node());
  std::unordered_set<const Node*> in_graph(topo.begin(), topo.end());
  std::vector<std::shared_ptr<TensorState>> need;
  for (auto& s : registry().live())
    if (s->node && in_graph.count(s->node.get()) && is_float(s->node->dtype)) need.push_back(s);
  std::vector<Tensor> targets;
  for (auto& s : need) targets.push_back(Tensor(s->node));
  std::vector<Tensor> gs = this->gradient(targets, gradient);
  for (size_t i = 0; i < need.size(); ++i) {
    if (!need[i]->grad) {
      need[i]->grad = gs[i].st_;
    } else {
      Tensor old(need[i]->grad->node);
      need[i]->grad->node = prim::add(old, gs[i]).node();
    }
  }
  return *this;
}

Tensor Tensor::detach() const { return marker(*this, Op::DETACH); }
Tensor Tensor::contiguous() const { return *this; }
Tensor Tensor::contiguous_backward() const { return marker(*this, Op::CONTIGUOUS_BACKWARD); }

Tensor Tensor::realized_leaf() const {
  maroon::realize(node());
  auto n = make_node(Op::BUFFER, dtype(), shape(), {});
  n->buffer = node()->buffer;
  n->view = node()->view;
  n->realized = true;
  return Tensor(n);
}

Tensor& Tensor::assign(const Tensor& x) {
  if (x.shape() != shape())
    throw ShapeError("[assign] cannot assign shape " + shape_str(x.shape()) + " to " +
                     shape_str(shape()));
  if (x.dtype() != dtype())
    throw DTypeError("[assign] cannot assign " + std::string(dtype_name(x.dtype())) + " to " +
                     std::string(dtype_name(dtype())));
  if (jit_assign_in_place(st_, x)) return *this;
  jit_note_assign(st_);
  st_->node = x.realized_leaf().node();
  return *this;
}

std::vector<double> Tensor::tolist() const {
  std::vector<uint64_t> b = bits();
  std::vector<double> out;
  out.reserve(b.size());
  for (uint64_t v : b) {
    uint64_t d = ref::cast(dtype(), DType::Float64, v, Round::NearestEven);
    double f;
    std::memcpy(&f, &d, 8);
    out.push_back(f);
  }
  return out;
}

double Tensor::item() const {
  if (numel() != 1)
    throw ShapeError("[item] must have one element, not shape " + shape_str(shape()));
  return tolist()[0];
}

}  // namespace maroon
