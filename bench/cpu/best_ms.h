// The best of `reps` runs of f, in milliseconds: on a shared, loaded machine the fastest run is
// the closest to each build's own speed (conv_bench, conv_grad_bench).
#pragma once
#include <algorithm>
#include <chrono>
#include <functional>

inline double best_ms(int reps, const std::function<void()>& f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best * 1e3;
}
