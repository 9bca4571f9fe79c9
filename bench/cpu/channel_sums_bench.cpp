// batchnorm's per-channel sums on beautiful_mnist's activations (batch, channels, h, w), summed
// over batch, h and w: a plain sum and a sum of squared deviations from a per-channel mean, each
// timed alone, best of several runs. usage: maroon-bench-channel-sums [--threads T] [batch]
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "best_ms.h"
#include "bench_args.h"
#include "maroon/backend.h"
#include "maroon/maroon.h"

using namespace maroon;

int main(int argc, char** argv) {
  const int64_t batch = threads_and_batch(argc, argv, 512);
  Tensor::manual_seed(0);
  const int reps = 9;
  std::printf("threads %d, batch %lld:", num_threads(), static_cast<long long>(batch));
  for (const Shape& s : {Shape{batch, 32, 24, 24}, Shape{batch, 32, 20, 20}, Shape{batch, 64, 8, 8}, Shape{batch, 64, 6, 6}}) {
    Tensor x = Tensor::rand(s).realize(), m = Tensor::rand({1, s[1], 1, 1}).realize();
    double sum = best_ms(reps, [&] { x.sum(Axis{0, 2, 3}).realize(); });
    double var = best_ms(reps, [&] { ((x - m) * (x - m)).sum(Axis{0, 2, 3}).realize(); });
    std::printf("  (%lld,%lld,%lld): sum %.2f ms, squares %.2f ms", static_cast<long long>(s[1]),
                static_cast<long long>(s[2]), static_cast<long long>(s[3]), sum, var);
  }
  std::printf("\n");
  return 0;
}
