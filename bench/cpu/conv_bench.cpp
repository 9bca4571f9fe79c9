// conv2d forward on the MNIST CNN's layer shapes (tinygrad's beautiful_mnist): GFLOP/s, and as a
// fraction of Maroon's own float32 matmul at N=512 measured in the same run (the goal is
// half of matmul's efficiency or better). PyTorch's numbers: bench/cpu/conv_torch.py.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "best_ms.h"
#include "maroon/backend.h"
#include "maroon/maroon.h"

using namespace maroon;

int main(int argc, char** argv) {
  if (argc > 2 && !std::strcmp(argv[1], "--threads")) set_num_threads(std::atoi(argv[2]));
  const int64_t batch = 64;
  Tensor::manual_seed(0);
  Tensor a = Tensor::rand({512, 512}).realize(), b = Tensor::rand({512, 512}).realize();
  double mm_ms = best_ms(5, [&] { Tensor c = a.matmul(b); c.realize(); });
  double mm_gflops = 2.0 * 512 * 512 * 512 / mm_ms / 1e6;
  std::printf("threads %d, SIMD %s; float32 matmul N=512: %.1f GFLOP/s\n\n", num_threads(),
              simd_target().c_str(), mm_gflops);
  std::printf("| layer (batch %lld) | ms | GFLOP/s | / matmul |\n|---|---|---|---|\n",
              static_cast<long long>(batch));
  struct Layer { const char* name; int64_t cin, cout, hw, k; };
  for (Layer l : {Layer{"conv 1->32 5x5 on 28x28", 1, 32, 28, 5}, Layer{"conv 32->32 5x5 on 24x24", 32, 32, 24, 5},
                  Layer{"conv 32->64 3x3 on 10x10", 32, 64, 10, 3}, Layer{"conv 64->64 3x3 on 8x8", 64, 64, 8, 3}}) {
    Tensor x = Tensor::rand({batch, l.cin, l.hw, l.hw}).realize();
    Tensor w = Tensor::rand({l.cout, l.cin, l.k, l.k}).realize();
    double ms = best_ms(3, [&] { Tensor y = x.conv2d(w); y.realize(); });
    int64_t o = l.hw - l.k + 1;
    double flops = 2.0 * batch * l.cout * o * o * l.cin * l.k * l.k;
    std::printf("| %s | %.1f | %.1f | %.2f |\n", l.name, ms, flops / ms / 1e6, flops / ms / 1e6 / mm_gflops);
  }
  return 0;
}
