// Training progress on stderr (stdout carries only results): a bar redrawn in place when stderr
// is a terminal, plain lines otherwise (logs and pipes get one line every `every` steps);
// nothing when quiet.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace maroon::cli {

class Progress {
 public:
  Progress(int64_t total_steps, int64_t per_epoch, int64_t epochs, int64_t batch, int64_t every, bool quiet);
  // After step `done` (1-based count of steps taken): its loss and how many it got right.
  void step(int64_t done, float loss, int64_t correct);
  // Ends an epoch's bar or lines with a summary line.
  void line(const std::string& text);
  double elapsed() const;  // seconds of training so far (excludes time in pause/resume)
  void pause();            // stop the clock (evaluation is not training time)
  void resume();

 private:
  std::string status(int64_t done) const;
  bool tty_, quiet_;
  int64_t total_, per_epoch_, epochs_, batch_, every_;
  int64_t correct_ = 0, seen_ = 0;
  float last_loss_ = 0;
  double paused_ = 0;
  std::chrono::steady_clock::time_point start_, pause_start_, last_draw_;
};

std::string format_duration(double seconds);  // "1:05", "1:02:03"

}  // namespace maroon::cli
