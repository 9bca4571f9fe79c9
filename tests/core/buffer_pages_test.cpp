// Buffer memory (src/core/buffer.cpp): a fresh large block's pages are faulted in at once by
// MADV_POPULATE_WRITE, before any element is written (mincore: every page resident), instead of
// one trap per 4 KB page on first touch. Skipped where the kernel lacks it (before Linux 5.14).
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "core/graph.h"

namespace maroon {
namespace {

#if defined(__linux__)
// The share of the pages wholly inside [p, p + n) that are resident.
double resident_share(const uint8_t* p, size_t n) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t a = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const uintptr_t b = (reinterpret_cast<uintptr_t>(p) + n) / page * page;
  std::vector<unsigned char> v((b - a) / page);
  if (v.empty() || mincore(reinterpret_cast<void*>(a), b - a, v.data()) != 0) return -1;
  size_t in = 0;
  for (unsigned char c : v) in += c & 1;
  return static_cast<double>(in) / static_cast<double>(v.size());
}
#endif

TEST(BufferPages, FreshLargeBlocksArePopulated) {
#if !defined(__linux__)
  GTEST_SKIP() << "Linux only";
#else
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* probe = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(probe, MAP_FAILED);
  const bool have = madvise(probe, page, 23 /* MADV_POPULATE_WRITE */) == 0;
  munmap(probe, page);
  if (!have) GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE";
  // Sizes of their own (size classes no other test here uses): fresh blocks, not cached ones;
  // one under 2 MiB (the MLP's 1-1.6 MB states are such), one over.
  for (int64_t n : {int64_t{347'001}, int64_t{1'377'003}}) {
    Buffer b(DType::Float32, n);
    EXPECT_EQ(resident_share(b.bytes(), b.nbytes()), 1.0) << n << " floats";
  }
#endif
}

#if defined(__linux__)
// Whether the mapping holding address a carries MADV_HUGEPAGE ("hg" in /proc/self/smaps'
// VmFlags); nullopt when no mapping holds it or smaps cannot be read.
std::optional<bool> advised_huge(const void* a) {
  std::ifstream smaps("/proc/self/smaps");
  const uintptr_t x = reinterpret_cast<uintptr_t>(a);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR, &lo, &hi) == 2 && line.find(' ') > line.find('-')) {
      inside = lo <= x && x < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      std::istringstream flags(line.substr(8));
      std::string f;
      while (flags >> f)
        if (f == "hg") return true;
      return false;
    }
  }
  return std::nullopt;
}
#endif

// No block is advised for huge pages (buffer.cpp says why: on the project's VM, first touching
// advised blocks cost an MLP epoch ~15% and the CNN's first steps more): neither a 40 MB block
// (a beautiful_mnist activation at batch 512 is 26-38 MB) nor the 1-2 MB ones (the MLP's Adam
// states) that sessions 14-22 advised.
TEST(BufferPages, NoBlockIsAdvisedHugePages) {
#if !defined(__linux__)
  GTEST_SKIP() << "Linux only";
#else
  for (int64_t n : {int64_t{10'000'019}, int64_t{393'241}, int64_t{262'144}}) {
    Buffer b(DType::Float32, n);
    const auto hg = advised_huge(b.bytes() + b.nbytes() / 2);
    if (!hg) GTEST_SKIP() << "/proc/self/smaps unreadable";
    EXPECT_FALSE(*hg) << n << " floats: advised MADV_HUGEPAGE";
  }
#endif
}

}  // namespace
}  // namespace maroon
