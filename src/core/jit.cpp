// TinyJit (maroon/jit.h): capture one call's schedules, plans and assigns; replay them.
#include "maroon/jit.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "core/checked.h"
#include "core/fpenv.h"
#include "core/graph.h"
#include "core/jit_hooks.h"
#include "core/jit_lifetimes.h"
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

// One realize() of the captured call. After the capture, `root` and `order` are the capture's
// private copy of the nodes (see privatize()) and `plan` names them.
struct Recorded {
  NodePtr root;
  std::vector<Node*> order;
  cpu::Plan plan;  // empty for the reference backend, which runs each node
  size_t kernels = 0;  // materialized nodes that are not views
};

// A state tensor the call assigned: `before` is the node it had when first assigned (the graph
// reads it, through the private copy `read`), `after` the node it was left with (a leaf on the
// buffer of the computed node whose copy is `from`, through `view`). `given` is the leaf the last
// call left the state on.
struct StateChange {
  std::shared_ptr<TensorState> state;
  NodePtr before, after;
  Node* read = nullptr;
  Node* from = nullptr;
  ShapeTracker view;
  NodePtr given;
};

// A live tensor left on a node the step computed (a parameter's .grad): each replay moves it
// to a leaf on the new value, as long as nobody moved it elsewhere since.
struct Follower {
  std::weak_ptr<TensorState> state;
  Node* from;
  NodePtr given;
};

// Where a replay finds one of the step's outputs: a node of the private copy (seen through its
// own view, or through `view`), or, for an output the step did not compute or read, the node.
struct Output {
  Node* from = nullptr;
  bool own_view = true;
  ShapeTracker view;
  NodePtr fixed;
};

// How this works without changing anything anybody else holds: after the capture the recorded
// graph is copied into nodes only the capture can see, each node the step read but did not
// compute (an input, a state's first value, a parameter) becoming a private leaf. A replay points
// those leaves at the new inputs' and states' buffers and runs the plans on the copy: every
// kernel writes a buffer it has just allocated, and no buffer or node that existed before the
// replay is written or rebound. A handle to an earlier step's tensor (verify::Run's commitments,
// an output the caller kept, the input tensors) keeps its bytes.
struct JitCaptureImpl : RealizeCapture {
  std::vector<NodePtr> inputs;     // the captured call's inputs
  std::vector<Node*> input_reads;  // their private copies
  std::vector<Recorded> realizes;
  std::vector<StateChange> states;
  std::unordered_map<const TensorState*, size_t> state_index;
  std::vector<Follower> followers;
  std::vector<Output> outputs;
  std::vector<NodePtr> owned;  // the private nodes that are not in a recorded order's root graph
  // The leaves the step reads that are not inputs or states, with their private copies: an
  // assign to a tensor on one of them (outside a step) repoints the copy (jit_assign_in_place).
  std::vector<std::pair<NodePtr, Node*>> leaves;
  // Leaves the step made itself over a buffer it computed or was given (a state's new value,
  // which realized_leaf() wraps and later schedules read), each with the private node that holds
  // that buffer on a replay: refresh_aliases() points the leaf at it.
  std::vector<std::pair<Node*, Node*>> aliases;
  std::vector<Node*> droppable;  // the recorded nodes that do not hold an alias's buffer
  Backend backend = Backend::Cpu;
  bool done = false;
  // While capturing: the buffers whose values depend on the captured call's inputs (theirs, and
  // what the recorded schedules computed from them), and the host reads of such values
  // (JitCapture::host_reads_of_inputs). The capture holds every buffer it records until it ends,
  // so no address here is reused meanwhile.
  std::unordered_set<const Buffer*> from_inputs;
  size_t input_reads_on_host = 0;
  std::string first_input_read;

  ~JitCaptureImpl() override;

  void run(const NodePtr& root, const std::vector<Node*>& order) override {
    std::vector<Node*> derived = from_inputs_in(order);
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
    r.root = root;
    realizes.push_back(std::move(r));
    for (Node* n : derived)
      if (n->buffer) from_inputs.insert(n->buffer.get());
  }

  // The nodes of `order` (topological) that read, directly or through each other, a buffer
  // computed from the inputs.
  std::vector<Node*> from_inputs_in(const std::vector<Node*>& order) const {
    std::unordered_set<const Node*> marked;
    std::vector<Node*> out;
    auto derived = [&](const Node* s) { return marked.count(s) || (s->buffer && from_inputs.count(s->buffer.get())); };
    for (Node* n : order)
      if (std::any_of(n->src.begin(), n->src.end(), [&](const NodePtr& s) { return derived(s.get()); })) {
        marked.insert(n);
        out.push_back(n);
      }
    return out;
  }

  void note_host_read(const Node& n) {
    if (!n.buffer || !from_inputs.count(n.buffer.get())) return;
    if (input_reads_on_host++ == 0) first_input_read = shape_str(n.shape) + " " + std::string(dtype_name(n.dtype));
  }

  void note_assign(const std::shared_ptr<TensorState>& st) {
    if (state_index.count(st.get())) return;
    state_index[st.get()] = states.size();
    StateChange s;
    s.state = st;
    s.before = st->node;
    states.push_back(std::move(s));
  }

  void validate_states();
  void privatize(const std::vector<Tensor>& out);
  void follow(const std::vector<Tensor>& out, const std::unordered_map<const Node*, NodePtr>& copy,
              const std::unordered_set<const Node*>& computed);
  void register_leaves();
  void rebind_leaf(const Node* old, const NodePtr& now);
  void feed_inputs(const std::vector<Tensor>& in);
  void feed_states();
  void run_recorded(Recorded& r);
  void plan_buffers();
  void release_between_calls();
  std::unordered_set<const Node*> alias_holders() const {
    std::unordered_set<const Node*> h;
    for (const auto& a : aliases) h.insert(a.second);
    return h;
  }
  void refresh_aliases() {
    for (auto& [leaf, holder] : aliases) leaf->buffer = holder->buffer;
  }
  std::vector<Tensor> leave_states_and_outputs();
};

namespace {

bool is_view(const Node& n) { return op_info(n.op).kind == OpKind::Movement; }

// The buffers the captured call's kernels wrote (a movement node's is its source's).
std::unordered_set<const Buffer*> written(const std::vector<Recorded>& rs) {
  std::unordered_set<const Buffer*> out;
  for (const Recorded& r : rs)
    for (Node* n : r.order)
      if (n->realized && n->buffer && !is_view(*n)) out.insert(n->buffer.get());
  return out;
}

bool plain(const Node& n) {
  return n.realized && n.buffer && n.view.is_contiguous() && n.buffer->count == numel(n.shape);
}

// A realized leaf that reads `buffer` through `view`: what a state or an output is left on.
NodePtr leaf_on(const Node& like, std::shared_ptr<Buffer> buffer, const ShapeTracker& view) {
  auto n = make_node(Op::BUFFER, like.dtype, like.shape, {});
  n->buffer = std::move(buffer);
  n->view = view;
  n->realized = true;
  return n;
}

// Points a private leaf at `value`'s elements: its buffer when it is a whole one (no copy),
// else a contiguous copy, so the leaf reads the way the captured one did.
void bind(Node& leaf, const NodePtr& value) {
  if (plain(*value)) {
    leaf.buffer = value->buffer;
    leaf.view = value->view;
    return;
  }
  std::vector<uint8_t> b = Tensor(value).bytes();  // any view, row-major
  auto buf = std::make_shared<Buffer>(leaf.dtype, numel(leaf.shape));
  std::memcpy(buf->bytes(), b.data(), b.size());
  leaf.buffer = std::move(buf);
  leaf.view = ShapeTracker::contiguous(leaf.shape);
}

}  // namespace

// A replay feeds each state's current value to the copy of its `before` node and leaves the
// state on a leaf over the copy of the node it was assigned: `after` must be a whole buffer the
// call wrote and `before` one it only read.
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

// Copies the recorded graph into private nodes (see JitCaptureImpl) and points the plans at them.
// The original roots stay alive until the end, so no node address in `copy` is reused meanwhile.
void JitCaptureImpl::privatize(const std::vector<Tensor>& out) {
  std::unordered_map<const Node*, NodePtr> copy;
  std::unordered_set<const Node*> computed;
  std::unordered_map<const Buffer*, const Node*> holder;  // the node each buffer the step reads is from
  for (const NodePtr& i : inputs)
    if (plain(*i)) holder.emplace(i->buffer.get(), i.get());
  for (const StateChange& s : states) holder.emplace(s.before->buffer.get(), s.before.get());
  for (const Recorded& r : realizes)
    for (const Node* n : r.order)
      if (n->realized && n->buffer && !is_view(*n)) holder.emplace(n->buffer.get(), n);
  std::vector<std::pair<NodePtr, const Node*>> alias;  // a private leaf and its buffer's node
  std::vector<std::pair<NodePtr, Node*>> read;  // the other leaves, in the order first read
  std::vector<NodePtr> originals;
  auto leaf = [&](const NodePtr& n) {
    NodePtr& c = copy[n.get()];
    if (!c) {
      if (!n->realized) throw Error("[TinyJit] internal: the step reads a node it neither computed nor realized");
      c = leaf_on(*n, n->buffer, n->view);
      owned.push_back(c);
      auto h = holder.find(n->buffer.get());
      if (h != holder.end() && h->second != n.get()) alias.push_back({c, h->second});
      else read.push_back({n, c.get()});
    }
    return c;
  };
  for (const NodePtr& i : inputs) input_reads.push_back(leaf(i).get());
  for (StateChange& s : states) s.read = leaf(s.before).get();
  size_t own = read.size();
  for (Recorded& r : realizes) {
    std::unordered_map<const Node*, Node*> to;
    for (Node*& n : r.order) {
      if (computed.insert(n).second) {
        auto c = std::make_shared<Node>();
        c->op = n->op, c->dtype = n->dtype, c->shape = n->shape, c->rnd = n->rnd, c->arg = n->arg;
        for (const NodePtr& s : n->src) c->src.push_back(computed.count(s.get()) ? copy.at(s.get()) : leaf(s));
        c->realized = n->realized, c->buffer = n->buffer, c->view = n->view;
        r.kernels += n->realized && n->buffer && !is_view(*n);
        copy[n] = c;
        owned.push_back(c);
      }
      to[n] = copy.at(n).get();
      n = to[n];
    }
    if (backend == Backend::Cpu) {
      r.plan.remap(to);
      r.plan.keep_between_runs();  // nobody but the replays touches the private copy
    }
    originals.push_back(r.root);
    r.root = copy.at(r.root.get());
  }
  for (auto& [c, h] : alias) aliases.push_back({c.get(), copy.at(h).get()});
  leaves.assign(read.begin() + static_cast<std::ptrdiff_t>(own), read.end());
  follow(out, copy, computed);
}

// The outputs, the assigned states and the live tensors the step left on its nodes, in terms
// of the private copy.
void JitCaptureImpl::follow(const std::vector<Tensor>& out, const std::unordered_map<const Node*, NodePtr>& copy,
                            const std::unordered_set<const Node*>& computed) {
  std::unordered_map<const Buffer*, Node*> by_buffer;  // a computed node's copy by its buffer
  for (const Recorded& r : realizes)
    for (Node* c : r.order)
      if (c->realized && c->buffer && !is_view(*c)) by_buffer[c->buffer.get()] = c;
  std::unordered_map<const Node*, const StateChange*> after;
  for (StateChange& s : states) {
    s.from = by_buffer.at(s.after->buffer.get());  // validate_states() made sure it is there
    s.view = s.after->view;
    s.given = s.after;
    after[s.after.get()] = &s;
  }
  std::unordered_set<const TensorState*> returned;
  for (const Tensor& t : out) {
    returned.insert(t.state().get());
    Output o;
    auto c = copy.find(t.node().get());
    auto a = after.find(t.node().get());
    if (c != copy.end()) o.from = c->second.get();
    else if (a != after.end()) o.from = a->second->from, o.own_view = false, o.view = a->second->view;
    else o.fixed = t.node();
    outputs.push_back(o);
  }
  for (const std::shared_ptr<TensorState>& st : live_tensor_states()) {
    if (returned.count(st.get()) || state_index.count(st.get()) || !st->node || !st->node->realized) continue;
    if (computed.count(st->node.get())) followers.push_back({st, copy.at(st->node.get()).get(), st->node});
  }
}

// Plans when a replay drops each buffer the step computes (core/jit_lifetimes.h). What the
// replay hands out keeps its buffer to the end of the call, and what the step's leaves alias for
// good (refresh_aliases() reads the holder after each schedule).
void JitCaptureImpl::plan_buffers() {
  if (backend != Backend::Cpu) return;
  std::unordered_set<const Node*> keep = alias_holders();
  for (const StateChange& s : states) keep.insert(s.from);
  for (const Follower& f : followers) keep.insert(f.from);
  for (const Output& o : outputs) keep.insert(o.from);
  std::vector<jit::PlannedRun> runs;
  for (Recorded& r : realizes) runs.push_back({&r.order, &r.plan});
  jit::plan_releases(runs, keep);
}

// Lets go of what the last call read, its inputs and the states' values before it (the next
// call binds new ones), of what it handed out (the leaves it left hold those buffers), and,
// after the capture, of the recorded graph's own nodes for the inputs and states. Held, they
// were one more copy of every state and output between calls, and the capture's pinned for
// good. What the step's leaves alias stays: refresh_aliases() reads it.
void JitCaptureImpl::release_between_calls() {
  for (Node* n : input_reads) n->buffer.reset();
  for (StateChange& s : states) {
    s.read->buffer.reset();
    s.before.reset();
    s.after.reset();
  }
  inputs.clear();
  if (droppable.empty()) {  // the same nodes after every call: listed once
    std::unordered_set<const Node*> held = alias_holders();
    for (Recorded& r : realizes)
      for (Node* n : r.order)
        if (!held.count(n)) droppable.push_back(n);
  }
  for (Node* n : droppable) n->buffer.reset();
}

// Registers the leaves the step reads (parameters, the learning rate) so that an assign to a
// tensor on one of them outside a step repoints the private copy (jit_assign_in_place).
void JitCaptureImpl::register_leaves() {
  ReadLeaves& rl = read_leaves();
  std::lock_guard lock(rl.mu);
  for (const auto& l : leaves) rl.readers[l.first.get()].push_back(this);
  rl.size = rl.readers.size();
}

// Called with read_leaves().mu held: a tensor on the leaf `old` was assigned `now`.
void JitCaptureImpl::rebind_leaf(const Node* old, const NodePtr& now) {
  ReadLeaves& rl = read_leaves();
  for (auto& l : leaves) {
    if (l.first.get() != old) continue;
    bind(*l.second, now);
    l.first = now;
    rl.readers[now.get()].push_back(this);
  }
  auto it = rl.readers.find(old);
  if (it != rl.readers.end()) {
    std::erase(it->second, this);
    if (it->second.empty()) rl.readers.erase(it);
  }
  rl.size = rl.readers.size();
}

JitCaptureImpl::~JitCaptureImpl() {
  ReadLeaves& rl = read_leaves();
  std::lock_guard lock(rl.mu);
  for (const auto& l : leaves) {
    auto it = rl.readers.find(l.first.get());
    if (it == rl.readers.end()) continue;
    std::erase(it->second, this);
    if (it->second.empty()) rl.readers.erase(it);
  }
  rl.size = rl.readers.size();
}

void JitCaptureImpl::feed_inputs(const std::vector<Tensor>& in) {
  if (in.size() != input_reads.size())
    throw Error("[TinyJit] called with " + std::to_string(in.size()) + " input tensors, the captured call had " +
                std::to_string(input_reads.size()));
  for (size_t i = 0; i < in.size(); ++i) {
    const Node& cap = *input_reads[i];
    if (in[i].shape() != cap.shape || in[i].dtype() != cap.dtype)
      throw Error("[TinyJit] input " + std::to_string(i) + " is " + describe(in[i]) + ", the captured call's was " +
                  shape_str(cap.shape) + " " + std::string(dtype_name(cap.dtype)) +
                  ": a capture replays fixed shapes and dtypes (reset() it, or use another TinyJit)");
  }
  for (size_t i = 0; i < in.size(); ++i) {
    maroon::realize(in[i].node());
    input_reads[i]->buffer = in[i].node()->buffer;
    input_reads[i]->view = in[i].node()->view;
  }
}

// Each state's current value is what the graph reads: the leaf the last call left it on (no
// copy), or whatever the caller assigned it since.
void JitCaptureImpl::feed_states() {
  for (StateChange& s : states) {
    const NodePtr& cur = s.state->node;
    if (cur->shape != s.read->shape || cur->dtype != s.read->dtype)
      throw Error("[TinyJit] a tensor the step assigns was reassigned outside it to a value of " +
                  shape_str(cur->shape) + " " + std::string(dtype_name(cur->dtype)) + ", not the captured " +
                  shape_str(s.read->shape) + " " + std::string(dtype_name(s.read->dtype)));
    maroon::realize(cur);
    bind(*s.read, cur);
  }
}

// Runs one recorded schedule again on the private copy: every node starts unrealized and
// without a buffer, so each kernel writes memory it has just allocated.
void JitCaptureImpl::run_recorded(Recorded& r) {
  for (Node* n : r.order) {
    n->realized = false;
    n->buffer.reset();
  }
  if (backend == Backend::Cpu) {
    cpu::execute(r.plan);
  } else {
    for (Node* n : r.order) {
      ref::execute(*n);
      n->realized = true;
    }
  }
  refresh_aliases();
}

// Leaves each assigned state and each followed tensor on a new leaf over this call's value, and
// returns the outputs as new tensors: what earlier calls returned or left keeps its bytes.
std::vector<Tensor> JitCaptureImpl::leave_states_and_outputs() {
  for (StateChange& s : states) {
    s.given = leaf_on(*s.from, s.from->buffer, s.view);
    s.state->node = s.given;
  }
  std::erase_if(followers, [](Follower& f) {
    std::shared_ptr<TensorState> st = f.state.lock();
    if (!st || st->node != f.given || !f.from->realized) return true;  // gone, or moved by its owner
    f.given = leaf_on(*f.from, f.from->buffer, f.from->view);
    st->node = f.given;
    return false;
  });
  std::vector<Tensor> out;
  for (const Output& o : outputs) {
    if (o.fixed) out.emplace_back(o.fixed);
    else out.emplace_back(leaf_on(*o.from, o.from->buffer, o.own_view ? o.from->view : o.view));
  }
  return out;
}

JitCapture::JitCapture() : impl_(std::make_unique<JitCaptureImpl>()) {}
JitCapture::~JitCapture() = default;
bool JitCapture::captured() const { return impl_->done; }
size_t JitCapture::schedules() const { return impl_->realizes.size(); }
size_t JitCapture::held_bytes() const {
  std::unordered_set<const Buffer*> seen;
  size_t n = 0;
  for (const Recorded& r : impl_->realizes)
    for (const Node* c : r.order)
      if (c->buffer && seen.insert(c->buffer.get()).second) n += c->buffer->nbytes();
  return n;
}
size_t JitCapture::host_reads_of_inputs() const { return impl_->input_reads_on_host; }
const std::string& JitCapture::first_host_read_of_inputs() const { return impl_->first_input_read; }
size_t JitCapture::kernels() const {
  size_t k = 0;
  for (const Recorded& r : impl_->realizes) k += r.kernels;
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
  // Two inputs on one buffer would be one leaf of the captured graph (or one an alias of the
  // other): a replay given two tensors would read the first's values for both (tinygrad refuses
  // "duplicate inputs to JIT" too).
  if (auto pair = inputs_sharing_a_buffer(inputs))
    throw Error("[TinyJit] inputs " + std::to_string(pair->first) + " and " + std::to_string(pair->second) +
                " share one buffer in the capturing call: a replay would read them as one (pass a copy)");
  for (const Tensor& t : inputs) {
    impl_->inputs.push_back(t.node());
    if (t.node()->buffer) impl_->from_inputs.insert(t.node()->buffer.get());
  }
  std::vector<Tensor> out;
  {
    CaptureScope scope(impl_.get());
    out = body();
    for (Tensor& t : out) t.realize();
  }
  impl_->from_inputs.clear();
  impl_->validate_states();
  impl_->privatize(out);
  impl_->plan_buffers();
  impl_->register_leaves();
  impl_->done = true;
  // The states, the followed tensors (a parameter's .grad) and the outputs move to leaves over
  // the same buffers, as after a replay: left on the recorded graph, they would keep every
  // buffer of the capture alive through the first replay, which then could not reuse them.
  std::vector<Tensor> left = impl_->leave_states_and_outputs();
  impl_->release_between_calls();
  return left;
}

std::vector<Tensor> JitCapture::replay(const std::vector<Tensor>& inputs) {
  if (!impl_->done) throw Error("[TinyJit] replay before a capture");
  check_can_run("replay a step");
  if (backend() != impl_->backend)
    throw Error("[TinyJit] the step was captured on the " + std::string(impl_->backend == Backend::Cpu ? "cpu" : "ref") +
                " backend and cannot replay on " + backend_name());
  impl_->feed_inputs(inputs);
  FpEnvGuard env;
  // The allocation cap read once for the replay, as realize() reads it once per graph: read at
  // each buffer, its setting's lookup (an environment read) was 1.6% of a 32x32 product's replay.
  AllocCapScope cap;
  impl_->feed_states();
  impl_->refresh_aliases();
  for (Recorded& r : impl_->realizes) impl_->run_recorded(r);
  std::vector<Tensor> out = impl_->leave_states_and_outputs();
  impl_->release_between_calls();
  return out;
}

std::optional<std::pair<size_t, size_t>> inputs_sharing_a_buffer(const std::vector<Tensor>& inputs) {
  for (const Tensor& t : inputs) maroon::realize(t.node());
  for (size_t i = 0; i < inputs.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (inputs[i].node()->buffer && inputs[i].node()->buffer == inputs[j].node()->buffer) return std::pair{j, i};
  return std::nullopt;
}

bool jit_capturing() { return g_capturing != nullptr; }
bool jit_can_capture() { return !g_capturing && !realize_observer(); }

void jit_note_host_read(const Node& n) {
  if (g_capturing) g_capturing->note_host_read(n);
}

void jit_note_assign(const std::shared_ptr<TensorState>& st) {
  if (g_capturing) g_capturing->note_assign(st);
}

// An assign outside a step to a tensor a capture reads as a leaf: the capture's copy of the leaf
// reads the new value from the next replay on (the assign itself is the usual one).
bool jit_assign_in_place(const std::shared_ptr<TensorState>& st, const Tensor& x) {
  ReadLeaves& rl = read_leaves();
  if (rl.size == 0 || g_capturing) return false;
  {
    std::lock_guard lock(rl.mu);
    if (!rl.readers.count(st->node.get())) return false;
  }
  NodePtr now = x.realized_leaf().node();
  std::lock_guard lock(rl.mu);
  auto it = rl.readers.find(st->node.get());
  if (it != rl.readers.end()) {
    std::vector<JitCaptureImpl*> readers = it->second;
    for (JitCaptureImpl* j : readers) j->rebind_leaf(st->node.get(), now);
  }
  st->node = now;
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
      return jit_->capture(inputs, [&] { return fn_(inputs); });
    } catch (...) {
      reset();
      throw;
    }
  }
  return jit_->replay(inputs);
}

void TinyJit::reset() {
  calls_ = 0;
  jit_ = std::make_unique<JitCapture>();
}

}  // namespace maroon
