// TinyJit (maroon/jit.h): capture one call's schedules, plans and assigns; replay them.
#include "maroon/jit.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "core/fpenv.h"
#include "core/graph.h"
#include "core/jit_hooks.h"
#include "cpu/cpu.h"
#include "maroon/backend.h"
#include "ref/executor.h"

namespace maroon {

namespace {

thread_local JitCaptureImpl* g_capturing = nullptr;

// The realized leaves live captures read (parameters, the learning rate, ...) that are not their
// inputs or the states they assign: an assign to one of them outside a step writes its new value
// into the leaf's buffer (tinygrad's assign, in place), so the next replay reads it.
struct ReadLeaves {
  std::mutex mu;
  std::unordered_map<const Node*, std::vector<JitCaptureImpl*>> readers;
  std::atomic<size_t> size{0};
};
ReadLeaves& read_leaves() {
  static ReadLeaves r;
  return r;
}

std::string describe(const Tensor& t) {
  return shape_str(t.shape()) + " " + std::string(dtype_name(t.dtype()));
}

}  // namespace

// One realize() of the captured call: its root keeps the graph alive, and `buffers` holds the
// buffer object each materialized node had, which replays keep (nodes outside, such as an
// assign's leaf, share those objects).
struct Recorded {
  NodePtr root;
  std::vector<Node*> order;
  cpu::Plan plan;  // empty for the reference backend, which runs each node
  std::vector<std::shared_ptr<Buffer>> buffers;  // per order entry; null where not materialized
};

// A state tensor the call assigned: `before` is the node it had when first assigned (the graph
// reads it), `after` the node it was left with (a leaf on a buffer the call computed).
struct StateChange {
  std::shared_ptr<TensorState> state;
  NodePtr before, after;
};

struct JitCaptureImpl : RealizeCapture {
  std::vector<NodePtr> inputs;
  std::vector<Recorded> realizes;
  std::vector<StateChange> states;
  std::unordered_map<const TensorState*, size_t> state_index;
  Backend backend = Backend::Cpu;
  bool done = false;
  std::vector<const Node*> leaves;  // registered in read_leaves()
  std::string stale;                // why a replay can no longer run, if it cannot

  ~JitCaptureImpl() override;
  void register_leaves();

  void run(const NodePtr& root, const std::vector<Node*>& order) override {
    Recorded r;
    r.order = order;
    if (backend == Backend::Cpu) {
      r.plan = cpu::plan(order);
      cpu::execute(r.plan);
    } else {
      for (Node* n : order) {
        ref::execute(*n);
        n->realized = true;
      }
    }
    for (Node* n : order) r.buffers.push_back(n->realized ? n->buffer : nullptr);
    r.root = root;
    realizes.push_back(std::move(r));
  }

  void note_assign(const std::shared_ptr<TensorState>& st) {
    if (state_index.count(st.get())) return;
    state_index[st.get()] = states.size();
    states.push_back({st, st->node, nullptr});
  }

  void validate_states();
  void feed_inputs(const std::vector<Tensor>& in);
  void feed_states();
  void run_recorded(Recorded& r);
};

namespace {

bool is_view(const Node& n) { return op_info(n.op).kind == OpKind::Movement; }

// The buffers the captured call's kernels wrote (a movement node's is its source's).
std::unordered_set<const Buffer*> written(const std::vector<Recorded>& rs) {
  std::unordered_set<const Buffer*> out;
  for (const Recorded& r : rs)
    for (size_t i = 0; i < r.order.size(); ++i)
      if (r.buffers[i] && !is_view(*r.order[i])) out.insert(r.buffers[i].get());
  return out;
}

bool plain(const Node& n) {
  return n.realized && n.buffer && n.view.is_contiguous() && n.buffer->count == numel(n.shape);
}

}  // namespace

// A replay feeds each state's current value into the buffer its `before` node reads and leaves
// the state on `after`, whose buffer the replay rewrites: both must be whole buffers of their
// own, `after`'s written by the call and `before`'s only read by it.
void JitCaptureImpl::validate_states() {
  std::unordered_set<const Buffer*> w = written(realizes), seen;
  for (const NodePtr& i : inputs) seen.insert(i->buffer.get());
  for (StateChange& s : states) {
    s.after = s.state->node;
    std::string what = "[TinyJit] cannot capture the assign to a tensor of " + shape_str(s.after->shape) + " " +
                       std::string(dtype_name(s.after->dtype)) + ": ";
    if (!plain(*s.before) || !plain(*s.after))
      throw Error(what + "its value before or after the step is a view, not a whole buffer");
    if (!w.count(s.after->buffer.get()))
      throw Error(what + "it was assigned a tensor the step did not compute (an input or an earlier value)");
    if (w.count(s.before->buffer.get()))
      throw Error(what + "the step overwrote its value before assigning it");
    if (!seen.insert(s.before->buffer.get()).second || !seen.insert(s.after->buffer.get()).second)
      throw Error(what + "it shares a buffer with an input or another assigned tensor");
  }
}

void JitCaptureImpl::feed_inputs(const std::vector<Tensor>& in) {
  if (in.size() != inputs.size())
    throw Error("[TinyJit] called with " + std::to_string(in.size()) + " input tensors, the captured call had " +
                std::to_string(inputs.size()));
  for (size_t i = 0; i < in.size(); ++i) {
    const Node& cap = *inputs[i];
    if (in[i].shape() != cap.shape || in[i].dtype() != cap.dtype)
      throw Error("[TinyJit] input " + std::to_string(i) + " is " + describe(in[i]) + ", the captured call's was " +
                  shape_str(cap.shape) + " " + std::string(dtype_name(cap.dtype)) +
                  ": a capture replays fixed shapes and dtypes (reset() it, or use another TinyJit)");
  }
  for (size_t i = 0; i < in.size(); ++i) {
    maroon::realize(in[i].node());
    inputs[i]->buffer = in[i].node()->buffer;
    inputs[i]->view = in[i].node()->view;
  }
}

// The state's current value goes where the graph reads it: the `after` buffer holds it when
// nothing reassigned the state since the last call (an exchange, no copy), else it is copied.
void JitCaptureImpl::feed_states() {
  for (StateChange& s : states) {
    NodePtr cur = s.state->node;
    if (cur == s.after) {
      s.before->buffer->swap_memory(*s.after->buffer);
      continue;
    }
    if (cur->shape != s.before->shape || cur->dtype != s.before->dtype)
      throw Error("[TinyJit] a tensor the step assigns was reassigned outside it to a value of " +
                  shape_str(cur->shape) + " " + std::string(dtype_name(cur->dtype)) + ", not the captured " +
                  shape_str(s.before->shape) + " " + std::string(dtype_name(s.before->dtype)));
    std::vector<uint8_t> b = Tensor(cur).bytes();  // any view, row-major
    std::memcpy(s.before->buffer->bytes(), b.data(), b.size());
  }
}

// Runs one recorded schedule again: every node starts unrealized as it was then, the plan runs,
// and each output's fresh memory moves into the buffer object the capture gave it (an exchange).
// A view's node reads its source's buffer object, which has moved already (or is an input's).
void JitCaptureImpl::run_recorded(Recorded& r) {
  for (Node* n : r.order) n->realized = false;
  if (backend == Backend::Cpu) {
    cpu::execute(r.plan);
  } else {
    for (Node* n : r.order) {
      ref::execute(*n);
      n->realized = true;
    }
  }
  std::unordered_set<const Buffer*> moved;
  for (size_t i = 0; i < r.order.size(); ++i) {
    Node& n = *r.order[i];
    const std::shared_ptr<Buffer>& keep = r.buffers[i];
    if (n.realized && is_view(n)) {
      n.buffer = n.src[0]->buffer;
      continue;
    }
    if (!keep || n.buffer == keep) continue;
    if (moved.insert(keep.get()).second) keep->swap_memory(*n.buffer);
    n.buffer = keep;
  }
}

// Every realized node a recorded schedule reads that no recorded schedule computes, less the
// inputs and the assigned states' first values (a replay feeds those itself).
void JitCaptureImpl::register_leaves() {
  std::unordered_set<const Node*> computed, own;
  for (const Recorded& r : realizes) computed.insert(r.order.begin(), r.order.end());
  for (const NodePtr& i : inputs) own.insert(i.get());
  for (const StateChange& s : states) own.insert(s.before.get());
  std::unordered_set<const Node*> seen;
  for (const Recorded& r : realizes)
    for (const Node* n : r.order)
      for (const NodePtr& src : n->src)
        if (!computed.count(src.get()) && !own.count(src.get()) && seen.insert(src.get()).second)
          leaves.push_back(src.get());
  ReadLeaves& rl = read_leaves();
  std::lock_guard lock(rl.mu);
  for (const Node* l : leaves) rl.readers[l].push_back(this);
  rl.size = rl.readers.size();
}

JitCaptureImpl::~JitCaptureImpl() {
  ReadLeaves& rl = read_leaves();
  std::lock_guard lock(rl.mu);
  for (const Node* l : leaves) {
    auto it = rl.readers.find(l);
    if (it == rl.readers.end()) continue;
    std::erase(it->second, this);
    if (it->second.empty()) rl.readers.erase(it);
  }
  rl.size = rl.readers.size();
}

JitCapture::JitCapture() : impl_(std::make_unique<JitCaptureImpl>()) {}
JitCapture::~JitCapture() = default;
bool JitCapture::captured() const { return impl_->done; }
size_t JitCapture::schedules() const { return impl_->realizes.size(); }
size_t JitCapture::kernels() const {
  size_t k = 0;
  for (const Recorded& r : impl_->realizes)
    for (size_t i = 0; i < r.order.size(); ++i) k += r.buffers[i] && !is_view(*r.order[i]);
  return k;
}

namespace {

void check_can_run(const char* what) {
  if (g_capturing) throw Error(std::string("[TinyJit] cannot ") + what + " inside another capture");
  if (realize_observer())
    throw Error(std::string("[TinyJit] cannot ") + what + " while realizations are observed (a trace is recording)");
}

// Installs the capture for one call and removes it however the call ends.
struct CaptureScope {
  RealizeCapture* prev;
  explicit CaptureScope(JitCaptureImpl* c) : prev(set_realize_capture(c)) { g_capturing = c; }
  ~CaptureScope() {
    set_realize_capture(prev);
    g_capturing = nullptr;
  }
};

}  // namespace

std::vector<Tensor> JitCapture::capture(const std::vector<Tensor>& inputs,
                                        const std::function<std::vector<Tensor>()>& body) {
  if (impl_->done) throw Error("[TinyJit] this capture already holds a step");
  check_can_run("capture");
  impl_->backend = backend();
  for (const Tensor& t : inputs) {
    maroon::realize(t.node());
    impl_->inputs.push_back(t.node());
  }
  std::vector<Tensor> out;
  {
    CaptureScope scope(impl_.get());
    out = body();
    for (Tensor& t : out) t.realize();
  }
  impl_->validate_states();
  impl_->register_leaves();
  impl_->done = true;
  return out;
}

void JitCapture::replay(const std::vector<Tensor>& inputs) {
  if (!impl_->done) throw Error("[TinyJit] replay before a capture");
  if (!impl_->stale.empty()) throw Error("[TinyJit] cannot replay: " + impl_->stale);
  check_can_run("replay a step");
  if (backend() != impl_->backend)
    throw Error("[TinyJit] the step was captured on the " + std::string(impl_->backend == Backend::Cpu ? "cpu" : "ref") +
                " backend and cannot replay on " + backend_name());
  impl_->feed_inputs(inputs);
  FpEnvGuard env;
  impl_->feed_states();
  for (Recorded& r : impl_->realizes) impl_->run_recorded(r);
  for (StateChange& s : impl_->states) s.state->node = s.after;
}

bool jit_capturing() { return g_capturing != nullptr; }

void jit_note_assign(const std::shared_ptr<TensorState>& st) {
  if (g_capturing) g_capturing->note_assign(st);
}

bool jit_assign_in_place(const std::shared_ptr<TensorState>& st, const Tensor& x) {
  ReadLeaves& rl = read_leaves();
  if (rl.size == 0 || g_capturing) return false;
  std::unique_lock lock(rl.mu);
  auto it = rl.readers.find(st->node.get());
  if (it == rl.readers.end()) return false;
  Node& leaf = *st->node;
  if (!plain(leaf)) {
    for (JitCaptureImpl* j : it->second)
      j->stale = "a tensor of " + shape_str(leaf.shape) + " the step reads (a view, not a whole buffer) was reassigned";
    return false;
  }
  lock.unlock();
  std::vector<uint8_t> b = x.bytes();
  std::memcpy(leaf.buffer->bytes(), b.data(), b.size());
  return true;
}

void jit_refuse(const char* what) {
  if (g_capturing)
    throw Error(std::string("[TinyJit] cannot capture ") + what +
                " inside the step: a replay would repeat the captured values (draw them outside and pass them in)");
}

// ---- TinyJit ----

TinyJit::TinyJit(Fn fn) : fn_(std::move(fn)), jit_(std::make_unique<JitCapture>()) {
  if (!fn_) throw Error("[TinyJit] no function given");
}

std::vector<Tensor> TinyJit::operator()(const std::vector<Tensor>& inputs) {
  ++calls_;
  if (calls_ == 1) {
    std::vector<Tensor> out = fn_(inputs);
    for (Tensor& t : out) t.realize();
    return out;
  }
  if (calls_ == 2) {
    try {
      outputs_ = jit_->capture(inputs, [&] { return fn_(inputs); });
    } catch (...) {
      reset();
      throw;
    }
    return outputs_;
  }
  jit_->replay(inputs);
  return outputs_;
}

void TinyJit::reset() {
  calls_ = 0;
  jit_ = std::make_unique<JitCapture>();
  outputs_.clear();
}

}  // namespace maroon
