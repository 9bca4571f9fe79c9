// One training step of an MNIST-shaped MLP (784-512-512-10, ReLU, batch 128, Adam lr 1e-3,
// sparse categorical cross-entropy) on synthetic data: milliseconds per step on Maroon's CPU
// backend. bench/cpu/mlp_step_torch.py times the same step in PyTorch; run.sh prints both.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "maroon/backend.h"
#include "maroon/maroon.h"
#include "maroon/nn.h"
#include "maroon/optim.h"

using namespace maroon;

int main(int argc, char** argv) {
  if (argc > 2 && !std::strcmp(argv[1], "--threads")) set_num_threads(std::atoi(argv[2]));
  Tensor::manual_seed(0);
  TrainingScope training;
  nn::Linear l1(784, 512), l2(512, 512), l3(512, 10);
  std::vector<Tensor> params = nn::get_parameters({&l1, &l2, &l3});
  optim::Adam opt(params, 1e-3);
  Tensor x = Tensor::rand({128, 784}).realize();
  Tensor y = Tensor::randint({128}, 0, 10).realize();
  const int warmup = 1, steps = std::getenv("MAROON_BENCH_STEPS") ? std::atoi(std::getenv("MAROON_BENCH_STEPS")) : 10;
  double total = 0;
  for (int s = 0; s < warmup + steps; ++s) {
    auto t0 = std::chrono::steady_clock::now();
    opt.zero_grad();
    Tensor loss = l3(l2(l1(x).relu()).relu()).sparse_categorical_crossentropy(y);
    loss.backward();
    opt.step();
    loss.realize();
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s >= warmup) total += dt;
  }
  std::printf("maroon %d %.2f\n", num_threads(), 1e3 * total / steps);
  return 0;
}
