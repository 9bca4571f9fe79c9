// The buffer cache's fresh blocks (src/core/buffer.cpp): a block of several 2 MiB pieces is
// faulted in by the thread pool, one piece a task, before any kernel writes it. Each test checks the
// pool path was taken (the piece counter) and that every page of the block is resident before
// anything touched it (mincore): a piece cut wrong leaves pages out.
#include <gtest/gtest.h>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include <memory>
#include <vector>

#include "core/buffer_cache.h"
#include "core/graph.h"
#include "maroon/backend.h"

namespace maroon {
namespace {

#if defined(__linux__)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

bool kernel_populates() {
  const size_t len = 1 << 16;
  void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  const bool ok = ::madvise(p, len, MADV_POPULATE_WRITE) == 0;
  ::munmap(p, len);
  return ok;
}

// Pages of [p, p + bytes) (whole pages only) not resident.
size_t missing_pages(const uint8_t* p, size_t bytes) {
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t a = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const uintptr_t b = (reinterpret_cast<uintptr_t>(p) + bytes) / page * page;
  std::vector<unsigned char> in((b - a) / page);
  EXPECT_EQ(::mincore(reinterpret_cast<void*>(a), b - a, in.data()), 0);
  size_t missing = 0;
  for (unsigned char c : in) missing += (c & 1) == 0;
  return missing;
}

// A fresh buffer of `n` floats: buffers of its size class are held until one comes fresh from the
// allocator (an earlier test may have left blocks of that class in the cache).
std::vector<std::unique_ptr<Buffer>> fresh_buffer(int64_t n) {
  std::vector<std::unique_ptr<Buffer>> held;
  for (int i = 0; i < 64; ++i) {
    const uint64_t before = buffer_fresh_bytes();
    held.push_back(std::make_unique<Buffer>(DType::Float32, n));
    if (buffer_fresh_bytes() != before) return held;
  }
  ADD_FAILURE() << "no fresh block after 64 buffers";
  return held;
}

void check_populated(int threads, bool by_pool) {
  if (!kernel_populates()) GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE (Linux < 5.14)";
  const int saved = num_threads();
  set_num_threads(threads);
  // 40 MiB less the cache's 64 bytes of slack: the buffer fills its size class, 20 pieces.
  const int64_t n = ((int64_t{40} << 20) - 64) / 4;
  const uint64_t pieces = buffer_populate_pieces();
  std::vector<std::unique_ptr<Buffer>> held = fresh_buffer(n);
  set_num_threads(saved);
  ASSERT_FALSE(held.empty());
  const Buffer& b = *held.back();
  EXPECT_EQ(missing_pages(b.bytes(), b.nbytes()), 0u);
  const uint64_t taken = buffer_populate_pieces() - pieces;
  if (by_pool) {
    EXPECT_GE(taken, (b.nbytes() + (size_t{2} << 20) - 1) / (size_t{2} << 20));
  } else {
    EXPECT_EQ(taken, 0u);
  }
}

TEST(BufferPopulate, FreshBlockIsFaultedInByThePool) { check_populated(2, true); }
TEST(BufferPopulate, FreshBlockIsFaultedInByThreeThreads) { check_populated(3, true); }
TEST(BufferPopulate, FreshBlockIsFaultedInByOneThread) { check_populated(1, false); }
#endif

}  // namespace
}  // namespace maroon
