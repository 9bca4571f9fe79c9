// A timer for the exchanges of a data-parallel step: a rank that waits longer than the timeout
// for the others (one of them died, hangs or was stopped) says so and ends its process, so that
// the MPI launcher ends the job instead of leaving it hanging.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace maroon::dist {

class Watchdog {
 public:
  Watchdog(double timeout_s, int rank);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // RAII: the rank waits in exchange `what` of step `step` while a Waiting lives. A null
  // watchdog times nothing.
  class Waiting {
   public:
    Waiting(Watchdog* w, const char* what, int64_t step);
    ~Waiting();
    Waiting(const Waiting&) = delete;
    Waiting& operator=(const Waiting&) = delete;

   private:
    Watchdog* w_;
  };

 private:
  void loop();
  const double timeout_s_;
  const int rank_;
  std::mutex m_;
  std::condition_variable cv_;
  bool stop_ = false, waiting_ = false;
  const char* what_ = "";
  int64_t step_ = 0;
  std::chrono::steady_clock::time_point since_;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace maroon::dist
