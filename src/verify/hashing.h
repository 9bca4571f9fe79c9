// Who hashes Run's committed states where Auto may choose either the pool's idle time or a thread
// of its own (run.cpp): the process's CPU share, and a test hook that forces the choice.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>

namespace maroon::verify {

// The cores this process may run on.
int usable_cores();

// A count's growth per wall nanosecond (CPU or busy nanoseconds per nanosecond: cores), window
// by window: what CpuShare and BusyTime both measure.
class WindowRate {
 public:
  static constexpr auto kWindow = std::chrono::milliseconds(50);
  // Once kWindow or more has passed since the last reading: the growth of `count` over that
  // window's wall time, and a new window starts at `count`. The first reading only starts a
  // window. nullopt while a window runs (`count` is not called then), and when `count` fails
  // (below 0).
  template <class F>
  std::optional<double> next(F count) {
    const auto now = std::chrono::steady_clock::now();
    if (started_ && now - wall0_ < kWindow) return std::nullopt;
    const int64_t c = count();
    if (c < 0) return std::nullopt;
    std::optional<double> rate;
    if (started_)
      rate = static_cast<double>(c - c0_) /
             static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(now - wall0_).count());
    started_ = true, wall0_ = now, c0_ = c;
    return rate;
  }

 private:
  bool started_ = false;
  std::chrono::steady_clock::time_point wall0_;
  int64_t c0_ = 0;
};

// Whether a competitor takes part of this process's cores: the process's CPU time over the wall
// time of the last window (>= kWindow) against `cores`. Why this signal: hashing in the pool's
// idle time keeps the process at num_threads() runnable threads, which is fastest when it has the
// cores to itself (a third thread on two cores preempts a pool worker inside a region), but next
// to a busy process the OS shares the cores per runnable thread, and a hashing thread of its own
// wins the process a larger share (2 of 3 runnable threads on 2 cores instead of 3 of 4, measured
// in docs/performance/threads.md). The pool's workers spin between regions, so a process alone gets
// about `cores` seconds a second whichever thread hashes; one beside a busy process clearly less.
class CpuShare {
 public:
  static constexpr auto kWindow = WindowRate::kWindow;
  // The process is "short" when it got less than cores - kShort cores in the last window.
  static constexpr double kShort = 0.4;
  explicit CpuShare(int cores) : cores_(cores) {}
  // Starts a window on the first call; then once a window has passed: true when the process was
  // short of cores in it (and a new window starts), else the last answer.
  bool short_of_cores();
  double last_share() const { return share_; }

 private:
  int cores_;
  bool short_ = false;
  double share_ = 0;
  WindowRate rate_;
};

// Whether a thread was busy for at least half of the last window (>= CpuShare::kWindow): the
// thread adds the time of each piece of work as it ends (add(), from any thread), one other
// thread asks (busy()). Run holds a pool thread out only while its hashing thread is busy.
class BusyTime {
 public:
  void add(std::chrono::nanoseconds t) { ns_.fetch_add(t.count(), std::memory_order_relaxed); }
  // Starts a window on the first call (false); then once a window has passed: whether the work
  // added in it took half its wall time or more (and a new window starts), else the last answer.
  bool busy();

 private:
  std::atomic<int64_t> ns_{0};
  bool busy_ = false;
  WindowRate rate_;
};

// Tests only: decides, per committed step, that a thread hashes it (true) or the pool's idle
// time (false) where Auto chooses per state, in place of CpuShare; with it set, a run that
// hashes in the pool's idle time (Pool too, so that tests switch on a machine of any size) has
// the thread as well. Read at Run::begin(); nullptr restores CpuShare.
void set_hashing_override(std::function<bool(int64_t step)> to_thread);
std::function<bool(int64_t step)> hashing_override();

// Tests only: whether Run takes the hashing thread for busy (1), idle (0) or measures it (-1, the
// default) where it chooses to hold a pool thread out of the step's regions (run.cpp, reserve).
void set_hasher_busy_override(int busy);
int hasher_busy_override();

// Tests only: pieces of state hashing each kind of thread ran, and the states handed to the
// thread where Auto chooses per state, since the process started.
struct HashingCounts {
  std::atomic<int64_t> thread{0}, idle{0}, loop{0};
  std::atomic<int64_t> to_thread{0};
  std::atomic<int64_t> paired{0};  // states hashed two at a time in lockstep (PairHasher)
};
HashingCounts& hashing_counts();

}  // namespace maroon::verify
