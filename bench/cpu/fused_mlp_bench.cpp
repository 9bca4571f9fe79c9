// The MNIST-shaped MLP training step (bench/cpu/mlp_step.h) in the default mode and with
// FusedScope (every matmul, forward and backward, a chain of FMAs): milliseconds per step, both modes in one run.
// Usage: maroon-bench-fused-mlp [--threads N]   (MAROON_BENCH_STEPS steps, default 10)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "maroon/backend.h"
#include "maroon/settings.h"
#include "mlp_step.h"

using namespace maroon;

int main(int argc, char** argv) {
  if (argc > 2 && !std::strcmp(argv[1], "--threads")) set_num_threads(std::atoi(argv[2]));
  const int n = std::atoi(setting(SettingId::MAROON_BENCH_STEPS).value_or("10").c_str());
  std::printf("| threads | mode | mean ms/step | best ms/step |\n|---|---|---|---|\n");
  for (bool fused : {false, true}) {
    std::vector<double> ms = bench::mlp_step_ms(n, fused);
    double mean = 0;
    for (double v : ms) mean += v / ms.size();
    std::printf("| %d | %s | %.2f | %.2f |\n", num_threads(), fused ? "fused" : "default", mean,
                *std::min_element(ms.begin(), ms.end()));
  }
  return 0;
}
