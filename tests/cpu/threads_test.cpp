// The thread pool (src/cpu/threads.cpp): every task of every region runs exactly once, in the
// region's rounding mode with IEEE defaults, and no worker touches a region after it returns,
// however the regions follow each other (back to back, with pauses that let workers fall
// asleep, while another thread keeps a core busy).
#include <gtest/gtest.h>

#include <atomic>
#if defined(__linux__)
#include <sched.h>
#endif
#include <cfenv>
#include <chrono>
#include <thread>
#include <vector>

#include "cpu/spin_policy.h"
#include "cpu/threads.h"
#include "maroon/backend.h"

namespace maroon {
namespace {

struct ThreadsGuard {
  int saved = num_threads();
  ~ThreadsGuard() { set_num_threads(saved); }
};

// Runs `regions` regions of 1..9 tasks; each task records its rounding mode in its own slot of
// a vector that lives only for the region (a late worker writing into it after the region
// returned would show as a count above 1 in the next region's fresh vector under ASan/TSan,
// and as a crash or wrong count here).
void run_regions(int threads, int regions, int pause_every) {
  set_num_threads(threads);
  static const int modes[] = {FE_TONEAREST, FE_TOWARDZERO, FE_UPWARD, FE_DOWNWARD};
  for (int i = 0; i < regions; ++i) {
    int64_t n = 1 + i % 9;
    Round r = static_cast<Round>(i % 4);
    std::vector<std::atomic<int>> runs(n);
    std::vector<int> mode(n, -1);
    cpu::parallel_for(
        n,
        [&](int64_t t) {
          runs[t].fetch_add(1);
          mode[t] = std::fegetround();
        },
        r);
    for (int64_t t = 0; t < n; ++t) {
      ASSERT_EQ(runs[t].load(), 1) << "region " << i << " task " << t;
      ASSERT_EQ(mode[t], modes[i % 4]) << "region " << i << " task " << t;
    }
    // Past even the workers' long spin (cpu/spin_policy.h), so that they block and are woken.
    if (pause_every && i % pause_every == 0) std::this_thread::sleep_for(std::chrono::microseconds(1500));
  }
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);  // the caller's mode comes back
}

TEST(ThreadPool, EveryTaskOnceBackToBack) {
  ThreadsGuard g;
  for (int threads : {1, 2, 3, 5}) run_regions(threads, 3000, 0);
}

TEST(ThreadPool, EveryTaskOnceWithSleepingWorkers) {
  ThreadsGuard g;
  run_regions(3, 400, 2);  // pauses past the workers' spin, so they block and are woken
}

TEST(ThreadPool, EveryTaskOnceBesideABusyThread) {
  ThreadsGuard g;
  std::atomic<bool> stop{false};
  std::thread busy([&] {
    volatile uint64_t x = 0;
    while (!stop.load(std::memory_order_relaxed)) x = x + 1;
  });
  run_regions(2, 3000, 0);
  run_regions(3, 200, 3);
  stop = true;
  busy.join();
}

// Each thread first runs its own range of a region's tasks, then steals from the others' (the
// caller's range is the lowest). Task 0 waits until every other task has run: whoever runs it
// blocks, so the other threads must take the rest of its range as well as their own. A pool
// without stealing would hang here; the deadline turns that into a failure.
TEST(ThreadPool, TasksOfABlockedThreadsRangeAreStolen) {
  ThreadsGuard g;
  for (int threads : {2, 3}) {
    set_num_threads(threads);
    for (int64_t n : {4, 9, 64}) {
      std::vector<std::atomic<int>> runs(n);
      std::atomic<int64_t> others{0};
      bool timed_out = false;
      cpu::parallel_for(
          n,
          [&](int64_t t) {
            if (t == 0) {
              const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
              while (others.load() < n - 1 && !timed_out) timed_out = std::chrono::steady_clock::now() > deadline;
            } else {
              others.fetch_add(1);
            }
            runs[t].fetch_add(1);
          },
          Round::NearestEven);
      ASSERT_FALSE(timed_out) << threads << " threads, " << n << " tasks: the blocked range was not stolen";
      for (int64_t t = 0; t < n; ++t) ASSERT_EQ(runs[t].load(), 1) << threads << " threads, task " << t;
    }
  }
}

// A thread held out (cpu::reserve_threads, Run's hashing thread beside a busy process): with 2
// threads every task of a region runs on the caller; with 3 two threads still share a region
// (task 0 blocks until another thread has run the rest: one thread alone would time out).
TEST(ThreadPool, AReservedThreadSitsOutRegions) {
  ThreadsGuard g;
  auto slow_region = [](int64_t n) {  // the threads that ran n tasks of ~100 us each
    std::vector<std::thread::id> ran(n);
    cpu::parallel_for(
        n,
        [&](int64_t t) {
          const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(100);
          while (std::chrono::steady_clock::now() < until) {
          }
          ran[t] = std::this_thread::get_id();
        },
        Round::NearestEven);
    return ran;
  };
  set_num_threads(2);
  cpu::reserve_threads(1);
  EXPECT_EQ(cpu::reserved_threads(), 1);
  for (int i = 0; i < 20; ++i)
    for (std::thread::id id : slow_region(32)) ASSERT_EQ(id, std::this_thread::get_id()) << "region " << i;
  set_num_threads(3);
  std::atomic<int64_t> others{0};
  bool timed_out = false;
  cpu::parallel_for(
      8,
      [&](int64_t t) {
        if (t != 0) return void(others.fetch_add(1));
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (others.load() < 7 && !timed_out) timed_out = std::chrono::steady_clock::now() > deadline;
      },
      Round::NearestEven);
  cpu::reserve_threads(-1);
  EXPECT_FALSE(timed_out) << "3 threads with one held out ran a region on one thread";
  EXPECT_EQ(cpu::reserved_threads(), 0);
  run_regions(2, 200, 0);  // and back to both threads
}

// Idle work (cpu::set_idle_work, Run's pooled hashing): only with a worker and one at a time; the
// first worker runs every piece, never the caller, while back-to-back regions still run each task
// once (urgent pieces first: the caller runs the regions alone meanwhile).
TEST(ThreadPool, IdleWorkRunsOnTheWorkerBesideRegions) {
  ThreadsGuard g;
  set_num_threads(1);
  EXPECT_FALSE(cpu::set_idle_work([] { return cpu::IdleWork::kNone; }));  // no worker to run it
  set_num_threads(2);
  const auto caller = std::this_thread::get_id();
  for (bool urgent : {false, true}) {
    std::atomic<int> left{3000};
    std::atomic<bool> on_caller{false};
    ASSERT_TRUE(cpu::set_idle_work([&] {
      if (std::this_thread::get_id() == caller) on_caller = true;
      if (left.load() == 0) return cpu::IdleWork::kNone;
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(2);
      while (std::chrono::steady_clock::now() < until) {
      }
      return --left == 0 ? cpu::IdleWork::kNone : urgent ? cpu::IdleWork::kUrgent : cpu::IdleWork::kMore;
    }));
    EXPECT_FALSE(cpu::set_idle_work([] { return cpu::IdleWork::kNone; }));  // one at a time
    cpu::idle_work_ready();
    run_regions(2, 2000, 0);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (left.load() > 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    cpu::clear_idle_work();
    EXPECT_EQ(left.load(), 0) << (urgent ? "urgent" : "not urgent") << ": the worker did not run every piece";
    EXPECT_FALSE(on_caller.load());
  }
}

// A worker asleep (no region for longer than its spin) wakes for idle work; clear_idle_work
// returns only once the piece in progress has returned, and no piece runs after it.
TEST(ThreadPool, IdleWorkWakesASleepingWorkerAndClearWaitsForThePiece) {
  ThreadsGuard g;
  set_num_threads(2);
  cpu::parallel_for(2, [](int64_t) {}, Round::NearestEven);  // the worker exists
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // and sleeps
  std::atomic<int> stage{0}, calls{0};  // 1: inside the piece, 2: it returned
  ASSERT_TRUE(cpu::set_idle_work([&] {
    ++calls;
    if (stage.load() == 0) {
      stage = 1;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      stage = 2;
    }
    return cpu::IdleWork::kMore;  // always more: only clear_idle_work stops it
  }));
  cpu::idle_work_ready();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (stage.load() == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  ASSERT_EQ(stage.load(), 1) << "the sleeping worker was not woken for the idle work";
  cpu::clear_idle_work();
  EXPECT_EQ(stage.load(), 2);
  const int after = calls.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(calls.load(), after);
  run_regions(2, 100, 0);  // the pool still runs regions
}

// The spin policy on a fake count of preemptions: long until two preemptions come within kHold
// (or two at once), short for kHold after, long again once kHold passes without a second one.
TEST(SpinPolicy, ShortOnlyAfterTwoPreemptionsWithinTheHold) {
  static std::atomic<int64_t> count{5};
  using cpu::SpinPolicy;
  SpinPolicy::set_fake_preemptions([] { return count.load(); });
  cpu::SpinPolicy p;
  auto t = SpinPolicy::Clock::now();
  const auto ms = [](int n) { return std::chrono::milliseconds(n); };
  EXPECT_TRUE(p.spin_long(t));
  count = 6;  // one preemption alone
  EXPECT_TRUE(p.spin_long(t += ms(1)));
  count = 7;  // a second within kHold
  EXPECT_FALSE(p.spin_long(t += ms(10)));
  EXPECT_FALSE(p.spin_long(t += SpinPolicy::kHold - ms(1)));
  EXPECT_TRUE(p.spin_long(t += ms(2)));
  count = 8;  // long after the last: alone again
  EXPECT_TRUE(p.spin_long(t += SpinPolicy::kHold + ms(1)));
  count = 10;  // two at once
  EXPECT_FALSE(p.spin_long(t += SpinPolicy::kHold + ms(1)));
  EXPECT_TRUE(p.spin_long(t += SpinPolicy::kHold));
  SpinPolicy::set_fake_preemptions([] { return int64_t{-1}; });  // no count: short, as before
  cpu::SpinPolicy blind;
  EXPECT_FALSE(blind.spin_long(t));
  SpinPolicy::set_fake_preemptions(nullptr);
}

// The OS's count moves when another thread takes this one's core: two spinning threads on one
// CPU. (Only where the count and the affinity call exist.)
TEST(SpinPolicy, TheThreadsCountSeesPreemption) {
  const int64_t before = cpu::SpinPolicy::thread_preemptions();
  if (before < 0) GTEST_SKIP() << "no per-thread count of involuntary context switches here";
#if defined(__linux__)
  cpu_set_t one, saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  int cpu = 0;
  while (!CPU_ISSET(cpu, &saved)) ++cpu;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  std::atomic<bool> stop{false};
  std::thread rival([&] {
    sched_setaffinity(0, sizeof one, &one);
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (cpu::SpinPolicy::thread_preemptions() == before && std::chrono::steady_clock::now() < deadline) {
  }
  const int64_t after = cpu::SpinPolicy::thread_preemptions();
  stop = true;
  rival.join();
  sched_setaffinity(0, sizeof saved, &saved);
  EXPECT_GT(after, before);
#endif
}

// Wired into the pool: with no preemption ever counted, a worker goes on spinning past the short
// spin in a serial gap between regions, and regions still run every task once.
TEST(SpinPolicy, AWorkerSpinsLongWhenNothingPreemptsIt) {
  ThreadsGuard g;
  cpu::SpinPolicy::set_fake_preemptions([] { return int64_t{0}; });
  set_num_threads(2);
  const int64_t before = cpu::long_spins();
  std::atomic<int64_t> ran{0};
  int regions = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (cpu::long_spins() == before && std::chrono::steady_clock::now() < deadline) {
    cpu::parallel_for(4, [&](int64_t) { ran.fetch_add(1); }, Round::NearestEven);  // a region
    ++regions;
    std::this_thread::sleep_for(std::chrono::microseconds(400));  // past the short spin
  }
  cpu::SpinPolicy::set_fake_preemptions(nullptr);
  EXPECT_GT(cpu::long_spins(), before);
  EXPECT_EQ(ran.load(), 4 * regions);
  run_regions(2, 200, 0);
}

}  // namespace
}  // namespace maroon
