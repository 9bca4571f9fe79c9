// The thread pool (src/cpu/threads.cpp): every task of every region runs exactly once, in the
// region's rounding mode with IEEE defaults, and no worker touches a region after it returns,
// however the regions follow each other (back to back, with pauses that let workers fall
// asleep, while another thread keeps a core busy).
#include <gtest/gtest.h>

#include <atomic>
#include <cfenv>
#include <chrono>
#include <thread>
#include <vector>

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
    if (pause_every && i % pause_every == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
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

}  // namespace
}  // namespace maroon
