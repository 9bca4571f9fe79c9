// Elementwise work with a per-channel leaf broadcast over (batch, channel, h, w) (a bias, a
// batchnorm's mean), alone and summed over h and w (a ResNet's last block into its average
// pool), each timed alone, best of several runs.
// usage: maroon-bench-broadcast [--threads T] [--reps N] [--only add|bias|sum|bsum]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench_args.h"
#include "best_ms.h"
#include "maroon/backend.h"
#include "maroon/maroon.h"

using namespace maroon;

int main(int argc, char** argv) {
  int reps = 50;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--threads") && has_value) set_num_threads(static_cast<int>(bench_int(argv[++i], "--threads", 1, 256)));
    else if (!std::strcmp(argv[i], "--reps") && has_value) reps = static_cast<int>(bench_int(argv[++i], "--reps", 1, 1000000));
    else if (!std::strcmp(argv[i], "--only") && has_value) only = argv[++i];
    else {
      std::fprintf(stderr, "usage: maroon-bench-broadcast [--threads T] [--reps N] [--only add|bias|sum|bsum]\n");
      return 2;
    }
  }
  if (!only.empty() && only != "add" && only != "bias" && only != "sum" && only != "bsum") {
    std::fprintf(stderr, "--only: '%s' is not one of add, bias, sum, bsum\n", only.c_str());
    return 2;
  }
  auto best = [&](const char* name, auto f) { return !only.empty() && only != name ? 0.0 : best_ms(reps, f); };
  Tensor::manual_seed(0);
  for (const Shape& s : {Shape{32, 64, 8, 8}, Shape{32, 32, 16, 16}, Shape{64, 64, 6, 6}, Shape{64, 32, 20, 20}}) {
    Tensor x = Tensor::rand(s).realize(), y = Tensor::rand(s).realize(), b = Tensor::rand({1, s[1], 1, 1}).realize();
    const double add = best("add", [&] { (x + y).realize(); });
    const double bias = best("bias", [&] { (x + y + b).relu().realize(); });
    const double sum = best("sum", [&] { (x + y).sum(Axis{2, 3}).realize(); });
    // Built so that no intermediate has a handle when it runs (as a lazily built ONNX graph):
    // the chain is then fused into the sum's kernel.
    const double bsum = best("bsum", [&] {
      Tensor r = [&] {
        Tensor t = x + y;
        t = t + b;
        t = t.relu();
        return t.sum(Axis{2, 3});
      }();
      r.realize();
    });
    std::printf("(%lld,%lld,%lld,%lld): x+y %.3f ms, relu(x+y+b) %.3f ms, (x+y).sum(2,3) %.3f ms, relu(x+y+b).sum(2,3) %.3f ms\n",
                static_cast<long long>(s[0]), static_cast<long long>(s[1]), static_cast<long long>(s[2]),
                static_cast<long long>(s[3]), add, bias, sum, bsum);
  }
  return 0;
}
