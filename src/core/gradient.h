// Reverse-mode autodiff over the lazy graph: tinygrad's compute_gradient and pm_gradient.
#pragma once
#include <unordered_map>
#include <vector>

#include "core/graph.h"
#include "maroon/tensor.h"

namespace maroon {

// An identity node of graph-only op DETACH or CONTIGUOUS_BACKWARD (ops.def) over `t`.
Tensor marker(const Tensor& t, Op op);

// The gradient of `root` (seeded with `root_grad`) with respect to each node in `targets` that
// the walk reaches; as tinygrad, contributions add up in reverse topological visit order.
std::unordered_map<const Node*, Tensor> compute_gradient(const Tensor& root,
                                                         const Tensor& root_grad,
                                                         const std::vector<const Node*>& targets);

// Every node reachable from `root` (realized or not), sources before users.
std::vector<Node*> toposort_all(const NodePtr& root);

}  // namespace maroon
