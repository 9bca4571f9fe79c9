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
#include "cpu/spin_policy.h"
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
// costs about as much as one of them. (Yielding the core while polling, after a few microseconds
// of spinning, measured slower beside a busy process: 2 threads 4.3-5.2 s against 1.6-4.3 s for
// 60 MLP steps, the yielding worker losing its core to the other process.)
constexpr auto kSpin = SpinPolicy::kShort;  // the worker may go on to kLong (spin_policy.h)

std::atomic<int64_t> g_long_spins{0};

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

// One task range per thread of a region, on a cache line of its own: its owner claims from the
// front, a thread that has run out steals from the back. `span` packs [next, end).
struct alignas(64) TaskRange {
  std::atomic<uint64_t> span{0};
};

// One parallel region at a time. Its n tasks are cut into one contiguous range per thread (the
// caller's first), each thread runs its own range from the front and then steals from the others'
// backs. Which thread runs a task never changes a bit; the ranges are there for the caches: the
// two vCPUs of the machine this was tuned on are ~225 ns apart (a cache line's one-way trip), and
// with one shared counter consecutive kernels over the same buffers (Adam's m, v and parameter
// kernels, a product and its consumer) ran each element range on either core, pulling much of
// its data across; with ranges the same elements stay with the same thread, region after region.
// A worker that the OS has not scheduled yet takes nothing: its range is stolen by whoever runs,
// and the caller waits only for workers that joined the region (on a shared machine, where a
// worker may wait milliseconds for a core, the region then runs at the caller's one-thread speed
// instead of waiting for the late worker to wake up only to find nothing left). `state_` packs
// the region's generation, whether it is still open to joiners, and how many workers are inside.
class Pool {
 public:
  static Pool& get() {
    static Pool pool;
    return pool;
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_.store(true, std::memory_order_relaxed);
      state_.fetch_add(kGen);
    }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
  }

  // Runs the region; an exception thrown by any task (or by the interrupt poll on the caller)
  // stops the running of higher tasks, waits for the running ones, and is rethrown here. Tasks
  // below a failing one still run, so of several errors the one from the lowest task index wins
  // and the error does not depend on thread timing.
  void run(int64_t n, int threads, const std::function<void(int64_t)>& fn, Round r) {
    std::unique_lock<std::mutex> lock(run_mu_);  // one parallel region at a time
    ensure_workers(threads - 1);
    error_ = nullptr;
    error_task_.store(INT64_MAX, std::memory_order_relaxed);
    // Published by the release store of state_ below; a worker reads them only once it has
    // joined this generation, and the caller changes them only after every joiner has left.
    job_ = &fn;
    round_ = r;
    active_ = threads - 1;
    ranges_ = std::min(threads, kMaxRanges);
    for (int i = 0; i < ranges_; ++i) {
      const uint64_t lo = static_cast<uint64_t>(n * i / ranges_), hi = static_cast<uint64_t>(n * (i + 1) / ranges_);
      range_[i].span.store(hi << 32 | lo, std::memory_order_relaxed);
    }
    {
      std::lock_guard<std::mutex> g(mu_);  // a worker about to sleep sees the new generation
      // A new generation, open, nobody inside (the last region left with its count at 0).
      uint64_t gen = (state_.load(std::memory_order_relaxed) & ~(kGen - 1)) + kGen;
      state_.store(gen | kOpen, std::memory_order_release);
    }
    if (sleepers_.load(std::memory_order_relaxed) > 0) cv_.notify_all();
    work(fn, /*slot=*/0, /*caller=*/true);  // the caller (already in Maroon's FP environment) works too
    // Every task is claimed: close the region to late joiners, then wait for those inside.
    if (state_.fetch_and(~kOpen, std::memory_order_acq_rel) & kCount) {
      if (!spin_until([&] { return (state_.load(std::memory_order_acquire) & kCount) == 0; })) {
        std::unique_lock<std::mutex> g(mu_);
        done_cv_.wait(g, [&] { return (state_.load(std::memory_order_acquire) & kCount) == 0; });
      }
    }
    job_ = nullptr;
    std::exception_ptr error = std::move(error_);
    error_ = nullptr;
    if (error) std::rethrow_exception(error);
  }

  // Starts the first worker if need be and installs `piece` as its idle work.
  bool set_idle(std::function<IdleWork()> piece, int threads) {
    {
      std::lock_guard<std::mutex> lock(run_mu_);
      ensure_workers(threads - 1);
    }
    std::lock_guard<std::mutex> g(idle_mu_);
    if (idle_) return false;  // another's
    idle_ = std::move(piece);
    return true;
  }
  void clear_idle() {
    std::lock_guard<std::mutex> g(idle_mu_);  // a piece in progress holds it
    idle_ = nullptr;
    idle_ready_.store(0, std::memory_order_relaxed);
  }
  void idle_ready() {
    {
      std::lock_guard<std::mutex> g(mu_);  // a worker about to sleep sees it (as a new region)
      idle_ready_.fetch_add(1, std::memory_order_relaxed);
    }
    if (sleepers_.load(std::memory_order_relaxed) > 0) cv_.notify_all();
  }

 private:
  static constexpr uint64_t kCount = (uint64_t{1} << 32) - 1;  // workers inside the region
  static constexpr uint64_t kOpen = uint64_t{1} << 32;         // tasks may still be unclaimed
  static constexpr uint64_t kGen = uint64_t{1} << 33;          // one region
  static constexpr int kMaxRanges = 64;  // threads past this have no range of their own: they steal

  // The next task of range i: from its front for its owner, from its back for a thief; -1 when
  // the range is empty.
  int64_t claim(int i, bool own) {
    std::atomic<uint64_t>& span = range_[i].span;
    uint64_t s = span.load(std::memory_order_relaxed);
    while (true) {
      const uint64_t lo = s & 0xffffffffu, hi = s >> 32;
      if (lo >= hi) return -1;
      const uint64_t next = own ? s + 1 : (hi - 1) << 32 | lo;
      if (span.compare_exchange_weak(s, next, std::memory_order_relaxed)) return static_cast<int64_t>(own ? lo : hi - 1);
    }
  }

  // Runs the tasks of the thread's own range (slot), then steals until every range is empty. A
  // task that throws (or the caller's interrupt poll) stops every task above it from running:
  // those below still run, and the lowest one's error is carried back to the caller by run().
  void work(const std::function<void(int64_t)>& fn, int slot, bool caller) {
    auto run_task = [&](int64_t t) {
      if (t >= error_task_.load(std::memory_order_relaxed)) return;
      try {
        if (caller) poll_interrupt();
        fn(t);
      } catch (...) {
        std::lock_guard<std::mutex> g(error_mu_);
        if (t < error_task_.load(std::memory_order_relaxed)) {
          error_ = std::current_exception();
          error_task_.store(t, std::memory_order_relaxed);
        }
      }
    };
    if (slot < ranges_)
      for (int64_t t; (t = claim(slot, true)) >= 0;) run_task(t);
    for (int k = 1; k < ranges_; ++k) {
      const int victim = (slot + k) % ranges_;
      for (int64_t t; (t = claim(victim, false)) >= 0;) run_task(t);
    }
  }

  void ensure_workers(int k) {
    while (static_cast<int>(workers_.size()) < k) {
      int id = static_cast<int>(workers_.size());
      workers_.emplace_back([this, id] { loop(id); });
    }
  }

  // Joins the region of generation `gen` if it is still open: true if this worker is now counted
  // inside it (and must leave()).
  bool join(uint64_t gen) {
    uint64_t s = state_.load(std::memory_order_acquire);
    do {
      if ((s & ~(kGen - 1)) != gen || !(s & kOpen)) return false;
    } while (!state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel, std::memory_order_acquire));
    return true;
  }

  void leave() {
    // The last one out of a closed region wakes the caller (under mu_, so the wake is not lost).
    if ((state_.fetch_sub(1, std::memory_order_acq_rel) & (kCount | kOpen)) == 1) {
      std::lock_guard<std::mutex> g(mu_);
      done_cv_.notify_one();
    }
  }

  bool idle_due() const { return idle_ready_.load(std::memory_order_relaxed) != 0; }

  // One piece of the idle work; once it says none is left, the worker stops asking until
  // idle_ready() (unless that came while the piece ran).
  void run_idle_piece() {
    uint64_t seen = idle_ready_.load(std::memory_order_relaxed);
    IdleWork w = IdleWork::kNone;
    {
      std::lock_guard<std::mutex> g(idle_mu_);
      try {
        if (idle_) w = idle_();
      } catch (...) {  // the piece's owner reports its own errors; a stray one ends the work
      }
    }
    idle_urgent_ = w == IdleWork::kUrgent;
    if (w == IdleWork::kNone) idle_ready_.compare_exchange_strong(seen, 0, std::memory_order_relaxed);
  }

  // Spins until a new region (true), or until kSpin has passed with neither a region nor idle
  // work (false); to SpinPolicy::kLong instead while nothing else has wanted this worker's core
  // lately (spin_policy.h). The idler runs pieces of idle work meanwhile: while they are urgent,
  // before it looks for a region; else one piece at most between two looks.
  template <class F>
  bool wait_for_region(F fresh, bool idler, SpinPolicy& policy) {
    auto start = std::chrono::steady_clock::now();
    auto until = start + kSpin;
    bool extended = false;
    for (int i = 1;; ++i) {
      const bool due = idler && idle_due();
      if (!(due && idle_urgent_) && fresh()) return true;
      if (due) {
        run_idle_piece();
        cpu_relax();  // the piece may only have found the work taken (another thread's)
        start = std::chrono::steady_clock::now();
        until = start + kSpin;
        extended = false;
        continue;
      }
      cpu_relax();
      if (i % 64 != 0) continue;
      const auto now = std::chrono::steady_clock::now();
      if (now <= until) continue;
      if (extended || !policy.spin_long(now)) return false;
      extended = true;
      g_long_spins.fetch_add(1, std::memory_order_relaxed);
      until = start + SpinPolicy::kLong;
    }
  }

  void loop(int id) {
    t_in_pool = true;
    uint64_t seen = 0;
    std::fenv_t own;
    std::fegetenv(&own);
    const bool idler = id == 0;  // the one worker that takes idle work
    SpinPolicy policy;
    auto fresh = [&] { return (state_.load(std::memory_order_acquire) & ~(kGen - 1)) != seen; };
    while (true) {
      if (!wait_for_region(fresh, idler, policy)) {
        std::unique_lock<std::mutex> g(mu_);
        sleepers_.fetch_add(1, std::memory_order_relaxed);
        cv_.wait(g, [&] { return fresh() || (idler && idle_due()); });
        sleepers_.fetch_sub(1, std::memory_order_relaxed);
        if (!fresh()) continue;  // woken for idle work: wait_for_region runs it
      }
      if (stop_.load(std::memory_order_relaxed)) return;
      const uint64_t gen = state_.load(std::memory_order_acquire) & ~(kGen - 1);
      seen = gen;
      if (!join(gen)) continue;  // every task already claimed
      if (id >= active_) {  // not one of this region's threads (read only once joined)
        leave();
        continue;
      }
      // IEEE defaults and the op's rounding mode, whatever this thread had.
      std::fesetenv(FE_DFL_ENV);
      set_hw_round(round_);
      work(*job_, id + 1, /*caller=*/false);
      std::fesetenv(&own);
      leave();
    }
  }

  std::mutex run_mu_, mu_, error_mu_;
  std::mutex idle_mu_;  // held while a piece of idle work runs
  std::function<IdleWork()> idle_;
  bool idle_urgent_ = false;  // the idler's own
  std::atomic<uint64_t> idle_ready_{0};  // not 0: the idle work may have more
  std::exception_ptr error_;  // written under error_mu_ while a region runs
  std::atomic<int64_t> error_task_{INT64_MAX};
  std::condition_variable cv_, done_cv_;
  std::vector<std::thread> workers_;
  // The region's job: written by the caller before it opens the region, read by its joiners.
  const std::function<void(int64_t)>* job_ = nullptr;
  Round round_ = Round::NearestEven;
  int active_ = 0, ranges_ = 0;
  TaskRange range_[kMaxRanges];
  std::atomic<bool> stop_{false};
  std::atomic<int> sleepers_{0};
  std::atomic<uint64_t> state_{0};
};

}  // namespace

bool set_idle_work(std::function<IdleWork()> piece) {
  const int threads = num_threads();
  if (threads < 2 || t_in_pool) return false;  // no worker (or inside a region: run_mu_ is held)
  return Pool::get().set_idle(std::move(piece), threads);
}

void clear_idle_work() { Pool::get().clear_idle(); }

namespace {
std::atomic<int> g_reserved{0};
}  // namespace

void reserve_threads(int delta) { g_reserved.fetch_add(delta, std::memory_order_relaxed); }
int reserved_threads() { return g_reserved.load(std::memory_order_relaxed); }

int64_t long_spins() { return g_long_spins.load(std::memory_order_relaxed); }

void idle_work_ready() { Pool::get().idle_ready(); }

void parallel_for(int64_t n, const std::function<void(int64_t)>& fn, Round r) {
  if (n <= 0) return;
  const int usable = std::max(1, num_threads() - std::max(0, g_reserved.load(std::memory_order_relaxed)));
  int threads = static_cast<int>(std::min<int64_t>(usable, n));
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
  // A range packs two 32-bit task indices: a larger region runs as several (never seen in
  // practice: a task is thousands of elements at least).
  constexpr int64_t kMaxTasks = int64_t{1} << 31;
  for (int64_t base = 0; base < n; base += kMaxTasks) {
    const int64_t m = std::min(kMaxTasks, n - base);
    if (base == 0 && m == n) {
      Pool::get().run(n, threads, fn, r);
    } else {
      Pool::get().run(m, threads, [&](int64_t t) { fn(base + t); }, r);
    }
  }
}

}  // namespace maroon::cpu
