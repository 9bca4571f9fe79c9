// Adam's step alone on one MNIST-MLP-shaped parameter (512 x N, default N = 784), one thread: the
// median milliseconds of `steps` optimizer steps (m, v and the parameter's kernels, plus building
// and planning their graphs), the arrays hot in L2/L3. With MAROON_PROFILE=1 each kernel's time.
// Usage: maroon-bench-adam-step [N] [steps]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "maroon/backend.h"
#include "maroon/maroon.h"
#include "maroon/optim.h"

using namespace maroon;

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 784;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 200;
  if (n <= 0 || steps <= 0) {
    std::fprintf(stderr, "usage: maroon-bench-adam-step [N > 0] [steps > 0]\n");
    return 2;
  }
  set_num_threads(1);
  Tensor::manual_seed(0);
  TrainingScope training;
  Tensor w = Tensor::rand({512, n}).realize();
  optim::Adam opt({w}, 1e-3);
  Tensor g = Tensor::rand({512, n}).realize();
  std::vector<double> ms;
  for (int s = 0; s < steps; ++s) {
    w.set_grad(g.realized_leaf());
    auto t0 = std::chrono::steady_clock::now();
    opt.step();
    w.realize();
    ms.push_back(1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("adam step 512x%d: median %.3f ms, min %.3f ms\n", n, ms[ms.size() / 2], ms[0]);
  return 0;
}
