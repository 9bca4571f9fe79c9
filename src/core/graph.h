// The lazy graph: each node is one primitive applied to its sources. Nothing is computed until
// realize(); a realized node holds a buffer and the view through which it reads that buffer.
#pragma once
#include <cstdint>
#include <algorithm>
#include <memory>
#include <new>
#include <unordered_set>
#include <vector>

#include "core/ops.h"
#include "core/view.h"
#include "maroon/dtype.h"
#include "maroon/round.h"

namespace maroon {

// Raw little-endian elements, 64-byte aligned, with 64 bytes of slack for SIMD tails. Not
// zeroed: every producer writes every element. Memory comes from a cache of freed blocks
// (buffer.cpp): fresh pages cost a fault each, which on some machines is more than the kernel
// that fills them.
struct Buffer {
  DType dtype;
  int64_t count;

  Buffer(DType d, int64_t n);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  uint8_t* bytes() { return mem_; }
  const uint8_t* bytes() const { return mem_; }
  size_t nbytes() const { return static_cast<size_t>(count) * itemsize(dtype); }
  // Element i's bits, zero-extended.
  uint64_t load(int64_t i) const;
  void store(int64_t i, uint64_t bits);

 private:
  uint8_t* mem_;
  size_t capacity_;
};

struct Arg {
  std::vector<int64_t> ints;  // RESHAPE/EXPAND: shape; PERMUTE: order; FLIP, REDUCE: axes
  Pairs pairs;                // PAD: (before, after); SHRINK: (begin, end)
  DType dtype = DType::Bool;  // CAST, BITCAST: target dtype
  ReduceOp reduce_op = ReduceOp::ADD;
  uint64_t bits = 0;          // CONST: the value's bits in the node's dtype
};

struct Node {
  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  // Frees the sources it owns last without recursion: a chain of a million unrealized nodes
  // would otherwise overflow the stack (graph.cpp).
  ~Node();

  Op op;
  DType dtype;
  Shape shape;
  Round rnd;  // the rounding mode in force when the node was built
  Arg arg;
  std::vector<std::shared_ptr<Node>> src;

  // Set by realize().
  std::shared_ptr<Buffer> buffer;
  ShapeTracker view;
  bool realized = false;
};

using NodePtr = std::shared_ptr<Node>;

// The node whose kernel this thread is running, while an ExecScope is alive: an allocation over
// the cap names its op and shape (buffer.cpp). Null outside realize().
const Node* executing_node();
class ExecScope {
 public:
  explicit ExecScope(const Node* n);
  ~ExecScope();
  ExecScope(const ExecScope&) = delete;
  ExecScope& operator=(const ExecScope&) = delete;

 private:
  const Node* prev_;
};

// Builds a node; its shape is checked first (core/checked.h: ShapeError naming the op when a
// dimension is negative or the byte size does not fit in 64 bits).
NodePtr make_node(Op op, DType dtype, Shape shape, std::vector<NodePtr> src, Arg arg = {});

// The nodes reachable from `root` through sources, sources before users: an iterative
// post-order walk (graphs can be deeper than the stack), each node once. `visit(n)`: whether n
// is walked to and listed at all; `enter(n)`: whether the walk goes on into n's sources (a
// visited node it does not enter is listed as a leaf, when first met).
template <class Visit, class Enter>
std::vector<Node*> post_order(Node* root, Visit visit, Enter enter) {
  std::vector<Node*> order;
  if (!visit(root)) return order;
  std::unordered_set<const Node*> seen{root};
  std::vector<std::pair<Node*, size_t>> stack{{root, 0}};
  while (!stack.empty()) {
    auto& [n, i] = stack.back();
    if (enter(n) && i < n->src.size()) {
      Node* s = n->src[i++].get();
      if (visit(s) && seen.insert(s).second) stack.push_back({s, 0});
    } else {
      order.push_back(n);
      stack.pop_back();
    }
  }
  return order;
}

// The unrealized nodes `root` depends on, sources before users (the schedule).
std::vector<Node*> schedule(const NodePtr& root);
// Realizes `root` and everything it needs, with the floating-point environment Maroon requires.
void realize(const NodePtr& root);

// Watches realization (src/verify's per-node traces). While one is installed on this thread,
// realize() runs every scheduled node on its own, in schedule order, so that every node gets its
// own buffer (nothing is fused; the bits are the same either way), and calls realized() after
// each. `node` is the shared handle of the node just realized.
class RealizeObserver {
 public:
  virtual ~RealizeObserver() = default;
  virtual void realized(const NodePtr& node) = 0;
};
// Installs `o` (nullptr: none) for this thread; returns the one it replaces.
RealizeObserver* set_realize_observer(RealizeObserver* o);
RealizeObserver* realize_observer();

// A step being captured (core/jit.cpp): while one is installed on this thread, realize() hands
// it each schedule (inside the floating-point environment) to run and record.
class RealizeCapture {
 public:
  virtual ~RealizeCapture() = default;
  virtual void run(const NodePtr& root, const std::vector<Node*>& order) = 0;
};
RealizeCapture* set_realize_capture(RealizeCapture* c);

}  // namespace maroon
