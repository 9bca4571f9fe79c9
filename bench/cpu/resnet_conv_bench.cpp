// The ONNX ResNet's conv2d shapes (bench/onnx/export_models.py, batch 32), each timed alone the way
// src/onnx/ops_nn.cpp runs it: the padded input realized first, then conv2d + bias + ReLU with the
// default (unfused) matmul, or with --fused the fused one (REDUCE_MULACC). Best of REPS runs, ms and
// G multiply-adds per second.
// usage: maroon-bench-resnet-conv [REPS] [--threads T] [--only I] [--fused] (I: the layer's row, from 0)
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "best_ms.h"
#include "maroon/backend.h"
#include "maroon/maroon.h"

using namespace maroon;

int main(int argc, char** argv) {
  int reps = 20, only = -1;
  bool fused = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) set_num_threads(std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--fused")) fused = true;
    else reps = std::atoi(argv[i]);
  }
  const int64_t batch = 32;
  Tensor::manual_seed(0);
  std::printf("threads %d, SIMD %s, %s products, best of %d\n| conv | ms | G mul-add/s |\n|---|---|---|\n", num_threads(),
              simd_target().c_str(), fused ? "fused" : "unfused", reps);
  struct Layer { int64_t cin, cout, hw, k, stride; };
  int row = -1;
  for (Layer l : {Layer{3, 16, 32, 3, 1}, Layer{16, 16, 32, 3, 1}, Layer{16, 32, 32, 3, 2}, Layer{16, 32, 32, 1, 2},
                  Layer{32, 32, 16, 3, 1}, Layer{32, 64, 16, 3, 2}, Layer{32, 64, 16, 1, 2}, Layer{64, 64, 8, 3, 1}}) {
    if (++row != only && only >= 0) continue;
    const int64_t p = l.k / 2;
    Tensor x = Tensor::randn({batch, l.cin, l.hw, l.hw}).realize();
    if (p) x = x.pad({{0, 0}, {0, 0}, {p, p}, {p, p}}).mul(Tensor::full({}, 1.0, x.dtype())).realize();
    Tensor w = Tensor::randn({l.cout, l.cin, l.k, l.k}).realize(), b = Tensor::randn({l.cout}).realize();
    const double ms = best_ms(reps, [&] {
      Tensor y = x.conv2d(w, b, 1, {l.stride}, {1}, {0}, fused).relu();
      y.realize();
    });
    const int64_t o = (l.hw + 2 * p - l.k) / l.stride + 1;
    const double macs = double(batch) * l.cout * o * o * l.cin * l.k * l.k;
    std::printf("| %lld->%lld %lldx%lld s%lld on %lldx%lld | %.3f | %.1f |\n", (long long)l.cin, (long long)l.cout,
                (long long)l.k, (long long)l.k, (long long)l.stride, (long long)l.hw, (long long)l.hw, ms,
                macs / ms / 1e6);
  }
  return 0;
}
