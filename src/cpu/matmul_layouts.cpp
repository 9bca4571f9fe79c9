#include "cpu/matmul_layouts.h"

#include <mutex>

namespace maroon::cpu {

namespace {

// Bounded: a few dozen small layouts (at most kMaxOffsets offsets each, 128 KiB) cover a model's
// repeated products; larger products spend far longer in the kernel than building their lists.
constexpr size_t kEntries = 32;
constexpr size_t kMaxOffsets = size_t{1} << 14;

struct Entry {
  uint64_t hash = 0;
  std::vector<int64_t> key;
  std::shared_ptr<const MatmulLayout> layout;
};

struct Store {
  std::mutex m;
  std::vector<Entry> entries;  // filled up to kEntries, then replaced oldest first
  size_t next = 0;
  int64_t hits = 0;
};

Store& store() {
  static Store* s = new Store;  // never destroyed: a product may run during static destruction
  return *s;
}

uint64_t hash_of(const std::vector<int64_t>& key) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the words
  for (int64_t v : key) h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull;
  return h;
}

size_t offsets_in(const MatmulLayout& l) {
  return l.kA.size() + l.kB.size() + l.rowA.size() + l.colB.size() + l.rowC.size() + l.colC.size() +
         l.batchA.size() + l.batchB.size() + l.batchC.size();
}

}  // namespace

std::shared_ptr<const MatmulLayout> matmul_layout(const std::vector<int64_t>& key,
                                                  const std::function<MatmulLayout()>& make) {
  const uint64_t h = hash_of(key);
  Store& s = store();
  {
    std::lock_guard<std::mutex> lock(s.m);
    for (const Entry& e : s.entries)
      if (e.hash == h && e.key == key) {  // the whole key compared: a hash collision never reuses
        ++s.hits;
        return e.layout;
      }
  }
  auto layout = std::make_shared<const MatmulLayout>(make());  // outside the lock: may be large
  if (offsets_in(*layout) > kMaxOffsets) return layout;
  std::lock_guard<std::mutex> lock(s.m);
  Entry e{h, key, layout};
  if (s.entries.size() < kEntries) s.entries.push_back(std::move(e));
  else s.entries[s.next++ % kEntries] = std::move(e);
  return layout;
}

void clear_matmul_layouts() {
  Store& s = store();
  std::lock_guard<std::mutex> lock(s.m);
  s.entries.clear();
  s.next = 0;
  s.hits = 0;
}

int64_t matmul_layout_hits() {
  Store& s = store();
  std::lock_guard<std::mutex> lock(s.m);
  return s.hits;
}

}  // namespace maroon::cpu
