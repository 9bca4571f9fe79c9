// Buffer memory: a small cache of freed blocks by size class, so that the buffers of one
// training step are the pages of the previous one instead of newly faulted ones.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "core/buffer_cache.h"
#include "core/checked.h"
#include "core/counters.h"
#include "core/graph.h"
#include "cpu/threads.h"
#include "maroon/backend.h"
#include "maroon/tensor.h"

namespace maroon {

namespace {

constexpr size_t kAlign = 64;
constexpr size_t kMaxCached = size_t{2} << 30;  // bytes kept for reuse at most

// No huge-page advice (MADV_HUGEPAGE), for blocks or for the gemm's packing scratch
// (cpu/gemm.h). Sessions 14-22 advised blocks of 1-8 MB and rounded 1-2 MB blocks up to a whole,
// aligned 2 MiB page: the MNIST MLP's Adam kernels then took ~0.8x as long under load (fewer TLB
// misses under the VM's nested paging). On 2026-12-05 the same VM spent 22% of an idle
// one-thread MLP epoch in clear_page_erms, zeroing huge pages as they were first touched (by
// populate() below and by memsets), and 0.2% without the advice (perf). Without it: MLP epoch,
// one thread, 2.80-2.87 s against 2.95-3.36 (4 alternating rounds); two threads 2.35-2.40
// against 2.58-3.12; beside `stress-ng --cpu 1` 3.67-3.87 against 4.47-4.65; the CNN's first
// three steps at batch 512, two threads, fused, 1.08-1.15 s against 1.46-2.43 (scratch advice
// off too). Which pages back a buffer never changes a bit of it.

// Size classes: 8 per power of two (at most 12.5% slack), 64-byte granularity below that.
size_t size_class(size_t bytes) {
  if (bytes <= 4096) return (bytes + 63) / 64 * 64;
  size_t top = size_t{1} << (63 - __builtin_clzll(bytes));
  size_t step = top / 8;
  return (bytes + step - 1) / step * step;
}

// A fresh block of kPopulateFrom bytes or more is faulted in by one madvise(MADV_POPULATE_WRITE)
// (Linux 5.14) instead of one trap per 4 KB page on first touch: on the 2-vCPU VM a trap costs
// ~11 us, and maroon train's first steps took ~8.5K of them (~90 ms) while the cache grew to its
// working set of about three 8 MB states. Every kernel writes its whole output, so the pages
// would all be touched anyway. On an older kernel the advice fails and the pages fault as
// before. A hint: failure changes nothing, and when pages are faulted in never changes a bit.
#if defined(__linux__) && !defined(MADV_POPULATE_WRITE)
#define MADV_POPULATE_WRITE 23
#endif
constexpr size_t kPopulateFrom = size_t{256} << 10;
constexpr size_t kPiece = size_t{2} << 20;  // populated by one pool task
std::atomic<uint64_t> g_populate_pieces{0};
// The kernel zeroes each page it populates, and on the 2-vCPU VM (where the host backs the
// guest's memory on first touch too) that ran at ~0.5 GB/s: the CNN's first step takes ~690 MB
// fresh, ~1.2 s on the calling thread while the pool's workers waited. A block of several
// pieces is populated by the pool a piece a task, so every thread zeroes pages. Which thread
// faults a page in never changes its contents (zeros, then the kernel's output).
void populate(uint8_t* p, size_t bytes) {
#if defined(__linux__)
  if (bytes < kPopulateFrom) return;
  const uintptr_t a = (reinterpret_cast<uintptr_t>(p) + 4095) / 4096 * 4096;
  const uintptr_t b = (reinterpret_cast<uintptr_t>(p) + bytes) / 4096 * 4096;
  if (b <= a) return;
  const int64_t pieces = static_cast<int64_t>((b - a + kPiece - 1) / kPiece);
  if (pieces < 2 || num_threads() < 2) {
    ::madvise(reinterpret_cast<void*>(a), b - a, MADV_POPULATE_WRITE);
    return;
  }
  g_populate_pieces.fetch_add(static_cast<uint64_t>(pieces), std::memory_order_relaxed);
  cpu::parallel_for(
      pieces,
      [&](int64_t i) {
        const uintptr_t lo = a + static_cast<uintptr_t>(i) * kPiece, hi = std::min<uintptr_t>(lo + kPiece, b);
        ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_POPULATE_WRITE);
      },
      Round::NearestEven);
#else
  (void)p, (void)bytes;
#endif
}

}  // namespace

namespace {

class Cache {
 public:
  static Cache& get() {
    static Cache* c = new Cache;  // never destroyed: buffers may outlive static destructors
    return *c;
  }
  uint8_t* take(size_t cls) {
    {
      std::lock_guard<std::mutex> g(mu_);
      auto it = free_.find(cls);
      if (it != free_.end() && !it->second.empty()) {
        uint8_t* p = it->second.back();
        it->second.pop_back();
        cached_ -= cls;
        return p;
      }
    }
    uint8_t* p = static_cast<uint8_t*>(::operator new(cls, std::align_val_t{kAlign}));
    try {
      populate(p, cls);  // the pool's region polls the interrupt check, which may throw
    } catch (...) {
      ::operator delete(p, std::align_val_t{kAlign});
      throw;
    }
    fresh_.fetch_add(cls, std::memory_order_relaxed);
    return p;
  }
  void give(uint8_t* p, size_t cls) {
    {
      std::lock_guard<std::mutex> g(mu_);
      if (cached_ + cls <= kMaxCached) {
        free_[cls].push_back(p);
        cached_ += cls;
        return;
      }
    }
    ::operator delete(p, std::align_val_t{kAlign});
  }
  uint64_t fresh() const { return fresh_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> fresh_{0};
  std::mutex mu_;
  std::map<size_t, std::vector<uint8_t*>> free_;
  size_t cached_ = 0;
};

// The op named in allocation errors: the node being executed, or "realize".
std::string alloc_op() {
  const Node* n = executing_node();
  if (!n) return "realize";
  std::string s(op_name(n->op));
  for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return s;
}

// The bytes of a buffer of n elements plus its slack, or MemoryError: over the cap, or more than
// this machine's size_t can address (32-bit hosts).
// The message strings are built only for an error: every kernel output comes through here, and
// building them measured several mallocs per small op (a 32x32 matmul's call is ~8 us).
size_t checked_capacity(DType d, int64_t n) {
  const uint64_t item = itemsize(d);
  const uint64_t bytes = static_cast<uint64_t>(n) * item;  // the shape was checked: no overflow
  if (alloc_fits(static_cast<uint64_t>(n), item) && bytes <= SIZE_MAX / 2)  // realize reads the cap once
    return size_class(static_cast<size_t>(bytes) + kAlign);
  std::string what = std::to_string(n) + " elements of " + std::string(dtype_name(d));
  if (const Node* node = executing_node()) what += ", shape " + shape_str(node->shape);
  check_alloc(alloc_op(), static_cast<uint64_t>(n), itemsize(d), what);
  throw MemoryError("[" + alloc_op() + "] cannot allocate " + std::to_string(bytes) + " bytes (" + what +
                    "): more than this machine can address");
}

std::atomic<bool> g_poison{false};  // set_buffer_poison

// Live buffer bytes and their high-water mark (buffer_peak_bytes()).
std::atomic<uint64_t> g_live{0}, g_peak{0};

void count_live(size_t bytes) {
  const uint64_t now = g_live.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  uint64_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

}  // namespace

uint64_t buffer_fresh_bytes() { return Cache::get().fresh(); }
uint64_t buffer_populate_pieces() { return g_populate_pieces.load(std::memory_order_relaxed); }
uint64_t buffer_peak_bytes() { return g_peak.load(std::memory_order_relaxed); }
void set_buffer_poison(bool on) { g_poison.store(on, std::memory_order_relaxed); }
void reset_buffer_peak() { g_peak.store(g_live.load(std::memory_order_relaxed), std::memory_order_relaxed); }

Buffer::Buffer(DType d, int64_t n) : dtype(d), count(n), capacity_(checked_capacity(d, n)) {
  try {
    mem_ = Cache::get().take(capacity_);
  } catch (const std::bad_alloc&) {
    throw MemoryError("[" + alloc_op() + "] out of memory allocating " + std::to_string(capacity_) + " bytes (" +
                      std::to_string(n) + " elements of " + std::string(dtype_name(d)) + ")");
  }
  count_buffer_bytes(static_cast<int64_t>(capacity_));  // GlobalCounters.mem_used
  count_live(capacity_);
  if (g_poison.load(std::memory_order_relaxed)) std::memset(mem_, 0xA5, capacity_);
}

Buffer::~Buffer() {
  count_buffer_bytes(-static_cast<int64_t>(capacity_));
  g_live.fetch_sub(capacity_, std::memory_order_relaxed);
  Cache::get().give(mem_, capacity_);
}

}  // namespace maroon
