// Decides which nodes of a schedule get a buffer and which are fused into their consumer.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_map>

#include "cpu/cpu.h"
#include "cpu/gemm_fused.h"
#include "cpu/kernel.h"
#include "maroon/tensor.h"
#include "ref/executor.h"

namespace maroon::cpu {

namespace {

bool is_elementwise(const Node& n) { return maroon::is_elementwise(op_info(n.op).kind); }

}  // namespace

void run(const std::vector<Node*>& order) {
  // How many source slots of scheduled nodes point at each node, and which consumers can fuse it.
  std::unordered_map<const Node*, int> refs, fusable_consumers, other_consumers;
  std::unordered_map<const Node*, long> use_count;
  std::unordered_map<const Node*, const Node*> a_consumer;  // for MAROON_PROFILE's report
  for (Node* n : order) {
    bool fuses = is_elementwise(*n) || n->op == Op::REDUCE;
    for (const NodePtr& s : n->src) {
      refs[s.get()]++;
      a_consumer[s.get()] = n;
      use_count[s.get()] = s.use_count();
      (fuses ? fusable_consumers : other_consumers)[s.get()]++;
    }
  }
  const Node* root = order.back();
  // Nothing outside the schedule sees n, and only one scheduled slot reads it.
  auto private_to_one = [&](const Node* n) {
    return !n->realized && n != root && refs[n] == 1 && use_count[n] <= refs[n];
  };
  // A sum of a product seen through movement ops (conv2d's input gradient permutes the product
  // before summing it): the movement nodes and the product are deferred to the reduction, which
  // runs them as a matmul over moved factors, or else computes them as usual first.
  std::unordered_map<const Node*, std::vector<Node*>> chains;
  std::unordered_map<const Node*, bool> deferred;
  for (Node* n : order) {
    if (n->op != Op::REDUCE || n->arg.reduce_op != ReduceOp::ADD) continue;
    std::vector<Node*> chain;
    Node* m = n->src[0].get();
    while (op_info(m->op).kind == OpKind::Movement && private_to_one(m)) {
      chain.push_back(m);
      m = m->src[0].get();
    }
    if (chain.empty() || m->op != Op::MUL || !private_to_one(m)) continue;
    for (Node* c : chain) deferred[c] = true;
    deferred[m] = true;
    chains[n] = std::move(chain);
  }
  // MAROON_PROFILE=1 prints every kernel's time: where a graph spends it, and on which path.
  static const bool profile = std::getenv("MAROON_PROFILE") != nullptr;
  auto timed = [&](const Node* n, const char* path, auto&& f) {
    if (!profile) return f();
    auto t0 = std::chrono::steady_clock::now();
    auto r = f();
    double ms = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e3;
    if (ms >= 0.05)
      std::fprintf(stderr, "maroon: %8.2f ms %-11s %-8s %s %s\n", ms, path,
                   std::string(op_name(n->op)).c_str(), std::string(dtype_name(n->dtype)).c_str(),
                   shape_str(n->src.empty() ? n->shape : n->src[0]->shape).c_str());
    return r;
  };
  for (Node* n : order) {
    if (deferred.count(n)) continue;
    if (!is_elementwise(*n)) {
      if (n->op == Op::REDUCE) {
        auto chain = chains.find(n);
        if (chain == chains.end()) {
          bool mm = timed(n, "matmul", [&] { return try_matmul(*n); });
          if (!mm) timed(n, "reduce", [&] { run_reduce(*n); return true; });
        } else if (!timed(n, "matmul", [&] { return try_matmul(*n, chain->second); })) {
          Node* mul = chain->second.back()->src[0].get();
          timed(mul, "elementwise", [&] { run_elementwise(*mul); return true; });
          mul->realized = true;
          for (size_t i = chain->second.size(); i-- > 0;) {
            ref::execute(*chain->second[i]);
            chain->second[i]->realized = true;
          }
          timed(n, "reduce", [&] { run_reduce(*n); return true; });
        }
      } else if (n->op == Op::REDUCE_MULACC) {  // the opt-in fused matmul (gemm_fused.h)
        timed(n, "fused", [&] { run_fused_reduce(*n); return true; });
      } else {
        ref::execute(*n);  // movement ops are views; constants are one element
      }
      n->realized = true;
      continue;
    }
    // An elementwise node is fused into its only consumer when nothing else can see it: no
    // other scheduled consumer, no movement op on it, and no handle outside this graph.
    // A single op over realized leaves (x * w broadcast for conv2d: often the largest tensor in
    // the graph) is recomputed inside each consumer rather than written out: recomputing one op
    // costs less than the memory traffic.
    bool one_op = true;
    for (const NodePtr& s : n->src) one_op = one_op && s->realized;
    bool fuse = n != root && other_consumers[n] == 0 && use_count[n] <= refs[n] &&
                fusable_consumers[n] == refs[n] && (refs[n] == 1 || one_op);
    if (profile && !fuse && n != root)
      std::fprintf(stderr, "maroon: materialize %s: refs %d fusable %d other %d handles %ld one_op %d (e.g. for %s)\n",
                   std::string(op_name(n->op)).c_str(), refs[n], fusable_consumers[n], other_consumers[n],
                   use_count[n] - refs[n], one_op,
                   a_consumer.count(n) ? std::string(op_name(a_consumer[n]->op)).c_str() : "-");
    if (fuse) continue;
    timed(n, "elementwise", [&] { run_elementwise(*n); return true; });
    n->realized = true;
  }
}

}  // namespace maroon::cpu
