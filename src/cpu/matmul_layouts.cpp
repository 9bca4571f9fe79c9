#include "cpu/matmul_layouts.h"

#include "cpu/keyed_store.h"

namespace maroon::cpu {

namespace {

// Bounded: a few dozen small layouts (at most kMaxSmall offsets each, 128 KiB) cover a model's
// repeated products. A convolution's layout lists every output position twice (32 images of
// 32 x 32: 65,536 offsets), so it was built again on every run of a model (with the zero-fill of
// its lists, ~3% of the ONNX CNN's run on one thread, on the calling thread while the others
// wait): a few of those are kept too, at most kMaxLarge offsets each (1 MiB), 8 MiB in all.
constexpr size_t kSmallEntries = 32, kLargeEntries = 8;
constexpr size_t kMaxSmall = size_t{1} << 14, kMaxLarge = size_t{1} << 17;

// Never destroyed: a product may run during static destruction.
KeyedStore<MatmulLayout>& small_store() {
  static auto* s = new KeyedStore<MatmulLayout>(kSmallEntries);
  return *s;
}
KeyedStore<MatmulLayout>& large_store() {
  static auto* s = new KeyedStore<MatmulLayout>(kLargeEntries);
  return *s;
}

size_t offsets_in(const MatmulLayout& l) {
  return l.kA.size() + l.kB.size() + l.rowA.size() + l.colB.size() + l.rowC.size() + l.colC.size() +
         l.batchA.size() + l.batchB.size() + l.batchC.size();
}

}  // namespace

std::shared_ptr<const MatmulLayout> matmul_layout(const std::vector<int64_t>& key,
                                                  const std::function<MatmulLayout()>& make) {
  if (auto found = small_store().find(key)) return found;
  if (auto found = large_store().find(key)) return found;
  auto layout = std::make_shared<const MatmulLayout>(make());  // outside the lock: may be large
  const size_t n = offsets_in(*layout);
  if (n <= kMaxSmall) small_store().put(key, layout);
  else if (n <= kMaxLarge) large_store().put(key, layout);
  return layout;
}

void clear_matmul_layouts() {
  small_store().clear();
  large_store().clear();
}

int64_t matmul_layout_hits() { return small_store().hits() + large_store().hits(); }

}  // namespace maroon::cpu
