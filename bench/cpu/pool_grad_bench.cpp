// max_pool2d's gradient on beautiful_mnist's first pool, (batch, 32, 20, 20) 2x2 at stride 2:
// the forward max realized first, then the backward alone (the mask, the count of maxima per
// window, the scaled gradient, the fold onto the image and its sum), best of several runs by wall time
// and by the process's CPU time (user + system: on a shared machine the steadier of the two).
// usage: maroon-bench-pool-grad [--threads T] [batch]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "bench_args.h"
#include "maroon/backend.h"
#include "maroon/maroon.h"

using namespace maroon;

namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t batch = threads_and_batch(argc, argv, 512);
  Tensor::manual_seed(0);
  const int reps = 15;
  Tensor x = Tensor::randn({batch, 32, 20, 20}).realize();
  Tensor g = Tensor::randn({batch, 32, 10, 10}).realize();
  double best_wall = 1e30, best_cpu = 1e30;
  for (int r = 0; r < reps; ++r) {
    Tensor xr = x.detach();
    Tensor y = xr.max_pool2d({2, 2});
    y.realize();
    auto t0 = std::chrono::steady_clock::now();
    const double c0 = cpu_seconds();
    (y * g.detach()).sum().backward();  // g.detach(): no gradient for g accumulated rep after rep
    xr.grad()->sum().realize();  // the gradient kept by .grad and read by a sum, as the CNN's batchnorm reads it
    best_cpu = std::min(best_cpu, cpu_seconds() - c0);
    best_wall = std::min(best_wall, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("threads %d, batch %lld: max_pool2d gradient best %.2f ms wall, %.2f ms CPU\n", num_threads(),
              static_cast<long long>(batch), best_wall * 1e3, best_cpu * 1e3);
  return 0;
}
