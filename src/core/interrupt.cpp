#include "core/interrupt.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>

#include "maroon/interrupt.h"

namespace maroon {

namespace {

std::atomic<InterruptCheck> g_check{nullptr};
thread_local bool t_in_realize = false;
thread_local int64_t t_last_ns = 0;

// Often enough for Ctrl-C to feel immediate, rarely enough that polling (a clock read per task,
// and for Python taking the GIL) costs nothing measurable.
constexpr int64_t kPollEveryNs = 5'000'000;

// A monotonic time in ns, as cheap as the system has it. Polls come once per kernel and per
// task: on a KVM guest (kvm-clock) steady_clock reads took ~70 ns each, ~5% of a 16-float op from
// Python; Linux's coarse clock (the last tick, a few ms of resolution, enough for a 5 ms poll) is
// a read of shared memory, ~4 ns.
int64_t now_ns() {
#if defined(__linux__) && defined(CLOCK_MONOTONIC_COARSE)
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);  // cannot fail for this clock on Linux >= 2.6.32
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
#else
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
#endif
}

}  // namespace

void set_interrupt_check(InterruptCheck check) { g_check.store(check, std::memory_order_release); }

RealizeScope::RealizeScope() : prev_(t_in_realize) { t_in_realize = true; }
RealizeScope::~RealizeScope() { t_in_realize = prev_; }

void poll_interrupt() {
  if (!t_in_realize) return;
  InterruptCheck check = g_check.load(std::memory_order_acquire);
  if (!check) return;
  const int64_t now = now_ns();
  if (now - t_last_ns < kPollEveryNs) return;
  t_last_ns = now;
  check();
}

}  // namespace maroon
