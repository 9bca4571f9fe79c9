// The progress bar and plain progress lines.
#include "cli/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace maroon::cli {

std::string format_duration(double s) {
  long t = s < 0 ? 0 : static_cast<long>(s + 0.5);
  char b[32];
  if (t >= 3600)
    std::snprintf(b, sizeof b, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else
    std::snprintf(b, sizeof b, "%ld:%02ld", t / 60, t % 60);
  return b;
}

Progress::Progress(int64_t total, int64_t per_epoch, int64_t epochs, int64_t batch, int64_t every, bool quiet)
    : tty_(isatty(STDERR_FILENO)),
      quiet_(quiet),
      total_(total),
      per_epoch_(per_epoch),
      epochs_(epochs),
      batch_(batch),
      every_(every > 0 ? every : 50),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

double Progress::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() - paused_;
}
void Progress::pause() { pause_start_ = std::chrono::steady_clock::now(); }
void Progress::resume() {
  paused_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - pause_start_).count();
}

std::string Progress::status(int64_t done) const {
  double t = elapsed(), rate = t > 0 ? static_cast<double>(done * batch_) / t : 0;
  double left = done > 0 ? t / static_cast<double>(done) * static_cast<double>(total_ - done) : 0;
  int64_t epoch = (done - 1) / per_epoch_ + 1;
  char b[200];
  std::snprintf(b, sizeof b, "loss %.4f  acc %5.1f%%  %6.0f img/s  %s left", last_loss_,
                seen_ ? 100.0 * static_cast<double>(correct_) / static_cast<double>(seen_) : 0.0, rate,
                format_duration(left).c_str());
  char head[80];
  std::snprintf(head, sizeof head, "epoch %lld/%lld", static_cast<long long>(epoch), static_cast<long long>(epochs_));
  if (!tty_) {
    char s[64];
    std::snprintf(s, sizeof s, "  step %lld/%lld  ", static_cast<long long>(done), static_cast<long long>(total_));
    return head + std::string(s) + b;
  }
  const int width = 24;
  int64_t in = (done - 1) % per_epoch_ + 1;
  // The steps this epoch will run (fewer than an epoch's when --steps stops it early).
  int64_t of = std::min(per_epoch_, total_ - (done - in));
  int fill = static_cast<int>(width * in / of);
  std::string bar = "[" + std::string(fill, '#') + std::string(width - fill, '.') + "]";
  char s[64];
  std::snprintf(s, sizeof s, " %lld/%lld  ", static_cast<long long>(in), static_cast<long long>(of));
  return head + std::string(" ") + bar + s + b;
}

void Progress::step(int64_t done, float loss, int64_t correct) {
  if ((done - 1) % per_epoch_ == 0) correct_ = seen_ = 0;  // accuracy over the epoch so far
  last_loss_ = loss;
  correct_ += correct;
  seen_ += batch_;
  if (quiet_) return;
  if (tty_) {
    auto now = std::chrono::steady_clock::now();
    if (done == total_ || done % per_epoch_ == 0 || now - last_draw_ > std::chrono::milliseconds(100)) {
      std::fprintf(stderr, "\r\033[K%s", status(done).c_str());
      last_draw_ = now;
    }
  } else if (done % every_ == 0 || done == total_) {
    std::fprintf(stderr, "%s\n", status(done).c_str());
  }
}

void Progress::line(const std::string& text) {
  if (quiet_) return;
  std::fprintf(stderr, "%s%s\n", tty_ ? "\r\033[K" : "", text.c_str());
}

}  // namespace maroon::cli
