// conv2d's forward product and its two gradients on beautiful_mnist's second layer (32->32 5x5
// on 24x24), each timed alone: the best of several runs, so that a shared, loaded machine
// still gives each build's own speed. usage: maroon-bench-conv-grad [--threads T] [--fused] [batch]
// (--fused: the products as REDUCE_MULACC, as `maroon train --fused` builds them)
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "best_ms.h"
#include "maroon/backend.h"
#include "maroon/maroon.h"

using namespace maroon;

int main(int argc, char** argv) {
  int a = 1;
  if (argc > 2 && !std::strcmp(argv[1], "--threads")) set_num_threads(std::atoi(argv[2])), a = 3;
  const bool fused = argc > a && !std::strcmp(argv[a], "--fused");
  if (fused) ++a;
  FusedScope scope(fused);
  const int64_t batch = argc > a ? std::atoll(argv[a]) : 64;
  Tensor::manual_seed(0);
  Tensor x = Tensor::rand({batch, 32, 24, 24}).realize(), w = Tensor::rand({32, 32, 5, 5}).realize();
  Tensor g = Tensor::rand({batch, 32, 20, 20}).realize();
  const int reps = std::getenv("MAROON_BENCH_REPS") ? std::atoi(std::getenv("MAROON_BENCH_REPS")) : 9;
  double fwd = best_ms(reps, [&] { x.conv2d(w).realize(); });  // (always: it warms the buffers)
  auto grad = [&](bool of_x) {
    Tensor xi = x.detach(), wi = w.detach();
    (xi.conv2d(wi) * g).sum().backward();
    (of_x ? xi.grad() : wi.grad())->realize();
  };
  const char* only = std::getenv("MAROON_BENCH_ONLY");  // "fwd", "dw" or "dx" alone (for a profiler)
  auto timed = [&](const char* name, auto f) { return only && std::strcmp(only, name) ? 0.0 : best_ms(reps, f); };
  if (only && std::strcmp(only, "fwd")) fwd = 0;
  double dw = timed("dw", [&] { grad(false); });
  double dx = timed("dx", [&] { grad(true); });
  std::printf("threads %d, %s, batch %lld: forward %.2f ms, weight gradient %.2f ms, input gradient %.2f ms\n",
              num_threads(), fused ? "fused" : "unfused", static_cast<long long>(batch), fwd, dw, dx);
  return 0;
}
