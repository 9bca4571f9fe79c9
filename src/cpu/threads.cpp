#include "cpu/threads.h"

#include <atomic>
#include <chrono>
#include <cfenv>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "maroon/backend.h"

namespace maroon::cpu {

void set_hw_round(Round r) {
  static const int modes[] = {FE_TONEAREST, FE_TOWARDZERO, FE_UPWARD, FE_DOWNWARD};
  std::fesetround(modes[static_cast<int>(r)]);
}

namespace {

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

  void run(int64_t n, int threads, const std::function<void(int64_t)>& fn, Round r) {
    std::unique_lock<std::mutex> lock(run_mu_);  // one parallel region at a time
    ensure_workers(threads - 1);
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
    work(fn, n);  // the caller (already in Maroon's FP environment) works too
    if (!spin_until([&] { return pending_.load(std::memory_order_acquire) == 0; })) {
      std::unique_lock<std::mutex> g(mu_);
      done_cv_.wait(g, [&] { return pending_.load() == 0; });
    }
    std::lock_guard<std::mutex> g(mu_);
    job_ = nullptr;
  }

 private:
  void work(const std::function<void(int64_t)>& fn, int64_t n) {
    for (int64_t t; (t = next_.fetch_add(1)) < n;) fn(t);
  }

  void ensure_workers(int k) {
    while (static_cast<int>(workers_.size()) < k) {
      int id = static_cast<int>(workers_.size());
      workers_.emplace_back([this, id] { loop(id); });
    }
  }

  void loop(int id) {
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
      work(*fn, n);
      std::fesetenv(&own);
      g.lock();
      if (pending_.fetch_sub(1) == 1) done_cv_.notify_one();
    }
  }

  std::mutex run_mu_, mu_;
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
  set_hw_round(r);
  if (threads <= 1) {
    for (int64_t t = 0; t < n; ++t) fn(t);
  } else {
    Pool::get().run(n, threads, fn, r);
  }
  set_hw_round(Round::NearestEven);
}

}  // namespace maroon::cpu
