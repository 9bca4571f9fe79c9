// conv2d's forward product and its two gradients on beautiful_mnist's second layer (32->32 5x5
// on 24x24; --first: its first, 1->32 5x5 on 28x28), each timed alone: the best of several runs, so that a shared, loaded machine
// still gives each build's own speed.
// usage: maroon-bench-conv-grad [--threads T] [--fused] [--first] [--reps N] [--only fwd|dw|dx] [batch]
//   --fused  the products as REDUCE_MULACC, as `maroon train --fused` builds them
//   --only   time one of the three alone (for a profiler; the forward always runs once first)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench_args.h"
#include "best_ms.h"
#include "maroon/backend.h"
#include "maroon/maroon.h"

using namespace maroon;

int main(int argc, char** argv) {
  bool fused = false;
  int reps = 9;
  int64_t batch = 64;
  std::string only;
  bool first = false;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--threads") && has_value) set_num_threads(static_cast<int>(bench_int(argv[++i], "--threads", 1, 256)));
    else if (!std::strcmp(argv[i], "--fused")) fused = true;
    else if (!std::strcmp(argv[i], "--first")) first = true;
    else if (!std::strcmp(argv[i], "--reps") && has_value) reps = static_cast<int>(bench_int(argv[++i], "--reps", 1, 1000000));
    else if (!std::strcmp(argv[i], "--only") && has_value) only = argv[++i];
    else batch = bench_int(argv[i], "batch", 1, 1 << 16);
  }
  if (!only.empty() && only != "fwd" && only != "dw" && only != "dx") {
    std::fprintf(stderr, "--only: '%s' is not one of fwd, dw, dx\n", only.c_str());
    return 2;
  }
  FusedScope scope(fused);
  Tensor::manual_seed(0);
  const int64_t cin = first ? 1 : 32, hw = first ? 28 : 24;
  Tensor x = Tensor::rand({batch, cin, hw, hw}).realize(), w = Tensor::rand({32, cin, 5, 5}).realize();
  Tensor g = Tensor::rand({batch, 32, hw - 4, hw - 4}).realize();
  auto grad = [&](bool of_x) {
    Tensor xi = x.detach(), wi = w.detach();
    (xi.conv2d(wi) * g).sum().backward();
    (of_x ? xi.grad() : wi.grad())->realize();
  };
  auto timed = [&](const char* name, auto f) { return !only.empty() && only != name ? 0.0 : best_ms(reps, f); };
  x.conv2d(w).realize();  // the buffers warmed for every case
  const double fwd = timed("fwd", [&] { x.conv2d(w).realize(); });
  const double dw = timed("dw", [&] { grad(false); });
  const double dx = timed("dx", [&] { grad(true); });
  std::printf("%s layer, threads %d, %s, batch %lld: forward %.2f ms, weight gradient %.2f ms, input gradient %.2f ms\n",
              first ? "first" : "second", num_threads(), fused ? "fused" : "unfused", static_cast<long long>(batch), fwd, dw, dx);
  return 0;
}
