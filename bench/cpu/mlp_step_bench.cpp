// One training step of an MNIST-shaped MLP (bench/cpu/mlp_step.h): mean milliseconds per step on
// Maroon's CPU backend over MAROON_BENCH_STEPS steps (default 10) after a warm-up step.
// bench/cpu/mlp_step_torch.py times the same step in PyTorch; run.sh prints both.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "maroon/backend.h"
#include "maroon/settings.h"
#include "mlp_step.h"

using namespace maroon;

int main(int argc, char** argv) {
  if (argc > 2 && !std::strcmp(argv[1], "--threads")) set_num_threads(std::atoi(argv[2]));
  const int n = std::atoi(setting(SettingId::MAROON_BENCH_STEPS).value_or("10").c_str());
  double mean = 0;
  for (double v : bench::mlp_step_ms(n)) mean += v / n;
  std::printf("maroon %d %.2f\n", num_threads(), mean);
  return 0;
}
