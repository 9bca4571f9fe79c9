// The operands both matmul benchmarks time: two n x n matrices of uniform values in [-1, 1)
// (seeded by n), as host arrays for OpenBLAS and as Maroon tensors, and an output array.
#pragma once
#include <random>
#include <vector>

#include "maroon/maroon.h"

namespace maroon::bench {

template <class T>
struct SquareOperands {
  explicit SquareOperands(int n) : a(size_t(n) * n), b(size_t(n) * n), c(size_t(n) * n) {
    std::mt19937 rng(n);
    std::uniform_real_distribution<double> u(-1, 1);
    for (auto& v : a) v = static_cast<T>(u(rng));
    for (auto& v : b) v = static_cast<T>(u(rng));
    ta = Tensor::from_vector(a, {n, n});
    tb = Tensor::from_vector(b, {n, n});
  }
  std::vector<T> a, b, c;
  Tensor ta = Tensor::zeros({1}), tb = Tensor::zeros({1});
};

}  // namespace maroon::bench
