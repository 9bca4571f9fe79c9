// Matmul throughput: Maroon's deterministic matmul (MUL + REDUCE ADD, summed in increasing k,
// multiply and add rounded separately) against OpenBLAS's sgemm/dgemm run in the same process
// on the same data, and against this machine's peak for separate vector multiplies and adds.
// Usage: maroon-bench-matmul [--threads N] [--sizes 64,128,...]
// OpenBLAS picks its kernel from OPENBLAS_CORETYPE at load time: run once as is and once with
// OPENBLAS_CORETYPE=SkylakeX (bench/cpu/run.sh does both).
#include <cblas.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "maroon/backend.h"
#include "maroon/maroon.h"
#include "square_operands.h"
#include "peak.h"

using namespace maroon;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <class T>
double best_of(int reps, const std::function<void()>& f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, seconds_since(t0));
  }
  return best;
}

// Maroon's time for n x n (best of reps), then OpenBLAS's: all of Maroon's sizes run before
// OpenBLAS is first called, because OpenBLAS's threads spin for a while after each call and, on
// a machine with as many cores as threads, take a core from whatever runs next.
// Small products take microseconds: many more repetitions, so that the best of them is one the
// load of a shared machine did not interrupt.
int reps_for(int n) { return n <= 128 ? 400 : n <= 256 ? 20 : n <= 1024 ? 5 : 2; }

template <class T>
double time_maroon(int n) {
  bench::SquareOperands<T> m(n);
  const Tensor &ta = m.ta, &tb = m.tb;
  return best_of<T>(reps_for(n), [&] {
    Tensor y = prim::mul(ta.reshape({n, n, 1}).expand({n, n, n}), tb.reshape({1, n, n}).expand({n, n, n}))
                   .reduce(ReduceOp::ADD, {1});
    y.realize();
  });
}

template <class T>
double time_blas(int n) {
  bench::SquareOperands<T> m(n);
  std::vector<T>&a = m.a, &b = m.b, &c = m.c;
  return best_of<T>(reps_for(n), [&] {
    if constexpr (sizeof(T) == 4)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.f, a.data(), n, b.data(), n, 0.f, c.data(), n);
    else
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n);
  });
}

template <class T>
void print_row(int n, double t_maroon, double t_blas, double peak) {
  double flops = 2.0 * n * n * n;
  double gm = flops / t_maroon / 1e9, gb = flops / t_blas / 1e9;
  std::printf("| %s | %d | %.1f | %.1f | %.2f | %.0f%% |\n", sizeof(T) == 4 ? "float32" : "float64", n, gm,
              gb, gm / gb, 100 * gm / (peak * num_threads()));
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes{32, 64, 96, 128, 256, 512, 1024, 2048};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--threads")) set_num_threads(std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--sizes")) {
      sizes.clear();
      std::stringstream ss(argv[i + 1]);
      for (std::string s; std::getline(ss, s, ',');) sizes.push_back(std::stoi(s));
    }
  }
  openblas_set_num_threads(num_threads());
  const char* core = std::getenv("OPENBLAS_CORETYPE");
  double pf = bench::peak_mul_add_gflops<float>(), pd = bench::peak_mul_add_gflops<double>();
  std::printf("threads %d, SIMD %s, OpenBLAS core %s (%s)\n", num_threads(), simd_target().c_str(),
              openblas_get_corename(), core ? core : "default");
  std::printf("peak of separate vector mul+add, one thread: float32 %.1f GFLOP/s, float64 %.1f GFLOP/s\n\n", pf, pd);
  std::printf("| dtype | N | Maroon GFLOP/s | OpenBLAS GFLOP/s | Maroon/OpenBLAS | Maroon/peak |\n|---|---|---|---|---|---|\n");
  std::vector<double> mf, md, bf, bd;
  for (int n : sizes) mf.push_back(time_maroon<float>(n));
  for (int n : sizes) md.push_back(time_maroon<double>(n));
  for (int n : sizes) bf.push_back(time_blas<float>(n));
  for (int n : sizes) bd.push_back(time_blas<double>(n));
  for (size_t i = 0; i < sizes.size(); ++i) print_row<float>(sizes[i], mf[i], bf[i], pf);
  for (size_t i = 0; i < sizes.size(); ++i) print_row<double>(sizes[i], md[i], bd[i], pd);
  return 0;
}
