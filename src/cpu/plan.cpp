// Decides which nodes of a schedule get a buffer and which are fused into their consumer.
#include <unordered_map>

#include "cpu/cpu.h"
#include "cpu/kernel.h"
#include "ref/executor.h"

namespace maroon::cpu {

namespace {

bool is_elementwise(const Node& n) {
  OpKind k = op_info(n.op).kind;
  return k == OpKind::Unary || k == OpKind::Binary || k == OpKind::Compare || k == OpKind::Ternary;
}

}  // namespace

void run(const std::vector<Node*>& order) {
  // How many source slots of scheduled nodes point at each node, and which consumers can fuse it.
  std::unordered_map<const Node*, int> refs, fusable_consumers, other_consumers;
  std::unordered_map<const Node*, long> use_count;
  for (Node* n : order) {
    bool fuses = is_elementwise(*n) || n->op == Op::REDUCE;
    for (const NodePtr& s : n->src) {
      refs[s.get()]++;
      use_count[s.get()] = s.use_count();
      (fuses ? fusable_consumers : other_consumers)[s.get()]++;
    }
  }
  const Node* root = order.back();
  for (Node* n : order) {
    if (!is_elementwise(*n)) {
      if (n->op == Op::REDUCE) {
        if (!try_matmul(*n)) run_reduce(*n);
      } else {
        ref::execute(*n);  // movement ops are views; constants are one element
      }
      n->realized = true;
      continue;
    }
    // An elementwise node is fused into its only consumer when nothing else can see it: no
    // other scheduled consumer, no movement op on it, and no handle outside this graph.
    bool fuse = n != root && refs[n] == 1 && fusable_consumers[n] == 1 && other_consumers[n] == 0 &&
                use_count[n] <= refs[n];
    if (fuse) continue;
    run_elementwise(*n);
    n->realized = true;
  }
}

}  // namespace maroon::cpu
