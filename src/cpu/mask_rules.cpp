// Plan rules for compare masks and constant selects (cpu/mask_rules.h).
#include "cpu/mask_rules.h"

#include <atomic>

namespace maroon::cpu {

namespace {

std::atomic<int64_t> g_alias_runs{0};

bool is_mask(const Node& n) {
  if (n.op != Op::CAST || (n.dtype != DType::Float32 && n.dtype != DType::Float64)) return false;
  const Op c = n.src[0]->op;
  return c == Op::CMPEQ || c == Op::CMPNE || c == Op::CMPLT;
}

// A sum over at most 64 trailing positions (the window try_count_reduce takes).
bool counts_window(const Node& r) {
  if (r.op != Op::REDUCE || r.arg.reduce_op != ReduceOp::ADD || r.arg.ints.empty()) return false;
  const Shape& s = r.src[0]->shape;
  int64_t w = 1;
  for (size_t k = 0; k < r.arg.ints.size(); ++k) {
    if (r.arg.ints[k] != static_cast<int64_t>(s.size() - r.arg.ints.size() + k)) return false;
    w *= s[static_cast<size_t>(r.arg.ints[k])];
  }
  return w >= 1 && w <= 64;
}

}  // namespace

NodeSet mask_candidates(const std::vector<Node*>& order, const std::unordered_set<const Node*>& deferred) {
  NodeSet cand, blocked;
  for (const Node* r : order)
    for (const NodePtr& s : r->src) {
      if (!is_mask(*s)) continue;
      const bool fused_reader = (is_elementwise(op_info(r->op).kind) && !deferred.count(r)) || counts_window(*r);
      (fused_reader ? cand : blocked).insert(s.get());
    }
  NodeSet out;
  for (const Node* n : order)
    if (cand.contains(n) && !blocked.contains(n)) out.insert(n);
  return out;
}

const Node* constant_select(const Node& n) {
  if (n.op != Op::WHERE) return nullptr;
  const Node* c = n.src[0].get();
  while (op_info(c->op).kind == OpKind::Movement) {
    if (c->op == Op::PAD)
      for (const auto& [b, e] : c->arg.pairs)
        if (b != 0 || e != 0) return nullptr;
    c = c->src[0].get();
  }
  if (c->op != Op::CONST || c->dtype != DType::Bool) return nullptr;
  const Node* v = (c->arg.bits & 1) ? n.src[1].get() : n.src[2].get();
  return v->dtype == n.dtype && v->shape == n.shape ? v : nullptr;
}

void alias_selected(Node& n) {
  const Node* v = constant_select(n);
  n.buffer = v->buffer;
  n.view = v->view;
  g_alias_runs.fetch_add(1, std::memory_order_relaxed);
}

int64_t constant_select_runs() { return g_alias_runs.load(std::memory_order_relaxed); }

}  // namespace maroon::cpu
