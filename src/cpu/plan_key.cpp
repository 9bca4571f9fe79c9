#include "cpu/plan_key.h"

#include <iterator>

namespace maroon::cpu {

namespace {

// The key's words, written through a pointer into room made per node: push_back's capacity
// check and the vector's end pointer, reloaded around every word, were about half of the key's
// ~2k instructions for a 64^2 product's eight nodes.
class KeyWriter {
 public:
  explicit KeyWriter(std::vector<int64_t>* key) : key_(key) {
    if (key_->size() < 256) key_->resize(256);  // grown once per thread (the key is reused)
    at_ = key_->data();
    end_ = at_ + key_->size();
  }
  // Room for at least n more words.
  void room(size_t n) {
    if (static_cast<size_t>(end_ - at_) >= n) return;
    const size_t used = static_cast<size_t>(at_ - key_->data());
    key_->resize(2 * (used + n));
    at_ = key_->data() + used;
    end_ = key_->data() + key_->size();
  }
  void put(int64_t w) { *at_++ = w; }
  void put_list(const std::vector<int64_t>& v) {
    *at_++ = static_cast<int64_t>(v.size());
    for (int64_t x : v) *at_++ = x;
  }
  // Drops the unwritten room: the key is exactly the words written.
  void finish() { key_->resize(static_cast<size_t>(at_ - key_->data())); }

 private:
  std::vector<int64_t>* key_;
  int64_t* at_;
  int64_t* end_;
};

}  // namespace

bool plan_key(const std::vector<Node*>& order, std::vector<int64_t>* key) {
  key->clear();
  if (order.empty() || order.size() > kPlanKeyMaxNodes) return false;
  // Leaves seen so far, numbered by first use: which slots share a leaf is part of the graph
  // (x * x reads one node twice; its consumer counts differ from x * y's).
  const Node* leaves[3 * kPlanKeyMaxNodes];
  size_t nleaves = 0;
  KeyWriter w(key);
  w.put(static_cast<int64_t>(order.size()));
  for (size_t i = 0; i < order.size(); ++i) {
    const Node& n = *order[i];
    size_t need = 6 + n.shape.size() + n.arg.ints.size() + 2 * n.arg.pairs.size();
    for (const NodePtr& s : n.src) need += 4 + (s->realized ? s->shape.size() : 0);
    w.room(need);
    w.put(static_cast<int64_t>(n.op) | static_cast<int64_t>(n.dtype) << 8 | static_cast<int64_t>(n.rnd) << 16 |
          static_cast<int64_t>(n.arg.dtype) << 24 | static_cast<int64_t>(n.arg.reduce_op) << 32 |
          static_cast<int64_t>(n.src.size()) << 40);
    w.put_list(n.shape);
    w.put_list(n.arg.ints);
    w.put(static_cast<int64_t>(n.arg.pairs.size()));
    for (const auto& [a, b] : n.arg.pairs) {
      w.put(a);
      w.put(b);
    }
    w.put(static_cast<int64_t>(n.arg.bits));
    for (const NodePtr& s : n.src) {
      // Handles on a source: one outside the schedule keeps it from being fused.
      w.put(s.use_count());
      if (!s->realized) {  // a step of this schedule: sources come first
        size_t j = 0;
        while (j < i && order[j] != s.get()) ++j;
        if (j == i) return false;  // not a schedule: plan() is left to decide as it finds it
        w.put(static_cast<int64_t>(j));
        continue;
      }
      size_t l = 0;
      while (l < nleaves && leaves[l] != s.get()) ++l;
      w.put(-1 - static_cast<int64_t>(l));
      if (l < nleaves) continue;
      if (nleaves == std::size(leaves)) return false;  // more leaves than any op's arity gives: plan afresh
      leaves[nleaves++] = s.get();
      w.put(static_cast<int64_t>(s->op) | static_cast<int64_t>(s->dtype) << 8);
      w.put_list(s->shape);
    }
  }
  w.finish();
  return true;
}

}  // namespace maroon::cpu
