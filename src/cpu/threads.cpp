#include "cpu/threads.h"

#include <atomic>
#include <chrono>
#include <cfenv>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "core/interrupt.h"
#include "maroon/backend.h"

namespace maroon::cpu {

void set_hw_round(Round r) {
  static const int modes[] = {FE_TONEAREST, FE_TOWARDZERO, FE_UPWARD, FE_DOWNWARD};
  std::fesetround(modes[static_cast<int>(r)]);
}

namespace {

// Set on pool workers and on a caller while it runs a parallel region: a parallel_for reached
// from there (a Python signal handler that computes, run by the interrupt poll) runs inline
// instead of waiting for the pool it is part of.
thread_local bool t_in_pool = false;

// The hardware rounding mode of this thread, restored however parallel_for exits.
class RoundRestore {
 public:
  RoundRestore() : mode_(std::fegetround()) {}
  ~RoundRestore() { std::fesetround(mode_); }
  RoundRestore(const RoundRestore&) = delete;
  RoundRestore& operator=(const RoundRestore&) = delete;

 private:
  int mode_;
};

// Waits in a worker or the caller spin this long before sleeping: parallel regions come back to
// back (a training step runs hundreds, each tens of microseconds), and waking a sleeping thread
// costs about as much as one of them.
constexpr auto kSpin = std::chrono::microseconds(100);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins until done() or kSpin has passed; true if done() became true.
template <class F>
bool spin_until(F done) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (int i = 1;; ++i) {
    if (done()) return true;
    cpu_relax();
    if (i % 64 == 0 && std::chrono::steady_clock::now() > until) return false;
  }
}

class Pool {
 public:
  static Pool& get() {
    static Pool pool;
    return pool;
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
      generation_.fetch_add(1);
    }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
  }

  // Runs the region; an exception thrown by any task (or by the interrupt poll on the caller)
  // stops the handing out of tasks, waits for the running ones, and is rethrown here. Of several,
  // the one from the lowest task index wins, so the error does not depend on thread timing.
  void run(int64_t n, int threads, const std::function<void(int64_t)>& fn, Round r) {
    std::unique_lock<std::mutex> lock(run_mu_);  // one parallel region at a time
    ensure_workers(threads - 1);
    {
      std::lock_guard<std::mutex> g(error_mu_);
      error_ = nullptr;
      error_task_ = INT64_MAX;
    }
    {
      std::lock_guard<std::mutex> g(mu_);
      job_ = &fn;
      n_ = n;
      next_.store(0);
      round_ = r;
      active_ = threads - 1;
      pending_.store(threads - 1);
      generation_.fetch_add(1, std::memory_order_release);
    }
    cv_.notify_all();
    work(fn, n, /*caller=*/true);  // the caller (already in Maroon's FP environment) works too
    if (!spin_until([&] { return pending_.load(std::memory_order_acquire) == 0; })) {
      std::unique_lock<std::mutex> g(mu_);
      done_cv_.wait(g, [&] { return pending_.load() == 0; });
    }
    {
      std::lock_guard<std::mutex> g(mu_);
      job_ = nullptr;
    }
    std::exception_ptr error;
    {
      std::lock_guard<std::mutex> g(error_mu_);
      error = std::move(error_);
      error_ = nullptr;
    }
    if (error) std::rethrow_exception(error);
  }

 private:
  void work(const std::function<void(int64_t)>& fn, int64_t n, bool caller) {
    for (int64_t t; (t = next_.fetch_add(1)) < n;) {
      try {
        if (caller) poll_interrupt();
        fn(t);
      } catch (...) {
        std::lock_guard<std::mutex> g(error_mu_);
        if (t < error_task_) error_ = std::current_exception(), error_task_ = t;
        next_.store(n);  // no more tasks are handed out; running ones finish
      }
    }
  }

  void ensure_workers(int k) {
    while (static_cast<int>(workers_.size()) < k) {
      int id = static_cast<int>(workers_.size());
      workers_.emplace_back([this, id] { loop(id); });
    }
  }

  void loop(int id) {
    t_in_pool = true;
    uint64_t seen = 0;
    std::fenv_t own;
    std::fegetenv(&own);
    while (true) {
      spin_until([&] { return generation_.load(std::memory_order_acquire) != seen; });
      std::unique_lock<std::mutex> g(mu_);
      cv_.wait(g, [&] { return generation_.load() != seen; });
      seen = generation_.load();
      if (stop_) return;
      if (id >= active_) continue;  // not needed this time
      const auto* fn = job_;
      int64_t n = n_;
      Round r = round_;
      g.unlock();
      // IEEE defaults and the op's rounding mode, whatever this thread had.
      std::fesetenv(FE_DFL_ENV);
      set_hw_round(r);
      work(*fn, n, /*caller=*/false);
      std::fesetenv(&own);
      g.lock();
      if (pending_.fetch_sub(1) == 1) done_cv_.notify_one();
    }
  }

  std::mutex run_mu_, mu_, error_mu_;
  std::exception_ptr error_;  // guarded by error_mu_ while a region runs
  int64_t error_task_ = INT64_MAX;
  std::condition_variable cv_, done_cv_;
  std::vector<std::thread> workers_;
  const std::function<void(int64_t)>* job_ = nullptr;
  int64_t n_ = 0;
  std::atomic<int64_t> next_{0};
  Round round_ = Round::NearestEven;
  int active_ = 0;
  std::atomic<int> pending_{0};
  bool stop_ = false;
  std::atomic<uint64_t> generation_{0};
};

}  // namespace

void parallel_for(int64_t n, const std::function<void(int64_t)>& fn, Round r) {
  if (n <= 0) return;
  int threads = static_cast<int>(std::min<int64_t>(num_threads(), n));
  RoundRestore restore;
  set_hw_round(r);
  if (threads <= 1 || t_in_pool) {
    for (int64_t t = 0; t < n; ++t) {
      poll_interrupt();
      fn(t);
    }
    return;
  }
  t_in_pool = true;
  struct Leave {
    ~Leave() { t_in_pool = false; }
  } leave;
  Pool::get().run(n, threads, fn, r);
}

}  // namespace maroon::cpu
