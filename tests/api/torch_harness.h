// Runs PyTorch (Debian's python3-torch, MAROON_PYTHON) once for a batch of cases and compares
// Maroon's forward values and gradients with it.
//
// Every input is float32 (or int32/int64 for index inputs) generated here, sent to Python as exact
// hex floats, optionally viewed through a permutation (a non-contiguous view in both libraries;
// gradients are taken with respect to the un-permuted base), and optionally quantized to
// multiples of 0.5 so that ties and zeros occur. The backward pass differentiates
// sum(f(x) * w) for a random weight w of f's shape.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "util.h"

namespace maroon::torchtest {

struct Input {
  Shape shape;              // the base (contiguous) shape
  double lo = -2, hi = 2;
  bool integer = false;     // int64 values in [lo, hi)
  bool quantize = false;    // round to multiples of 0.5: ties and zeros
  std::vector<int64_t> perm;  // non-empty: the op sees base.permute(perm)
  bool grad = true;         // float inputs only
};

struct Case {
  std::string name;
  std::vector<Input> inputs;
  std::function<Tensor(const std::vector<Tensor>&)> maroon;
  std::string torch;  // a Python expression over x0, x1, ... (torch tensors); F is torch.nn.functional
  bool backward = true;
  double atol = 1e-5, rtol = 1e-4;            // forward
  double grad_atol = 1e-4, grad_rtol = 1e-3;  // backward
};

struct Outcome {
  int cases = 0, forward_checked = 0, backward_checked = 0;
};

// Runs every case in Maroon and in PyTorch and records gtest failures for mismatches.
Outcome run_cases(const std::vector<Case>& cases, uint32_t seed);

}  // namespace maroon::torchtest
