// Reverse-mode autodiff over the lazy graph: tinygrad's compute_gradient and pm_gradient.
#pragma once
#include <unordered_map>
#include <vector>

#include "core/graph.h"
#include "maroon/tensor.h"

namespace maroon {

// DETACH and CONTIGUOUS_BACKWARD are graph-only markers with no effect on values, so they are
// not primitives in ops.def: each is an identity RESHAPE whose (otherwise unused) arg.bits
// holds one of these tags. The executor runs it as a free view; only the gradient pass reads
// the tag.
constexpr uint64_t kTagDetach = 0xde7ac4ull;
constexpr uint64_t kTagContiguousBackward = 0xc0b4ull;
bool is_tagged(const Node& n, uint64_t tag);
// An identity node carrying `tag` over `t`.
Tensor tag_identity(const Tensor& t, uint64_t tag);

// The gradient of `root` (seeded with `root_grad`) with respect to each node in `targets` that
// the walk reaches; as tinygrad, contributions add up in reverse topological visit order.
std::unordered_map<const Node*, Tensor> compute_gradient(const Tensor& root,
                                                         const Tensor& root_grad,
                                                         const std::vector<const Node*>& targets);

// Every node reachable from `root` (realized or not), sources before users.
std::vector<Node*> toposort_all(const NodePtr& root);

}  // namespace maroon
