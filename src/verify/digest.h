// SHA-256 for src/verify: a streaming hasher (OpenSSL where the build has it, else the portable
// maroon::Sha256; the digests are the same) and the elements of realized nodes fed to it without
// going through Tensor::bytes().
#pragma once
#include <cstddef>
#include <functional>
#include <memory>

#include "core/graph.h"
#include "maroon/verify.h"

namespace maroon::verify {

class Hasher {
 public:
  Hasher();
  ~Hasher();
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;
  void update(const void* data, size_t n);
  void update(std::string_view s) { update(s.data(), s.size()); }
  Digest finish();  // once

 private:
  friend void update_pair(Hasher& a, const void* p, Hasher& b, const void* q, size_t n);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};
// a.update(p, n) and b.update(q, n), the two messages' blocks compressed in lockstep where both
// are at the same offset within a block (sha256_ni_blocks2; the same digests either way).
void update_pair(Hasher& a, const void* p, Hasher& b, const void* q, size_t n);
// Blocks compressed in lockstep by update_pair since the process started (tests: the path ran).
int64_t paired_blocks();

// A node's elements as row-major little-endian bytes, in pieces: a contiguous buffer is passed
// whole, any other view is gathered a row at a time into a small buffer. `n` must be realized.
using PieceFn = std::function<void(const uint8_t* bytes, size_t n)>;
void for_each_piece(const Node& n, const PieceFn& emit);
// Where a realized node's buffer holds its elements in order: the whole run (*n bytes at *p, none
// for an empty node) and true; false for any other view.
bool contiguous_bytes(const Node& node, const uint8_t** p, size_t* n);
void hash_elements(Hasher& h, const Node& n);
Digest node_digest(const Node& n);
// The realized node behind a tensor (realizes it).
const Node& realized(const Tensor& t);

}  // namespace maroon::verify
