// SpinPolicy (spin_policy.h): a long spin only while nothing else wanted the worker's core.
#include "cpu/spin_policy.h"

#include <atomic>

#if defined(__linux__)
#include <sys/resource.h>
#endif

namespace maroon::cpu {
namespace {
std::atomic<int64_t (*)()> g_fake{nullptr};
}  // namespace

void SpinPolicy::set_fake_preemptions(int64_t (*fake)()) { g_fake.store(fake, std::memory_order_relaxed); }

bool SpinPolicy::spin_long(Clock::time_point now) {
  const int64_t n = thread_preemptions();
  if (n < 0 || seen_ < 0) return false;  // no count: as before, short spins only
  if (n != seen_) {
    // One preemption alone is not a competitor: a new thread starts on its creator's core and a
    // kernel thread runs now and then (1-2 a run of the idle machine's ONNX bench). Two within
    // kHold are (beside `stress-ng --cpu 1` a worker is preempted every ~15 ms).
    if (n - seen_ >= 2 || (preempted_ && now - last_preempted_ < kHold)) contended_until_ = now + kHold;
    seen_ = n;
    last_preempted_ = now;
    preempted_ = true;
  }
  return now >= contended_until_;
}

int64_t SpinPolicy::thread_preemptions() {
  if (auto* fake = g_fake.load(std::memory_order_relaxed)) return fake();
#if defined(__linux__) && defined(RUSAGE_THREAD)
  rusage ru{};
  if (getrusage(RUSAGE_THREAD, &ru) == 0) return static_cast<int64_t>(ru.ru_nivcsw);
#endif
  return -1;
}

}  // namespace maroon::cpu
