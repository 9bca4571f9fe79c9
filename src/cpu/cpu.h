// The fast CPU backend: runs a schedule with fused elementwise kernels, reductions vectorised
// across outputs, a packed matmul for MUL+REDUCE ADD, SIMD (Highway, runtime dispatch) and
// threads. Every kernel equals src/ref bit for bit; tests/cpu proves it per op, dtype, shape
// class, SIMD target and thread count.
#pragma once
#include <memory>
#include <unordered_map>
#include <vector>

#include "core/graph.h"

namespace maroon::cpu {

// Realizes the nodes of `order` (a schedule: sources first). Intermediate elementwise nodes that
// nothing else needs are fused into their consumer and left unrealized.
void run(const std::vector<Node*>& order);

// run() in two halves: plan() decides each node's path (fused, materialized, matmul, ...) without
// computing anything; execute() runs them. A plan stays valid while its nodes' graph does: a
// captured step (maroon/jit.h) executes one plan again on new data.
class Plan {
 public:
  Plan();
  ~Plan();
  Plan(Plan&&) noexcept;
  Plan& operator=(Plan&&) noexcept;
  // Points the plan at other nodes: each node n it names becomes to.at(n), a copy of n with the
  // same sources (a captured step runs its plans on a private copy of the graph).
  void remap(const std::unordered_map<const Node*, Node*>& to);
  // The nodes whose kernels execute() runs, in order (a node fused into another's kernel, or run
  // inside it, is not one of them).
  std::vector<Node*> kernels() const;
  // After kernels()[i] runs, execute() resets the buffer of each node of release[i] (its kernel
  // and every kernel reading it have run): a captured step's buffers go back to the buffer cache
  // as soon as nothing of the step reads them (core/jit_lifetimes.h). The nodes stay realized.
  void set_releases(std::vector<std::vector<Node*>> release);
  // Lets execute() keep, from one run of the plan to the next, what depends only on the graph:
  // a movement node's view while its source's view is the same, an elementwise kernel's program.
  // Only for a plan whose nodes nobody else changes between runs (a captured step's private copy).
  void keep_between_runs();
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  friend Plan plan(const std::vector<Node*>& order);
  friend Plan plan_fresh(const std::vector<Node*>& order);
  friend void execute(const Plan& p);
};
// plan() keeps the decisions for a small schedule (src/cpu/plan_key.h) and gives them again for
// a schedule with the same key; plan_fresh() always decides.
Plan plan(const std::vector<Node*>& order);
Plan plan_fresh(const std::vector<Node*>& order);
void execute(const Plan& p);
// For the tests: turns kept plans on or off (and forgets those kept); how many plans were kept ones.
void set_plan_cache(bool on);
int64_t plan_cache_hits();
// How many times execute() has used a view or program a kept plan kept from its last run (for
// the tests: the replays took the kept path).
int64_t plan_kept_reuses();
// How many movement steps took their view from the plan they were kept with (plan()'s store:
// the same step's view from an earlier run, its source's view equal), in this process.
int64_t plan_kept_views();

}  // namespace maroon::cpu
