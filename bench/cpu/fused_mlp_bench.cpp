// An MNIST-shaped MLP training step (784-512-512-10, ReLU, batch 128, Adam lr 1e-3, sparse
// categorical cross-entropy, synthetic data) in the default mode and with FusedScope (every
// matmul, forward and backward, a chain of FMAs): milliseconds per step, both modes in one run.
// Usage: maroon-bench-fused-mlp [--threads N]   (MAROON_BENCH_STEPS steps, default 10)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "maroon/backend.h"
#include "maroon/maroon.h"
#include "maroon/nn.h"
#include "maroon/optim.h"

using namespace maroon;

namespace {

// Milliseconds of each step after one warm-up step.
std::vector<double> steps(bool fused, int n) {
  Tensor::manual_seed(0);
  TrainingScope training;
  FusedScope scope(fused);
  nn::Linear l1(784, 512), l2(512, 512), l3(512, 10);
  std::vector<Tensor> params = nn::get_parameters({&l1, &l2, &l3});
  optim::Adam opt(params, 1e-3);
  Tensor x = Tensor::rand({128, 784}).realize();
  Tensor y = Tensor::randint({128}, 0, 10).realize();
  std::vector<double> ms;
  for (int s = 0; s < 1 + n; ++s) {
    auto t0 = std::chrono::steady_clock::now();
    opt.zero_grad();
    Tensor loss = l3(l2(l1(x).relu()).relu()).sparse_categorical_crossentropy(y);
    loss.backward();
    opt.step();
    loss.realize();
    if (s > 0) ms.push_back(1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2 && !std::strcmp(argv[1], "--threads")) set_num_threads(std::atoi(argv[2]));
  const int n = std::getenv("MAROON_BENCH_STEPS") ? std::atoi(std::getenv("MAROON_BENCH_STEPS")) : 10;
  std::printf("| threads | mode | mean ms/step | best ms/step |\n|---|---|---|---|\n");
  for (bool fused : {false, true}) {
    std::vector<double> ms = steps(fused, n);
    double mean = 0;
    for (double v : ms) mean += v / ms.size();
    std::printf("| %d | %s | %.2f | %.2f |\n", num_threads(), fused ? "fused" : "default", mean,
                *std::min_element(ms.begin(), ms.end()));
  }
  return 0;
}
