// Maps and sets keyed by node for the per-call walks (schedule, planning, kernel programs): a
// flat list searched linearly while small, a hash table beyond. A small op's graph has a handful
// of nodes, and hashing them (bucket arrays allocated and freed per call) was a measurable part
// of its call. Lookups give the same answers either way; nothing iterates these in hash order.
#pragma once
#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

namespace maroon {

struct Node;

template <class V>
class NodeMap {
 public:
  V* find(const Node* n) {
    if (!big_.empty()) {
      auto it = big_.find(n);
      return it == big_.end() ? nullptr : &it->second;
    }
    for (size_t i = 0; i < ninline_; ++i)
      if (inline_[i].first == n) return &inline_[i].second;
    for (auto& [k, v] : small_)
      if (k == n) return &v;
    return nullptr;
  }
  const V* find(const Node* n) const { return const_cast<NodeMap*>(this)->find(n); }
  bool contains(const Node* n) const { return find(n) != nullptr; }
  // The value for n, default-constructed if new. Valid until the next insertion.
  V& operator[](const Node* n) { return *emplace(n, V{}).first; }
  // Inserts (n, v) unless n is present; the value for n, and whether it was inserted.
  std::pair<V*, bool> emplace(const Node* n, V v) {
    if (V* have = find(n)) return {have, false};
    if (!big_.empty()) return {&big_.emplace(n, std::move(v)).first->second, true};
    if (ninline_ < kInline) {
      inline_[ninline_] = {n, std::move(v)};
      return {&inline_[ninline_++].second, true};
    }
    small_.emplace_back(n, std::move(v));
    if (ninline_ + small_.size() <= kSmall) return {&small_.back().second, true};
    big_.reserve((ninline_ + small_.size()) * 2);
    for (size_t i = 0; i < ninline_; ++i) big_.emplace(inline_[i].first, std::move(inline_[i].second));
    for (auto& [k, x] : small_) big_.emplace(k, std::move(x));
    ninline_ = 0;
    small_.clear();
    return {&big_.at(n), true};
  }

 private:
  // The first entries live in the map itself: most per-call walks meet fewer than kInline nodes,
  // and growing a vector for them was several malloc/free pairs per small op.
  static constexpr size_t kInline = 8;
  static constexpr size_t kSmall = 32;
  std::pair<const Node*, V> inline_[kInline];  // value-initialized by pair()
  size_t ninline_ = 0;
  std::vector<std::pair<const Node*, V>> small_;
  std::unordered_map<const Node*, V> big_;
};

// The nodes a walk has met.
class NodeSet {
 public:
  // Whether n was not yet in the set (and is now).
  bool insert(const Node* n) { return map_.emplace(n, true).second; }
  bool contains(const Node* n) const { return map_.contains(n); }

 private:
  NodeMap<bool> map_;
};

}  // namespace maroon
