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

}  // namespace
}  // namespace maroon
