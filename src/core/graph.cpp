#include "core/graph.h"

#include <cassert>
#include <cstring>
#include <unordered_set>

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

void realize(const NodePtr& root) {
  std::vector<Node*> order = schedule(root);
  if (order.empty()) return;
  FpEnvGuard env;
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
