// mmul through Maroon's Lagoon C ABI against the scalar soft-float loop a software jet runs
// (SoftBLAS sgemm over SoftFloat): per output, acc = +0, acc = add(acc, mul(a_ik, b_kj)) for k
// ascending, with Maroon's integer soft-float (sf::add, sf::mul) as the software float. Both
// produce the same bits (checked here); the ratio of their times is printed.
//
//   maroon_lagoon_bench [n]     (square n x n matrices; default 256)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "maroon/lagoon.h"
#include "float/softfloat.h"

namespace sf = maroon::sf;
using maroon::Round;
using Clock = std::chrono::steady_clock;

static double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

template <class U>
static int run(int bloq, uint64_t n, char rnd, Round r) {
  const sf::Format F = bloq == 4 ? sf::kF16 : bloq == 5 ? sf::kF32 : sf::kF64;
  const size_t w = sizeof(U);
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<uint8_t> A(n * n * w + 1), B(n * n * w + 1);
  for (uint64_t i = 0; i < n * n; ++i) {
    U a = U(sf::convert(sf::kF64, F, sf::bits_of(dist(rng)), Round::NearestEven));
    U b = U(sf::convert(sf::kF64, F, sf::bits_of(dist(rng)), Round::NearestEven));
    std::memcpy(&A[i * w], &a, w);
    std::memcpy(&B[i * w], &b, w);
  }
  A.back() = B.back() = 1;  // pins
  uint64_t shape[2] = {n, n};
  maroon_lagoon_ray ra{{shape, 2, uint32_t(bloq), MAROON_LAGOON_I754}, A.data(), A.size()};
  maroon_lagoon_ray rb{{shape, 2, uint32_t(bloq), MAROON_LAGOON_I754}, B.data(), B.size()};

  // Maroon: repeat until at least 0.3 s has passed, report the mean.
  maroon_lagoon_result res{};
  maroon_lagoon_error err{};
  int reps = 0;
  auto t0 = Clock::now();
  do {
    if (reps) maroon_lagoon_result_free(&res);
    if (maroon_lagoon_mmul(&ra, &rb, rnd, &res, &err) != 0) {
      std::fprintf(stderr, "mmul failed: %s\n", err.message);
      return 1;
    }
    ++reps;
  } while (seconds_since(t0) < 0.3);
  const double t_maroon = seconds_since(t0) / reps;

  // The soft-float loop, once.
  std::vector<U> C(n * n);
  t0 = Clock::now();
  for (uint64_t i = 0; i < n; ++i)
    for (uint64_t j = 0; j < n; ++j) {
      uint64_t acc = 0;
      for (uint64_t k = 0; k < n; ++k) {
        U a, b;
        std::memcpy(&a, &A[(i * n + k) * w], w);
        std::memcpy(&b, &B[(k * n + j) * w], w);
        acc = sf::add(F, acc, sf::mul(F, a, b, r), r);
      }
      C[i * n + j] = U(acc);
    }
  const double t_sf = seconds_since(t0);

  bool same = std::memcmp(C.data(), res.data, n * n * w) == 0 && res.len == n * n * w + 1;
  maroon_lagoon_result_free(&res);
  const double flops = 2.0 * double(n) * n * n;
  std::printf("mmul %3llux%-3llu bloq %d mode %c: maroon %9.3f ms (%7.2f GFLOP/s)  sf loop %9.1f ms  "
              "ratio %7.1fx  bits %s\n",
              (unsigned long long)n, (unsigned long long)n, bloq, rnd, t_maroon * 1e3, flops / t_maroon * 1e-9,
              t_sf * 1e3, t_sf / t_maroon, same ? "identical" : "DIFFER");
  return same ? 0 : 2;
}

int main(int argc, char** argv) {
  uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 256;
  int rc = 0;
  for (auto [c, r] : {std::pair{'z', Round::TowardZero}, std::pair{'n', Round::NearestEven}}) {
    rc |= run<uint32_t>(5, n, c, r);
    rc |= run<uint64_t>(6, n, c, r);
  }
  rc |= run<uint16_t>(4, n / 2, 'z', Round::TowardZero);
  return rc;
}
