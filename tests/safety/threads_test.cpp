// Exceptions in parallel kernels reach the caller, settings change safely while other threads
// compute, and several threads realize graphs at once (issue 21). The TSan build runs this file.
#include <atomic>
#include <cfenv>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cpu/threads.h"
#include "maroon/backend.h"
#include "maroon/interrupt.h"
#include "maroon/maroon.h"
#include "util.h"

namespace maroon::test {
namespace {

struct Threads {
  int old = num_threads();
  explicit Threads(int n) { set_num_threads(n); }
  ~Threads() { set_num_threads(old); }
};

// What the pool promises, whatever the timing (TSan's slowness included): the lowest failing
// task's error reaches the caller; every task below it ran, each task at most once; nothing runs
// after parallel_for has returned; on one thread (no race) no task after the failing one starts.
// How many tasks other threads take between the failure and the stop depends on scheduling, so
// that is not asserted (under TSan all 1000 could be handed out first).
TEST(Threads, AnExceptionInAWorkerReachesTheCaller) {
  constexpr int kTasks = 1000;
  for (int t : {1, 2, 3, 8}) {
    Threads threads(t);
    std::vector<std::atomic<int>> runs(kTasks);
    std::atomic<int> ran{0};
    const int before = std::fegetround();
    int ran_when_caught = -1;
    try {
      cpu::parallel_for(kTasks, [&](int64_t task) {
        ++runs[static_cast<size_t>(task)];
        ++ran;
        if (task == 37 || task == 600) throw std::runtime_error("task " + std::to_string(task) + " failed");
      }, Round::Up);
      ADD_FAILURE() << "no exception with " << t << " threads";
    } catch (const std::runtime_error& e) {
      ran_when_caught = ran.load();
      // The lowest failing task's error, whatever the timing.
      EXPECT_STREQ(e.what(), "task 37 failed") << t << " threads";
    }
    for (int i = 0; i < kTasks; ++i) {
      EXPECT_LE(runs[static_cast<size_t>(i)].load(), 1) << "task " << i << " ran twice, " << t << " threads";
      if (i <= 37) {
        EXPECT_EQ(runs[static_cast<size_t>(i)].load(), 1) << "task " << i << " did not run, " << t << " threads";
      }
    }
    if (t == 1) {
      EXPECT_EQ(ran.load(), 38) << "tasks kept being handed out after the failure";
    }
    EXPECT_EQ(std::fegetround(), before) << "rounding mode not restored";
    // The pool is usable afterwards, and no task of the failed region ran after it returned.
    std::atomic<int64_t> sum{0};
    cpu::parallel_for(100, [&](int64_t task) { sum += task; }, Round::NearestEven);
    EXPECT_EQ(sum.load(), 4950);
    EXPECT_EQ(ran.load(), ran_when_caught) << "a task ran after parallel_for returned, " << t << " threads";
  }
}

TEST(Threads, ANestedParallelForRunsInline) {
  Threads threads(3);
  std::atomic<int64_t> sum{0};
  cpu::parallel_for(8, [&](int64_t) {
    cpu::parallel_for(10, [&](int64_t j) { sum += j; }, Round::NearestEven);
  }, Round::NearestEven);
  EXPECT_EQ(sum.load(), 8 * 45);
}

// Interrupting: the installed check throws; realize stops between kernels and leaves the graph
// consistent, so the next realize finishes it.
std::atomic<int> g_polls{0};
void interrupt_after_a_few() {
  if (++g_polls >= 2) throw std::runtime_error("interrupted");
}

TEST(Threads, AnInterruptStopsRealizeAndTheGraphStaysUsable) {
  Threads threads(2);
  Tensor x = Tensor::ones({256, 256});
  for (int i = 0; i < 60; ++i) x = x.matmul(Tensor::full({256, 256}, 1.0 / 256, DType::Float32)).relu() + 0;
  g_polls = 0;
  set_interrupt_check(&interrupt_after_a_few);
  bool thrown = false;
  try {
    // Polls are at most every 5 ms; 60 matmuls of 256 take longer than that on any machine.
    x.realize();
  } catch (const std::runtime_error& e) {
    thrown = std::string(e.what()) == "interrupted";
  }
  set_interrupt_check(nullptr);
  EXPECT_TRUE(thrown);
  EXPECT_EQ(x.to_vector<float>(), std::vector<float>(256 * 256, 1.0f));
}

// Several threads build and realize graphs while another changes the thread count and the
// backend: no data race (TSan), and every result has its exact bits.
TEST(Threads, ConcurrentRealizeAndSettings) {
  Threads restore(2);
  Backend old = backend();
  std::atomic<bool> stop{false};
  std::thread settings([&] {
    for (int i = 0; !stop; ++i) {
      set_num_threads(1 + i % 3);
      set_backend(i % 5 == 0 ? Backend::Ref : Backend::Cpu);
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> users;
  std::atomic<int> wrong{0};
  for (int u = 0; u < 3; ++u) {
    users.emplace_back([&, u] {
      for (int r = 0; r < 20; ++r) {
        Tensor a = Tensor::arange(Scalar(0.0), Scalar(64.0), Scalar(1.0)).reshape({8, 8}) + static_cast<float>(u);
        Tensor s = a.matmul(Tensor::ones({8, 8})).sum();
        // sum over i,j of 8 * (8*i + j + u) = 8 * (2016 + 64u)
        if (s.to_vector<float>() != std::vector<float>{static_cast<float>(8 * (2016 + 64 * u))}) ++wrong;
      }
    });
  }
  for (auto& t : users) t.join();
  stop = true;
  settings.join();
  set_backend(old);
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace maroon::test
