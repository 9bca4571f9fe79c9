// Memory advice for loaded data sets (pages.h).
#include "data/pages.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace maroon::data {

std::vector<uint8_t> huge_page_buffer(size_t n) {
  std::vector<uint8_t> v;
  v.reserve(n);  // a large block comes fresh from mmap: no page of it is touched yet
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  uintptr_t begin = (reinterpret_cast<uintptr_t>(v.data()) + kHuge - 1) & ~(kHuge - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(v.data()) + n) & ~(kHuge - 1);
  // Advice only: where the kernel has no huge page to give, the pages are 4 KB as before.
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#endif
  v.resize(n);  // the first touch: the faults take huge pages where advised
  return v;
}

}  // namespace maroon::data
