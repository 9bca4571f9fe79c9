// This machine's bound for an unfused product against a fused one: one thread's GFLOP/s of
// separate vector multiplies and adds (Maroon's products: the spec rounds each product, then
// each sum) and of fused multiply-adds (BLAS, ONNX Runtime), on the best SIMD target. Where the
// two share the same ports (Intel's cores: multiply, add and FMA all issue to the same two
// ports) the ratio is about 0.5, and a product-bound model cannot pass it against an FMA
// library; where adds and multiplies have pipes of their own (AMD Zen 4), it is about 1.
// Prints {"mul_add_gflops": ..., "fma_gflops": ..., "ratio": ...} for float32: the best of 5
// alternating runs of each (a busy neighbour lowers a run; it never raises one).
#include <algorithm>
#include <cstdio>

#include "peak.h"

int main() {
  double mul_add = 0, fma = 0;
  for (int i = 0; i < 5; ++i) {
    mul_add = std::max(mul_add, maroon::bench::peak_mul_add_gflops<float>());
    fma = std::max(fma, maroon::bench::peak_fma_gflops<float>());
  }
  std::printf("{\"mul_add_gflops\": %.1f, \"fma_gflops\": %.1f, \"ratio\": %.3f}\n", mul_add, fma, mul_add / fma);
  return 0;
}
