// Tensor state, backward() and the graph-only markers (detach, contiguous, assign).
#include <atomic>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "core/gradient.h"
#include "core/graph.h"
#include "core/jit_hooks.h"
#include "maroon/tensor.h"
#include "ref/scalar.h"
#include "maroon/primitives.h"

namespace maroon {

namespace {

// Every live TensorState in creation order, so backward() can fill .grad for each float tensor
// of the graph the way tinygrad walks its `all_tensors` weak set. An intrusive list: a state
// links itself in when built and out when destroyed, so its memory is freed at once. (A list of
// weak_ptrs pruned as it grew kept every dead state's block until the next prune: the small op
// from Python made each new state a cold allocation instead of the block just freed.)
// Its lock is a spin lock: taken twice per tensor (built, destroyed) for a few pointer writes, where
// a pthread mutex's lock and unlock calls were ~2% of a 64x64 product from Python.
class SpinLock {
 public:
  void lock() {
    while (flag_.test_and_set(std::memory_order_acquire)) std::this_thread::yield();
  }
  void unlock() { flag_.clear(std::memory_order_release); }

 private:
  std::atomic_flag flag_ = ATOMIC_FLAG_INIT;
};

struct Registry {
  SpinLock mu;
  TensorState* head = nullptr;
  TensorState* tail = nullptr;

  void link(TensorState* s) {
    std::lock_guard<SpinLock> lock(mu);
    s->live_prev = tail;
    (tail ? tail->live_next : head) = s;
    tail = s;
  }
  void unlink(TensorState* s) {
    std::lock_guard<SpinLock> lock(mu);
    (s->live_prev ? s->live_prev->live_next : head) = s->live_next;
    (s->live_next ? s->live_next->live_prev : tail) = s->live_prev;
  }
  // A state whose last handle is going (its destructor waits on the lock) locks to null: left out.
  std::vector<std::shared_ptr<TensorState>> live() {
    std::lock_guard<SpinLock> lock(mu);
    std::vector<std::shared_ptr<TensorState>> out;
    for (TensorState* s = head; s; s = s->live_next)
      if (auto p = s->weak_from_this().lock()) out.push_back(std::move(p));
    return out;
  }
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: tensors may outlive static teardown
  return *r;
}

}  // namespace

TensorState::TensorState() { registry().link(this); }
// Unlinked before the members go: dropping `node` or `grad` may destroy other states, which
// take the lock themselves.
TensorState::~TensorState() { registry().unlink(this); }

std::vector<std::shared_ptr<TensorState>> live_tensor_states() { return registry().live(); }

Tensor::Tensor(std::shared_ptr<Node> node) : st_(std::make_shared<TensorState>()) { st_->node = std::move(node); }

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
