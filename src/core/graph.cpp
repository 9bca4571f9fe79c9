#include "core/graph.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/checked.h"
#include "core/fpenv.h"
#include "core/interrupt.h"
#include "core/node_map.h"
#include "cpu/cpu.h"
#include "maroon/backend.h"
#include "ref/executor.h"

namespace maroon {

uint64_t Buffer::load(int64_t i) const {
  uint64_t v = 0;
  size_t sz = itemsize(dtype);
  std::memcpy(&v, bytes() + static_cast<size_t>(i) * sz, sz);  // little-endian hosts only
  return v;
}

void Buffer::store(int64_t i, uint64_t bits) {
  size_t sz = itemsize(dtype);
  std::memcpy(bytes() + static_cast<size_t>(i) * sz, &bits, sz);
}

namespace {

// The nodes left to free while the outermost ~Node on this thread drains (below): the first 8 in
// its own frame, so freeing a small graph's chain takes no heap block, the rest in a vector.
class PendingNodes {
 public:
  void push(NodePtr p) {
    if (n_ < kInline) inline_[n_++] = std::move(p);
    else more_.push_back(std::move(p));
  }
  // Last in, first out (the vector is used only while the inline slots are full).
  NodePtr pop() {
    if (more_.empty()) return std::move(inline_[--n_]);
    NodePtr p = std::move(more_.back());
    more_.pop_back();
    return p;
  }
  bool empty() const { return n_ == 0 && more_.empty(); }

 private:
  static constexpr size_t kInline = 8;
  std::array<NodePtr, kInline> inline_;
  size_t n_ = 0;
  std::vector<NodePtr> more_;
};

// Set while the outermost ~Node on this thread drains: nodes whose last owner is a node being
// destroyed are freed by that loop instead of by recursion.
thread_local PendingNodes* t_pending = nullptr;
thread_local const Node* t_executing = nullptr;

std::string lower(std::string_view s) {
  std::string o(s);
  for (char& c : o) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return o;
}

}  // namespace

Node::~Node() {
  if (t_pending) {  // an outer ~Node is draining: hand it our sources
    for (NodePtr& s : src) t_pending->push(std::move(s));
    return;
  }
  // Most nodes die with every source still owned elsewhere (a leaf's users, a graph's shared
  // inputs): their members release them, and nothing recurses, so no drain is set up at all.
  bool drains = false;
  for (const NodePtr& s : src) drains = drains || s.use_count() == 1;
  if (!drains) return;
  PendingNodes pending;
  for (NodePtr& s : src) pending.push(std::move(s));
  t_pending = &pending;
  // Dropping the last reference to a source runs its ~Node, which appends that node's own
  // sources here (above), so the stack never grows with the graph's depth.
  while (!pending.empty()) pending.pop().reset();
  t_pending = nullptr;
}

const Node* executing_node() { return t_executing; }
ExecScope::ExecScope(const Node* n) : prev_(t_executing) { t_executing = n; }
ExecScope::~ExecScope() { t_executing = prev_; }

NodePtr make_node(Op op, DType dtype, Shape shape, SrcList src, Arg arg) {
  assert(!is_weak(dtype));
  assert(static_cast<int>(src.size()) == op_info(op).arity);
  // The op's name is formatted only for the error: this runs for every node a step builds.
  if (!checked::fits(shape, static_cast<int64_t>(itemsize(dtype)))) check_shape(lower(op_name(op)), shape, dtype);
  auto n = std::make_shared<Node>();
  n->op = op;
  n->dtype = dtype;
  n->shape = std::move(shape);
  n->rnd = current_round();
  n->arg = std::move(arg);
  n->src = std::move(src);
  return n;
}

// post_order (graph.h) over the unrealized nodes, with the set above: the same walk, the same order.
std::vector<Node*> schedule(const NodePtr& root) {
  std::vector<Node*> order;
  if (root->realized) return order;
  NodeSet seen;
  seen.insert(root.get());
  // Room for a small graph up front: growing from one entry was a malloc/free per doubling.
  order.reserve(16);
  // The walk's stack is reused per thread (schedule() calls nothing that schedules): a fresh
  // one was a heap block per realize.
  thread_local std::vector<std::pair<Node*, size_t>> stack;
  stack.clear();
  stack.push_back({root.get(), 0});
  while (!stack.empty()) {
    auto& [n, i] = stack.back();
    if (i < n->src.size()) {
      Node* s = n->src[i++].get();
      if (!s->realized && seen.insert(s)) stack.push_back({s, 0});
    } else {
      order.push_back(n);
      stack.pop_back();
    }
  }
  return order;
}

namespace {

thread_local RealizeObserver* g_observer = nullptr;
thread_local RealizeCapture* g_capture = nullptr;

// Observed realization: one node at a time, each a schedule of its own (so the CPU backend fuses
// nothing), then the observer. Shared handles come from the consumers' source lists.
void realize_observed(const NodePtr& root, const std::vector<Node*>& order, RealizeObserver& obs) {
  std::unordered_map<const Node*, NodePtr> handle{{root.get(), root}};
  for (Node* n : order)
    for (const NodePtr& s : n->src) handle.emplace(s.get(), s);
  for (Node* n : order) {
    if (backend() == Backend::Cpu) cpu::run({n});
    else ref::execute(*n);
    n->realized = true;
    obs.realized(handle.at(n));
  }
}

}  // namespace

RealizeObserver* set_realize_observer(RealizeObserver* o) { return std::exchange(g_observer, o); }
RealizeObserver* realize_observer() { return g_observer; }
RealizeCapture* set_realize_capture(RealizeCapture* c) { return std::exchange(g_capture, c); }

void realize(const NodePtr& root) {
  // One realize at a time: Python releases the GIL while a graph runs, and two threads may
  // reach the same unrealized node; nodes are written (buffer, view, realized) only here.
  // Recursive: a Python signal handler run by the interrupt poll may itself compute.
  static std::recursive_mutex mu;
  std::lock_guard<std::recursive_mutex> lock(mu);
  std::vector<Node*> order = schedule(root);
  if (order.empty()) return;
  FpEnvGuard env;
  RealizeScope interruptible;
  AllocCapScope cap;  // the allocation cap, read once for the graph
  if (g_capture) return g_capture->run(root, order);
  if (g_observer) return realize_observed(root, order, *g_observer);
  if (backend() == Backend::Cpu) {
    cpu::run(order);
    return;
  }
  for (Node* n : order) {
    poll_interrupt();
    ExecScope scope(n);
    ref::execute(*n);
    n->realized = true;
  }
}

}  // namespace maroon
