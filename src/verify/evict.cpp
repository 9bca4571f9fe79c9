// Why Run's background hasher evicts each committed state from the caches once it has hashed it.
//
// A committed state's buffers go back to the buffer cache (src/core/buffer.cpp) a step later, and
// the training loop writes them again as new tensors. When the hasher, on another core, has read
// them, its core's caches still hold those lines: every store of the loop to them then has to
// take the line from (invalidate it in) the other core first. On the 2-vCPU EPYC these figures
// come from, the two vCPUs share no cache (a line goes there and back in ~420 ns) and those
// stores stalled the loop's elementwise kernels (perf: MulF32, TileEval's stack pushes waiting on
// a full store buffer) for 14-24% of the MNIST MLP's step; a neighbour hashing 8 MB of its own
// cost the step nothing. Flushing the lines the hasher has read leaves them in memory only, so a
// later store misses to memory like a fresh buffer's, without asking another core: 0-5% of the
// step (docs/verify.md §11). Only cache state changes: the bytes, and so the commitments, do not.
#include "verify/evict.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace maroon::verify {

#if defined(__x86_64__)

namespace {

constexpr size_t kEvictLine = 64;  // x86-64's cache line

bool have_clflushopt() {
  static const bool yes = [] {
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    return (b & (1u << 23)) != 0;  // CPUID.(EAX=7,ECX=0):EBX.CLFLUSHOPT[bit 23]
  }();
  return yes;
}

// CLFLUSHOPT flushes lines in parallel; CLFLUSH (SSE2, every x86-64) one after another.
__attribute__((target("clflushopt"))) void flush_lines_opt(const uint8_t* p, const uint8_t* end) {
  for (; p < end; p += kEvictLine) _mm_clflushopt(const_cast<uint8_t*>(p));
}
void flush_lines(const uint8_t* p, const uint8_t* end) {
  for (; p < end; p += kEvictLine) _mm_clflush(p);
}

}  // namespace

void evict_from_caches(const uint8_t* p, size_t n) {
  if (n == 0) return;
  const uint8_t* first = p - reinterpret_cast<uintptr_t>(p) % kEvictLine;  // the line holding p
  (have_clflushopt() ? flush_lines_opt : flush_lines)(first, p + n);
}

#else

void evict_from_caches(const uint8_t*, size_t) {}

#endif

}  // namespace maroon::verify
