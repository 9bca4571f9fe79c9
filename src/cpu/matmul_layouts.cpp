#include "cpu/matmul_layouts.h"

#include "cpu/keyed_store.h"

namespace maroon::cpu {

namespace {

// Bounded: a few dozen small layouts (at most kMaxOffsets offsets each, 128 KiB) cover a model's
// repeated products; larger products spend far longer in the kernel than building their lists.
constexpr size_t kEntries = 32;
constexpr size_t kMaxOffsets = size_t{1} << 14;

KeyedStore<MatmulLayout>& store() {
  // Never destroyed: a product may run during static destruction.
  static auto* s = new KeyedStore<MatmulLayout>(kEntries);
  return *s;
}

size_t offsets_in(const MatmulLayout& l) {
  return l.kA.size() + l.kB.size() + l.rowA.size() + l.colB.size() + l.rowC.size() + l.colC.size() +
         l.batchA.size() + l.batchB.size() + l.batchC.size();
}

}  // namespace

std::shared_ptr<const MatmulLayout> matmul_layout(const std::vector<int64_t>& key,
                                                  const std::function<MatmulLayout()>& make) {
  if (auto found = store().find(key)) return found;
  auto layout = std::make_shared<const MatmulLayout>(make());  // outside the lock: may be large
  if (offsets_in(*layout) <= kMaxOffsets) store().put(key, layout);
  return layout;
}

void clear_matmul_layouts() { store().clear(); }

int64_t matmul_layout_hits() { return store().hits(); }

}  // namespace maroon::cpu
