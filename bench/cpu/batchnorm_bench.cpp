// BatchNorm's training forward and gradient on beautiful_mnist's first batchnorm, (batch, 32,
// 20, 20): the forward realized, then the gradients one at a time as the optimizer asks for
// them (the input's, the weight's, the bias's), best of several runs. With MAROON_PROFILE=1 each
// kernel's time and each node written out.
// usage: maroon-bench-batchnorm [--threads T] [batch]
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "best_ms.h"
#include "bench_args.h"
#include "maroon/backend.h"
#include "maroon/maroon.h"
#include "maroon/nn.h"

using namespace maroon;

int main(int argc, char** argv) {
  const int64_t batch = threads_and_batch(argc, argv, 512);
  Tensor::manual_seed(0);
  Tensor x = Tensor::randn({batch, 32, 20, 20}).realize();
  Tensor g = Tensor::randn({batch, 32, 20, 20}).realize();
  TrainingScope training(true);
  const double ms = best_ms(10, [&] {
    nn::BatchNorm bn(32);
    Tensor xr = x.detach();
    Tensor y = bn(xr);
    y.realize();
    (y * g.detach()).sum().backward();  // g.detach(): no gradient for g accumulated rep after rep
    xr.grad()->realize();
    bn.weight->grad()->realize();
    bn.bias->grad()->realize();
  });
  std::printf("threads %d, batch %lld: batchnorm forward and gradients best %.2f ms\n", num_threads(),
              static_cast<long long>(batch), ms);
  return 0;
}
