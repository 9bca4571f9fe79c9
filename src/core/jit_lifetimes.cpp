// TinyJit's buffer lifetimes (core/jit_lifetimes.h).
#include "core/jit_lifetimes.h"

#include <unordered_map>

namespace maroon::jit {

namespace {

bool is_movement(const Node& n) { return op_info(n.op).kind == OpKind::Movement; }

// Which kernel last touches each node of the step, kernels numbered across the runs in order.
struct LastUse {
  std::unordered_map<const Node*, size_t> last;
  std::unordered_set<const Node*> scheduled;  // every node of some schedule (the others are leaves)
  std::unordered_set<const Node*> written;  // nodes whose own kernel has run and which a reader stops at

  // Kernel k runs n: it writes n's buffer and reads every node below n down to the nodes already
  // written. A node that got its buffer some other way (a movement node shares its source's; a
  // deferred matmul may be computed by its consumer's kernel) is looked through: its sources
  // count as read too, so a lifetime is only ever too long, never too short.
  void kernel(Node* n, size_t k) {
    last[n] = k;
    std::vector<const Node*> stack{n};
    std::unordered_set<const Node*> seen{n};
    while (!stack.empty()) {
      const Node* m = stack.back();
      stack.pop_back();
      for (const NodePtr& s : m->src) {
        if (!scheduled.count(s.get())) continue;  // a leaf: never released
        last[s.get()] = k;
        if (written.count(s.get()) && !is_movement(*s)) continue;
        if (seen.insert(s.get()).second) stack.push_back(s.get());
      }
    }
    written.insert(n);
  }
};

}  // namespace

void plan_releases(const std::vector<PlannedRun>& runs, const std::unordered_set<const Node*>& keep) {
  LastUse use;
  for (const PlannedRun& r : runs) use.scheduled.insert(r.order->begin(), r.order->end());
  std::vector<std::vector<Node*>> kernels;
  std::vector<size_t> first;  // each run's first kernel number
  size_t k = 0;
  for (const PlannedRun& r : runs) {
    for (Node* n : *r.order) use.written.erase(n);  // the replay unrealizes the schedule first
    first.push_back(k);
    kernels.push_back(r.plan->kernels());
    for (Node* n : kernels.back()) use.kernel(n, k++);
  }
  // Each node is dropped after its last kernel, in the run that kernel belongs to (in schedule
  // order, so that the buffer cache sees the same sequence on every machine and every replay).
  std::vector<std::vector<std::vector<Node*>>> release(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) release[i].resize(kernels[i].size());
  std::unordered_set<const Node*> placed;
  for (const PlannedRun& r : runs)
    for (Node* n : *r.order) {
      auto at = use.last.find(n);
      if (at == use.last.end() || keep.count(n) || !placed.insert(n).second) continue;
      size_t i = 0;
      while (i + 1 < runs.size() && first[i + 1] <= at->second) ++i;
      release[i][at->second - first[i]].push_back(n);
    }
  for (size_t i = 0; i < runs.size(); ++i) runs[i].plan->set_releases(std::move(release[i]));
}

}  // namespace maroon::jit
