// Internal to src/verify: a captured state frozen for hashing and writing (possibly on another
// thread), and the canonical checks.
#pragma once
#include <string>
#include <vector>

#include "core/graph.h"
#include "maroon/verify.h"
#include "verify/digest.h"

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
// commitment_of's digest a piece at a time (commitment_evicting's, each piece evicted once
// hashed, with `evict`): for Run's hashing in the thread pool's idle time, where a worker must
// come back to its tasks within tens of microseconds. `f` must outlive it.
class PieceHasher {
 public:
  PieceHasher(const Frozen& f, bool evict) : f_(f), evict_(evict) {}
  // Hashes up to `budget` bytes more (a view that is not one run of its buffer: that tensor whole,
  // gathered); true once every byte is hashed.
  bool piece(size_t budget);
  Digest finish() { return h_.finish(); }

 private:
  const Frozen& f_;
  Hasher h_;
  bool evict_, header_ = false;
  size_t node_ = 0, at_ = 0;  // the next byte: f_.nodes[node_]'s at_-th
};
// Two states' commitments at once (consecutive steps of one run): where their serialisations
// have the same layout (header length, each tensor one run of the same size), both are hashed in
// lockstep (update_pair), which takes about 0.6 of the time of hashing them one after the other;
// any other pair is hashed one after the other. Each state's bytes are hashed as PieceHasher
// would, so the digests are commitment_of's. `a` and `b` must outlive it.
class PairHasher {
 public:
  PairHasher(const Frozen& a, bool evict_a, const Frozen& b, bool evict_b);
  // Up to `budget` bytes more of each (as PieceHasher::piece); true once every byte is hashed.
  bool piece(size_t budget);
  bool lockstep() const { return lockstep_; }
  std::pair<Digest, Digest> finish();

 private:
  const Frozen &a_, &b_;
  bool evict_a_, evict_b_, lockstep_;
  PieceHasher pa_, pb_;  // hashes a, then b, where the layouts differ
  bool a_done_ = false;
  Hasher ha_, hb_;  // in lockstep
  bool header_ = false;
  size_t node_ = 0, at_ = 0;
};
void evict_from_caches(const Frozen& f);
void write_frozen(const Frozen& f, const std::string& path);

}  // namespace maroon::verify
