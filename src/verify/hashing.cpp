// CpuShare and the hashing test hooks (hashing.h).
#include "verify/hashing.h"

#include <atomic>
#include <ctime>
#include <mutex>
#include <thread>

#if defined(__linux__)
#include <sched.h>
#endif

namespace maroon::verify {

int usable_cores() {
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
#endif
  const unsigned hc = std::thread::hardware_concurrency();
  return hc ? static_cast<int>(hc) : 1;
}

namespace {

int64_t process_cpu_ns() {
  timespec ts{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return -1;
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::mutex g_override_mu;
std::function<bool(int64_t)> g_override;

}  // namespace

bool CpuShare::short_of_cores() {
  bool no_clock = false;
  const std::optional<double> share = rate_.next([&] {
    const int64_t ns = process_cpu_ns();
    no_clock = ns < 0;
    return ns;
  });
  if (no_clock) return short_ = false;  // no clock: the pool, as where the process has its cores
  if (share) share_ = *share, short_ = share_ < cores_ - kShort;
  return short_;
}

bool BusyTime::busy() {
  if (const std::optional<double> r = rate_.next([&] { return ns_.load(std::memory_order_relaxed); })) busy_ = *r >= 0.5;
  return busy_;
}

void set_hashing_override(std::function<bool(int64_t)> to_thread) {
  std::lock_guard<std::mutex> g(g_override_mu);
  g_override = std::move(to_thread);
}

std::function<bool(int64_t)> hashing_override() {
  std::lock_guard<std::mutex> g(g_override_mu);
  return g_override;
}

namespace {
std::atomic<int> g_busy_override{-1};
}  // namespace

void set_hasher_busy_override(int busy) { g_busy_override.store(busy, std::memory_order_relaxed); }
int hasher_busy_override() { return g_busy_override.load(std::memory_order_relaxed); }

HashingCounts& hashing_counts() {
  static HashingCounts c;
  return c;
}

}  // namespace maroon::verify
