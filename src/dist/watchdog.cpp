// The exchange timer (see watchdog.h).
#include "dist/watchdog.h"

#include <cstdio>
#include <cstdlib>

namespace maroon::dist {

Watchdog::Watchdog(double timeout_s, int rank) : timeout_s_(timeout_s), rank_(rank), thread_([this] { loop(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lk(m_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Watchdog::loop() {
  std::unique_lock<std::mutex> lk(m_);
  while (!stop_) {
    // Polling twice a second costs nothing next to a training step, and needs no wake-ups.
    cv_.wait_for(lk, std::chrono::milliseconds(500));
    if (stop_ || !waiting_) continue;
    double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - since_).count();
    if (waited < timeout_s_) continue;
    // The other ranks are stuck or gone: exiting (not throwing: this thread cannot unwind the
    // one blocked inside MPI) makes the launcher end the whole job. Files are written
    // atomically, so nothing is left half-written.
    std::fprintf(stderr,
                 "maroon: rank %d waited %.0f s for the other ranks in the %s of step %lld: a rank died, hangs "
                 "or was stopped; ending this rank (exit status 3)\n",
                 rank_, waited, what_, static_cast<long long>(step_));
    std::fflush(stderr);
    std::_Exit(3);
  }
}

Watchdog::Waiting::Waiting(Watchdog* w, const char* what, int64_t step) : w_(w) {
  if (!w_) return;
  std::lock_guard<std::mutex> lk(w_->m_);
  w_->waiting_ = true;
  w_->what_ = what;
  w_->step_ = step;
  w_->since_ = std::chrono::steady_clock::now();
}

Watchdog::Waiting::~Waiting() {
  if (!w_) return;
  std::lock_guard<std::mutex> lk(w_->m_);
  w_->waiting_ = false;
}

}  // namespace maroon::dist
