// The MNIST-shaped MLP training step both MLP benchmarks time: 784-512-512-10, ReLU, batch 128,
// Adam lr 1e-3, sparse categorical cross-entropy, synthetic data (bench/cpu/mlp_step_torch.py is
// the same step in PyTorch).
#pragma once
#include <chrono>
#include <vector>

#include "maroon/maroon.h"
#include "maroon/nn.h"
#include "maroon/optim.h"

namespace maroon::bench {

// Milliseconds of each of n steps, after one warm-up step; fused: every matmul inside FusedScope.
inline std::vector<double> mlp_step_ms(int n, bool fused = false) {
  Tensor::manual_seed(0);
  TrainingScope training;
  FusedScope scope(fused);
  nn::Linear l1(784, 512), l2(512, 512), l3(512, 10);
  optim::Adam opt(nn::get_parameters({&l1, &l2, &l3}), 1e-3);
  Tensor x = Tensor::rand({128, 784}).realize();
  Tensor y = Tensor::randint({128}, 0, 10).realize();
  std::vector<double> ms;
  for (int s = 0; s < 1 + n; ++s) {
    auto t0 = std::chrono::steady_clock::now();
    opt.zero_grad();
    // A fresh leaf on the batch each step, as a data loader gives: backward() gives every
    // float tensor of the graph a gradient (tinygrad's rule), so one input tensor reused across
    // steps would accumulate a lazy gradient graph holding every step's buffers.
    Tensor batch = x.realized_leaf();
    Tensor loss = l3(l2(l1(batch).relu()).relu()).sparse_categorical_crossentropy(y);
    loss.backward();
    opt.step();
    loss.realize();
    if (s > 0) ms.push_back(1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return ms;
}

}  // namespace maroon::bench
