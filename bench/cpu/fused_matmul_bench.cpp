// The opt-in fused matmul (REDUCE_MULACC: each output a chain of FMAs from +0 in increasing k)
// against OpenBLAS's sgemm/dgemm forced to its best kernel on this CPU (OPENBLAS_CORETYPE=
// SkylakeX), in the same process on the same data, with Maroon's default (unfused) matmul
// alongside. OpenBLAS reads OPENBLAS_CORETYPE when it is loaded, so the program re-executes
// itself with it set when it is missing.
// Usage: maroon-bench-fused-matmul [--threads N] [--sizes 64,128,...] [--reps R]
// Each cell is the best of R rounds (default 5); each round times every contender once, in
// turn, so a busy machine slows all of them alike. With one thread the last column compares the
// calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID: both libraries compute on the caller's
// thread then), which time spent descheduled on a shared machine does not inflate.
#include <cblas.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
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

using namespace maroon;

namespace {

double thread_cpu() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Time { double wall, cpu; };

Time seconds(const std::function<void()>& f) {
  auto t0 = std::chrono::steady_clock::now();
  const double c0 = thread_cpu();
  f();
  return {std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), thread_cpu() - c0};
}

template <class T>
void run(int n, int rounds) {
  bench::SquareOperands<T> m(n);
  std::vector<T>&a = m.a, &b = m.b, &c = m.c;
  const Tensor &ta = m.ta, &tb = m.tb;
  const int inner = n <= 128 ? 20 : n <= 512 ? 3 : 1;  // calls per timing, for small sizes
  auto fused = [&] { for (int i = 0; i < inner; ++i) ta.matmul(tb, std::nullopt, true).realize(); };
  auto plain = [&] { for (int i = 0; i < inner; ++i) ta.matmul(tb, std::nullopt, false).realize(); };
  auto blas = [&] {
    for (int i = 0; i < inner; ++i) {
      if constexpr (sizeof(T) == 4)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.f, a.data(), n, b.data(), n, 0.f, c.data(), n);
      else
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n);
    }
  };
  fused(); blas();  // warm up: allocations, thread pools, pages
  std::vector<double> tf, tb2, tp, cf, cb;
  for (int r = 0; r < rounds; ++r) {
    Time f = seconds(fused), b = seconds(blas);
    tf.push_back(f.wall);
    cf.push_back(f.cpu);
    tb2.push_back(b.wall);
    cb.push_back(b.cpu);
    tp.push_back(seconds(plain).wall);
  }
  auto best = [](std::vector<double> v) { return *std::min_element(v.begin(), v.end()); };
  auto median = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
  const double flops = 2.0 * n * n * n * inner / 1e9;
  const double gf = flops / best(tf), gb = flops / best(tb2), gp = flops / best(tp);
  char cpu[32] = "-";
  if (num_threads() == 1) std::snprintf(cpu, sizeof cpu, "%.2f", best(cb) / best(cf));
  std::printf("| %s | %d | %.1f | %.1f | %.2f | %.2f | %s | %.1f |\n", sizeof(T) == 4 ? "float32" : "float64", n, gf,
              gb, gf / gb, median(tb2) / median(tf), cpu, gp);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (!std::getenv("OPENBLAS_CORETYPE")) {
    setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
    execv("/proc/self/exe", argv);
    std::perror("execv");
    return 1;
  }
  std::vector<int> sizes{64, 128, 256, 512, 1024, 2048};
  int rounds = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--threads")) set_num_threads(std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--reps")) rounds = std::max(1, std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--sizes")) {
      sizes.clear();
      std::stringstream ss(argv[i + 1]);
      for (std::string s; std::getline(ss, s, ',');) sizes.push_back(std::stoi(s));
    }
  }
  openblas_set_num_threads(num_threads());
  std::printf("threads %d, SIMD %s, OpenBLAS core %s (OPENBLAS_CORETYPE=%s), best of %d rounds\n\n", num_threads(),
              simd_target().c_str(), openblas_get_corename(), std::getenv("OPENBLAS_CORETYPE"), rounds);
  std::printf("| dtype | N | fused GFLOP/s | OpenBLAS GFLOP/s | fused/OpenBLAS (best) | fused/OpenBLAS (median) | "
              "fused/OpenBLAS (CPU time) | default GFLOP/s |\n|---|---|---|---|---|---|---|---|\n");
  for (int n : sizes) run<float>(n, rounds);
  for (int n : sizes) run<double>(n, rounds);
  return 0;
}
