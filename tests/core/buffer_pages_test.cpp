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
  // one below a huge page (the MLP's 1-1.6 MB states), one above (advised for huge pages).
  for (int64_t n : {int64_t{347'001}, int64_t{1'377'003}}) {
    Buffer b(DType::Float32, n);
    EXPECT_EQ(resident_share(b.bytes(), b.nbytes()), 1.0) << n << " floats";
  }
#endif
}

// A block over half a huge page and under one (the MNIST MLP's 1.0-1.6 MB Adam states and
// weights) takes a whole 2 MiB page, starting on its boundary, so that it can be one huge page
// (buffer.cpp: size_class, align). Above a huge page, blocks started on one already.
TEST(BufferPages, BlocksOverHalfAHugePageStartOnOne) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  for (int64_t n : {int64_t{262'144}, int64_t{401'408}, int64_t{524'287}, int64_t{600'001}}) {
    Buffer b(DType::Float32, n);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.bytes()) % kHuge, 0u) << n << " floats";
  }
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

// Huge pages are asked for blocks of at most 8 MB only (buffer.cpp, kHugeAdviseUpTo): making a
// huge page can mean compacting memory, which cost the CNN's first steps more than it saved. A
// 40 MB block (a beautiful_mnist activation at batch 512 is 26-38 MB) must stay unadvised; a
// 1.5 MB block (an MLP Adam state) advised where the kernel takes the advice at all.
TEST(BufferPages, OnlyBlocksUpToEightMegabytesAreAdvisedHugePages) {
#if !defined(__linux__)
  GTEST_SKIP() << "Linux only";
#else
  Buffer large(DType::Float32, 10'000'019);  // ~40 MB, a size class of its own
  const auto big = advised_huge(large.bytes() + large.nbytes() / 2);
  if (!big) GTEST_SKIP() << "/proc/self/smaps unreadable";
  EXPECT_FALSE(*big) << "a 40 MB block was advised MADV_HUGEPAGE";

  void* probe = mmap(nullptr, size_t{4} << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(probe, MAP_FAILED);
  const bool takes = madvise(probe, size_t{4} << 20, MADV_HUGEPAGE) == 0;
  munmap(probe, size_t{4} << 20);
  if (!takes) GTEST_SKIP() << "this kernel refuses MADV_HUGEPAGE";
  Buffer small(DType::Float32, 393'241);  // ~1.5 MB: the 2 MiB class, one aligned huge page
  const auto sm = advised_huge(small.bytes());
  ASSERT_TRUE(sm.has_value());
  EXPECT_TRUE(*sm) << "a 1.5 MB block was not advised MADV_HUGEPAGE";
#endif
}

}  // namespace
}  // namespace maroon
