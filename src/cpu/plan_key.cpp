#include "cpu/plan_key.h"

#include <iterator>

namespace maroon::cpu {

namespace {

void put_shape(const Shape& s, std::vector<int64_t>* key) {
  key->push_back(static_cast<int64_t>(s.size()));
  key->insert(key->end(), s.begin(), s.end());
}

}  // namespace

bool plan_key(const std::vector<Node*>& order, std::vector<int64_t>* key) {
  key->clear();
  if (order.empty() || order.size() > kPlanKeyMaxNodes) return false;
  // Leaves seen so far, numbered by first use: which slots share a leaf is part of the graph
  // (x * x reads one node twice; its consumer counts differ from x * y's).
  const Node* leaves[3 * kPlanKeyMaxNodes];
  size_t nleaves = 0;
  key->push_back(static_cast<int64_t>(order.size()));
  for (size_t i = 0; i < order.size(); ++i) {
    const Node& n = *order[i];
    key->push_back(static_cast<int64_t>(n.op) | static_cast<int64_t>(n.dtype) << 8 |
                   static_cast<int64_t>(n.rnd) << 16 | static_cast<int64_t>(n.arg.dtype) << 24 |
                   static_cast<int64_t>(n.arg.reduce_op) << 32 | static_cast<int64_t>(n.src.size()) << 40);
    put_shape(n.shape, key);
    put_shape(n.arg.ints, key);
    key->push_back(static_cast<int64_t>(n.arg.pairs.size()));
    for (const auto& [a, b] : n.arg.pairs) {
      key->push_back(a);
      key->push_back(b);
    }
    key->push_back(static_cast<int64_t>(n.arg.bits));
    for (const NodePtr& s : n.src) {
      // Handles on a source: one outside the schedule keeps it from being fused.
      key->push_back(s.use_count());
      if (!s->realized) {  // a step of this schedule: sources come first
        size_t j = 0;
        while (j < i && order[j] != s.get()) ++j;
        if (j == i) return false;  // not a schedule: plan() is left to decide as it finds it
        key->push_back(static_cast<int64_t>(j));
        continue;
      }
      size_t l = 0;
      while (l < nleaves && leaves[l] != s.get()) ++l;
      key->push_back(-1 - static_cast<int64_t>(l));
      if (l < nleaves) continue;
      if (nleaves == std::size(leaves)) return false;  // more leaves than any op's arity gives: plan afresh
      leaves[nleaves++] = s.get();
      key->push_back(static_cast<int64_t>(s->op) | static_cast<int64_t>(s->dtype) << 8);
      put_shape(s->shape, key);
    }
  }
  return true;
}

}  // namespace maroon::cpu
