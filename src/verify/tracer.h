// Internal to src/verify: the realize observer behind traces. While a Tracer lives, every node
// realized on this thread is recorded in schedule order with its digest (see maroon::trace).
#pragma once
#include <memory>
#include <optional>
#include <unordered_map>

#include "core/graph.h"
#include "maroon/verify.h"

namespace maroon::verify {

class Tracer : public RealizeObserver {
 public:
  // labels: leaves that are these state tensors are named after them. against: another side's
  // trace of the same step; the first node that differs from it is kept (see first_difference).
  // keep: hold every traced node (and so its sources' buffers) until the Tracer dies, so that
  // any node can be recomputed afterwards (referee).
  Tracer(const StateBinding* labels, std::optional<Fault> fault, bool keep);
  ~Tracer() override;
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  void realized(const NodePtr& n) override;
  // Stops observing (the recorded trace and kept nodes stay).
  void detach();
  Trace& trace() { return t_; }
  // The state after the step: each entry's digest and the traced node whose buffer it is.
  void record_state_out(const State& s);
  // Recomputes kept node i alone with the reference executor from its (realized) sources.
  Digest referee(int64_t i) const;
  bool is_leaf(int64_t i) const { return t_.nodes.at(static_cast<size_t>(i)).op == "BUFFER"; }

 private:
  int64_t index_of(const NodePtr& n);
  int64_t add(const NodePtr& n, bool leaf);
  struct Seen {
    std::weak_ptr<Node> node;
    int64_t index;
  };
  RealizeObserver* prev_;
  bool attached_ = true;
  std::optional<Fault> fault_;
  bool keep_;
  std::unordered_map<const Node*, Seen> seen_;
  std::unordered_map<const Buffer*, std::pair<std::weak_ptr<Buffer>, int64_t>> owner_;
  std::unordered_map<const Node*, std::pair<std::weak_ptr<Node>, std::string>> labels_;
  std::vector<NodePtr> kept_;
  Trace t_;
};

// The op's argument as traces print it: "axes=[1]", "shape=[64,784]", "bits=0x3f800000", ...
std::string arg_string(const Node& n);
// A computed node's digest in a trace (elements; chained for views; the element for constants).
Digest output_digest(const Node& n, const std::vector<TraceNode>& nodes, const std::vector<int64_t>& src);

}  // namespace maroon::verify
