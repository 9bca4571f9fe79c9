#include "core/interrupt.h"

#include <atomic>
#include <chrono>

#include "maroon/interrupt.h"

namespace maroon {

namespace {

std::atomic<InterruptCheck> g_check{nullptr};
thread_local bool t_in_realize = false;
thread_local std::chrono::steady_clock::time_point t_last{};

// Often enough for Ctrl-C to feel immediate, rarely enough that polling (a clock read per task,
// and for Python taking the GIL) costs nothing measurable.
constexpr auto kPollEvery = std::chrono::milliseconds(5);

}  // namespace

void set_interrupt_check(InterruptCheck check) { g_check.store(check, std::memory_order_release); }

RealizeScope::RealizeScope() : prev_(t_in_realize) { t_in_realize = true; }
RealizeScope::~RealizeScope() { t_in_realize = prev_; }

void poll_interrupt() {
  if (!t_in_realize) return;
  InterruptCheck check = g_check.load(std::memory_order_acquire);
  if (!check) return;
  auto now = std::chrono::steady_clock::now();
  if (now - t_last < kPollEvery) return;
  t_last = now;
  check();
}

}  // namespace maroon
