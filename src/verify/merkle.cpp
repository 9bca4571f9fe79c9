// The Merkle tree over a run's state commitments, as RFC 9162 (Certificate Transparency v2)
// defines it: leaves and inner nodes are hashed with different prefixes, so an inner node can
// never be passed off as a leaf, and an odd count splits at the largest power of two below it.
#include "maroon/verify.h"
#include "verify/digest.h"

namespace maroon::verify {

namespace {

Digest leaf_hash(const Digest& c) {
  Hasher h;
  const uint8_t tag = 0x00;
  h.update(&tag, 1);
  h.update(c.data(), c.size());
  return h.finish();
}

Digest node_hash(const Digest& l, const Digest& r) {
  Hasher h;
  const uint8_t tag = 0x01;
  h.update(&tag, 1);
  h.update(l.data(), l.size());
  h.update(r.data(), r.size());
  return h.finish();
}

size_t split(size_t n) {  // the largest power of two strictly below n (n >= 2)
  size_t k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

Digest root_of(const Digest* c, size_t n) {
  if (n == 1) return leaf_hash(c[0]);
  size_t k = split(n);
  return node_hash(root_of(c, k), root_of(c + k, n - k));
}

// RFC 9162 §2.1.3.1 PATH(m, D[n]).
void path(const Digest* c, size_t n, size_t m, std::vector<Digest>& out) {
  if (n <= 1) return;
  size_t k = split(n);
  if (m < k) {
    path(c, k, m, out);
    out.push_back(root_of(c + k, n - k));
  } else {
    path(c + k, n - k, m - k, out);
    out.push_back(root_of(c, k));
  }
}

// The roots of a[0, n) and b[0, n) differ: follow the left subtree when its roots differ, else
// the right one, down to the leaf.
int64_t descend(const Digest* a, const Digest* b, size_t n, size_t base, int64_t* compared) {
  if (n == 1) return static_cast<int64_t>(base);
  size_t k = split(n);
  ++*compared;
  if (root_of(a, k) != root_of(b, k)) return descend(a, b, k, base, compared);
  return descend(a + k, b + k, n - k, base + k, compared);
}

}  // namespace

Digest merkle_root(const std::vector<Digest>& c) {
  if (c.empty()) return sha256("");  // RFC 9162: the hash of the empty string
  return root_of(c.data(), c.size());
}

std::vector<Digest> merkle_proof(const std::vector<Digest>& c, size_t index) {
  if (index >= c.size())
    throw Error("[merkle] index " + std::to_string(index) + " out of range for " + std::to_string(c.size()) + " leaves");
  std::vector<Digest> out;
  path(c.data(), c.size(), index, out);
  return out;
}

bool merkle_check(const Digest& root, size_t index, size_t count, const Digest& commitment,
                  const std::vector<Digest>& proof) {
  if (index >= count) return false;
  // RFC 9162 §2.1.3.2: rebuild the root from the leaf and its audit path.
  size_t fn = index, sn = count - 1;
  Digest r = leaf_hash(commitment);
  for (const Digest& p : proof) {
    if (sn == 0) return false;
    if ((fn & 1) || fn == sn) {
      r = node_hash(p, r);
      if (!(fn & 1))
        while (fn != 0 && !(fn & 1)) fn >>= 1, sn >>= 1;
    } else {
      r = node_hash(r, p);
    }
    fn >>= 1, sn >>= 1;
  }
  return sn == 0 && r == root;
}

int64_t first_difference(const std::vector<Digest>& a, const std::vector<Digest>& b, int64_t* compared) {
  if (a.size() != b.size())
    throw Error("[merkle] lists of " + std::to_string(a.size()) + " and " + std::to_string(b.size()) + " commitments");
  int64_t dummy = 0;
  if (!compared) compared = &dummy;
  *compared = 0;
  if (a.empty()) return -1;
  *compared = 1;
  if (merkle_root(a) == merkle_root(b)) return -1;
  return descend(a.data(), b.data(), a.size(), 0, compared);
}

}  // namespace maroon::verify
