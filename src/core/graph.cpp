#include "core/graph.h"

#include <cassert>
#include <cstring>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/fpenv.h"
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

NodePtr make_node(Op op, DType dtype, Shape shape, std::vector<NodePtr> src, Arg arg) {
  assert(!is_weak(dtype));
  assert(static_cast<int>(src.size()) == op_info(op).arity);
  auto n = std::make_shared<Node>();
  n->op = op;
  n->dtype = dtype;
  n->shape = std::move(shape);
  n->rnd = current_round();
  n->arg = std::move(arg);
  n->src = std::move(src);
  return n;
}

std::vector<Node*> schedule(const NodePtr& root) {
  return post_order(root.get(), [](const Node* n) { return !n->realized; }, [](const Node*) { return true; });
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
  std::vector<Node*> order = schedule(root);
  if (order.empty()) return;
  FpEnvGuard env;
  if (g_capture) return g_capture->run(root, order);
  if (g_observer) return realize_observed(root, order, *g_observer);
  if (backend() == Backend::Cpu) {
    cpu::run(order);
    return;
  }
  for (Node* n : order) {
    ref::execute(*n);
    n->realized = true;
  }
}

}  // namespace maroon
