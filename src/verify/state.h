// Internal to src/verify: a captured state frozen for hashing and writing (possibly on another
// thread), and the canonical checks.
#pragma once
#include <string>
#include <vector>

#include "core/graph.h"
#include "maroon/verify.h"

namespace maroon::verify {

// A state's canonical serialisation, without copying a tensor: the safetensors header and the
// realized nodes whose elements follow it. Realized nodes never change, so another thread may
// read them while new steps run.
struct Frozen {
  std::string header;
  std::vector<NodePtr> nodes;
};
// Checks that names are unique and in byte order; realizes every tensor.
Frozen freeze(const State& s);
// The same for a state whose tensors are all realized already (capture's are), without
// realizing: safe on another thread while the loop realizes new steps (realize() takes a lock
// that a running step holds). A tensor not realized is an internal error.
Frozen freeze_realized(const State& s);
Digest commitment_of(const Frozen& f);
// The same digest, each 64 KB evicted from every cache once hashed (evict.cpp says why): Run's
// background hasher.
Digest commitment_evicting(const Frozen& f);
void evict_from_caches(const Frozen& f);
void write_frozen(const Frozen& f, const std::string& path);

}  // namespace maroon::verify
