// The lazy graph: each node is one primitive applied to its sources. Nothing is computed until
// realize(); a realized node holds a buffer and the view through which it reads that buffer.
#pragma once
#include <cstdint>
#include <algorithm>
#include <array>
#include <initializer_list>
#include <memory>
#include <new>
#include <stdexcept>
#include <unordered_set>
#include <utility>
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

struct Node;

// A node's sources, held in the node itself: an op has at most three (WHERE), so a fixed array
// replaces the std::vector that was a heap block per node (the small op from Python builds
// four). The interface is the part of std::vector the engine uses.
class SrcList {
 public:
  static constexpr size_t kMax = 3;  // the largest arity in maroon/ops.def

  SrcList() = default;
  SrcList(std::initializer_list<std::shared_ptr<Node>> s) {
    for (const auto& p : s) push_back(p);
  }
  // NOLINTNEXTLINE(google-explicit-constructor): callers that build a list first pass it as is
  SrcList(std::vector<std::shared_ptr<Node>> s) {
    for (auto& p : s) push_back(std::move(p));
  }
  SrcList(const SrcList&) = default;
  SrcList& operator=(const SrcList&) = default;
  SrcList(SrcList&& o) noexcept : v_(std::move(o.v_)), n_(std::exchange(o.n_, 0)) {}
  SrcList& operator=(SrcList&& o) noexcept {
    v_ = std::move(o.v_);
    n_ = std::exchange(o.n_, 0);
    return *this;
  }

  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  std::shared_ptr<Node>& operator[](size_t i) { return v_[i]; }
  const std::shared_ptr<Node>& operator[](size_t i) const { return v_[i]; }
  std::shared_ptr<Node>* begin() { return v_.data(); }
  std::shared_ptr<Node>* end() { return v_.data() + n_; }
  const std::shared_ptr<Node>* begin() const { return v_.data(); }
  const std::shared_ptr<Node>* end() const { return v_.data() + n_; }
  std::shared_ptr<Node>& front() { return v_[0]; }
  const std::shared_ptr<Node>& front() const { return v_[0]; }
  std::shared_ptr<Node>& back() { return v_[n_ - 1]; }
  const std::shared_ptr<Node>& back() const { return v_[n_ - 1]; }
  void push_back(std::shared_ptr<Node> p) {
    if (n_ == kMax) throw std::length_error("a node has at most 3 sources");
    v_[n_++] = std::move(p);
  }
  void clear() {
    for (size_t i = 0; i < n_; ++i) v_[i].reset();
    n_ = 0;
  }

 private:
  std::array<std::shared_ptr<Node>, kMax> v_;
  size_t n_ = 0;
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
  SrcList src;

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
NodePtr make_node(Op op, DType dtype, Shape shape, SrcList src, Arg arg = {});

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
