// Helpers for the API tests: deterministic host-side random inputs and value access.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "maroon/maroon.h"

namespace maroon::apitest {

// Uniform values in [lo, hi), from a fixed seed (std::mt19937 is specified bit for bit).
inline std::vector<double> uniform_values(size_t n, double lo, double hi, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<double> v(n);
  for (auto& x : v) {
    // mt19937's raw output (not a distribution, whose algorithm is implementation-defined).
    double u = static_cast<double>(gen()) / 4294967296.0;
    x = lo + (hi - lo) * u;
  }
  return v;
}

inline int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

inline Tensor f64(const std::vector<double>& v, const Shape& s) { return Tensor::from_vector<double>(v, s); }
inline Tensor f32(const std::vector<double>& v, const Shape& s) {
  std::vector<float> f(v.begin(), v.end());
  return Tensor::from_vector<float>(f, s);
}

inline Tensor rand64(const Shape& s, uint32_t seed, double lo = -2, double hi = 2) {
  return f64(uniform_values(numel_of(s), lo, hi, seed), s);
}

}  // namespace maroon::apitest
