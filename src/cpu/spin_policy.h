// How long a pool worker spins for the next region before it sleeps (threads.cpp).
//
// Why two lengths: on a machine the process has to itself, a worker that sleeps in a serial gap
// of 0.3-1 ms is woken by the next region with a futex (30-140 us here) and that region then runs
// at one thread's speed; a 1 ms spin removed those slow runs (0 of 20 two-thread ONNX CNN runs
// against 5-7 of 20 with 100 us, docs/performance/threads.md). Beside a busy process the same
// 1 ms spin takes the core from the thread that would make the next region (the MLP epoch on two
// threads beside `stress-ng --cpu 1`: 5.3-5.8 s against 3.7-4.2 s). So a worker spins long only
// while nothing else has wanted its core lately.
//
// The signal: the OS preempting the worker (an involuntary context switch, getrusage's
// ru_nivcsw for the thread). It is the worker's own, costs one system call, is read only when the
// short spin has run out (a serial gap, not per region), and is there from the process's first
// second preemption: no window of CPU time has to pass first. Two preemptions within kHold make
// the spin short for kHold; a lone process sees almost none (kernel threads now and then).
#pragma once

#include <chrono>
#include <cstdint>

namespace maroon::cpu {

class SpinPolicy {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr auto kShort = std::chrono::microseconds(100);
  static constexpr auto kLong = std::chrono::microseconds(1000);
  static constexpr auto kHold = std::chrono::milliseconds(200);

  // Reads the calling thread's count (thread_preemptions) now and at each spin_long.
  SpinPolicy() : seen_(thread_preemptions()) {}

  // Called once the short spin has run out, at `now`: whether to go on spinning to kLong.
  bool spin_long(Clock::time_point now);

  // This thread's involuntary context switches so far, or -1 where the OS cannot tell (the spin
  // then stays short, the behaviour before this policy); the test hook's count if one is set.
  static int64_t thread_preemptions();
  // Tests only: thread_preemptions() returns `fake()` instead, on every thread (nullptr: the
  // OS's count again). A policy built before sees one change of count.
  static void set_fake_preemptions(int64_t (*fake)());

 private:
  int64_t seen_;
  bool preempted_ = false;  // seen once: last_preempted_ is set
  Clock::time_point contended_until_{}, last_preempted_{};
};

}  // namespace maroon::cpu
