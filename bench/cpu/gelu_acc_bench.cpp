// The ONNX transformer's GELU epilogue alone, one thread: its fused matmul with the bias and PyTorch
// 1.13's exported GELU (x = h + b; x * (1 + erf(x / sqrt2)) * 0.5, as src/onnx builds it), the
// same program on a realized x (the elementwise kernel over whole tiles, its constants
// broadcast), and the matmul with the bias alone; each with the accumulator machine's known
// programs (src/cpu/acc_known.h) on and off, alternating, `rounds` times. Prints the medians of
// each round's best of `reps` runs, per element, and the ratios on/off per round.
// Usage: maroon-bench-gelu-acc [rounds] [reps]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "best_ms.h"
#include "cpu/acc_known.h"
#include "maroon/backend.h"
#include "maroon/maroon.h"

using namespace maroon;

namespace {
Tensor gelu(const Tensor& x) {
  return x.div(Tensor::full({}, std::sqrt(2.0), DType::Float32)).erf().add(1.0).mul(x).mul(0.5);
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 20;
  if (rounds <= 0 || reps <= 0) {
    std::fprintf(stderr, "usage: maroon-bench-gelu-acc [rounds > 0] [reps > 0]\n");
    return 2;
  }
  set_num_threads(1);
  Tensor::manual_seed(0);
  const int64_t batch = 32, rows = 64, k = 64, cols = 256;  // the transformer's (32, 64, 256)
  const double elts = static_cast<double>(batch * rows * cols);
  Tensor a = Tensor::randn({batch, rows, k}).realize(), w = (Tensor::randn({k, cols}) * 0.125).realize();
  Tensor b = (Tensor::randn({cols}) * 0.1).realize();
  Tensor x = (a.matmul(w) + b).realize();
  // No handle on x while the graph runs (one would make the kernel write it too).
  auto epilogue = [&] {
    const FusedScope fused;  // products as the fused transformer's (REDUCE_MULACC)
    Tensor x = a.matmul(w) + b;
    return gelu(x);
  };
  const char* names[] = {"matmul+bias+gelu", "gelu elementwise", "matmul+bias"};
  std::vector<double> ms[3][2], ratio[3];
  for (int r = 0; r < rounds; ++r) {
    double t[3][2];
    for (int on = 0; on < 2; ++on) {
      cpu::set_acc_known_programs(on == 1);
      const int64_t known = cpu::acc_known_runs();
      t[0][on] = best_ms(reps, [&] { epilogue().realize(); });
      t[1][on] = best_ms(reps, [&] { gelu(x).realize(); });
      t[2][on] = best_ms(reps, [&] {
        const FusedScope fused;
        (a.matmul(w) + b).realize();
      });
      if ((cpu::acc_known_runs() > known) != (on == 1)) {
        std::fprintf(stderr, "the known program %s\n", on ? "did not run" : "ran while off");
        return 1;
      }
    }
    for (int c = 0; c < 3; ++c) {
      for (int on = 0; on < 2; ++on) ms[c][on].push_back(t[c][on]);
      ratio[c].push_back(t[c][1] / t[c][0]);
    }
  }
  cpu::set_acc_known_programs(true);
  for (int c = 0; c < 3; ++c) {
    std::printf("%-17s off %.3f ns/elt, on %.3f ns/elt, on/off %.3f (rounds:", names[c],
                median(ms[c][0]) * 1e6 / elts, median(ms[c][1]) * 1e6 / elts, median(ratio[c]));
    for (double q : ratio[c]) std::printf(" %.3f", q);
    std::printf(")\n");
  }
  return 0;
}
