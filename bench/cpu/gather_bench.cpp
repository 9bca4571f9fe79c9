// Rows drawn by an integer tensor (GATHER, docs/spec.md §15) against a plain C++ loop of memcpy
// (what numpy's fancy indexing does; bench/indexing/gather_bench.py runs numpy itself) and the
// one-hot formulation GATHER replaced (a mask over every row and a sum: run on a smaller table,
// its cost grows with the rows). Sides alternate; each prints its median over the repeats.
//   maroon-bench-gather [--threads N] [--reps 9]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "maroon/backend.h"
#include "maroon/maroon.h"

using namespace maroon;

namespace {

double seconds(const std::function<void()>& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void run_case(const std::string& name, const std::vector<std::pair<std::string, std::function<void()>>>& sides, int reps) {
  std::map<std::string, std::vector<double>> t;
  for (int r = 0; r < reps; ++r)
    for (auto& [k, f] : sides) t[k].push_back(seconds(f));
  std::printf("%s\n", name.c_str());
  double base = 0;
  for (auto& [k, f] : sides) {
    std::vector<double>& v = t[k];
    std::sort(v.begin(), v.end());
    const double med = v[v.size() / 2];
    if (base == 0) base = med;
    std::printf("  %-34s %10.3f ms  %8.2f x %s\n", k.c_str(), med * 1e3, med / base, sides[0].first.c_str());
  }
}

// tinygrad's x[idx] along axis 0 before GATHER: a mask over every row, a sum.
Tensor onehot_rows(const Tensor& x, const Tensor& idx) {
  const int64_t n = x.shape()[0], k = idx.numel();
  Tensor mask = idx.reshape({k, 1, 1}) == Tensor::arange(n).reshape({1, n, 1});
  return mask.where(x.reshape({1, n, x.shape()[1]}), 0).sum(1, false, x.dtype());
}

std::vector<int32_t> draw(int64_t k, int64_t n, uint64_t seed) {
  std::vector<int32_t> v(static_cast<size_t>(k));
  for (auto& x : v) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    x = static_cast<int32_t>((seed >> 33) % static_cast<uint64_t>(n));
  }
  return v;
}

void table_case(int64_t rows, int64_t cols, int64_t k, int64_t onehot_rows_n, int reps, bool embedding) {
  std::vector<float> host(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(static_cast<int64_t>(i * 2654435761u % 1000) - 500) / 64.0f;
  Tensor x = Tensor::from_vector(host, {rows, cols});
  x.realize();
  std::vector<int32_t> s = draw(k, rows, 7);
  Tensor st = Tensor::from_vector(s, {k});
  st.realize();
  std::vector<float> dst(static_cast<size_t>(k * cols));
  nn::Embedding emb(rows, cols);
  emb.weight = x;
  std::vector<std::pair<std::string, std::function<void()>>> sides = {
      {"memcpy loop", [&] {
         for (int64_t i = 0; i < k; ++i)
           std::memcpy(&dst[static_cast<size_t>(i * cols)], &host[static_cast<size_t>(s[i]) * cols], cols * sizeof(float));
       }},
      {embedding ? "Embedding (GATHER)" : "x[idx] (GATHER)", [&] {
         Tensor y = embedding ? emb(st) : x[{Index(st)}];
         y.realize();
       }},
  };
  Tensor small = x.shrink({{0, onehot_rows_n}, {0, cols}});
  small.realize();
  std::vector<int32_t> ss(s);
  for (auto& v : ss) v = onehot_rows_n > 0 ? v % static_cast<int32_t>(onehot_rows_n) : 0;
  Tensor sst = Tensor::from_vector(ss, {k});
  if (onehot_rows_n > 0)
    sides.push_back({"one-hot, " + std::to_string(onehot_rows_n) + " rows", [&] { onehot_rows(small, sst).realize(); }});
  char name[160];
  std::snprintf(name, sizeof name, "%s %lldx%lld float32, %lld indices (%d threads, %s)", embedding ? "Embedding" : "x[idx]",
                static_cast<long long>(rows), static_cast<long long>(cols), static_cast<long long>(k), num_threads(),
                simd_target().c_str());
  run_case(name, sides, reps);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 9;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--threads")) set_num_threads(std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
  }
  table_case(60000, 784, 64, 3000, reps, false);   // tinygrad's docs/mnist.md batch draw
  table_case(60000, 784, 128, 3000, reps, false);
  table_case(65, 64, 16 * 32, 65, reps, true);     // the character GPT's token embedding
  table_case(50257, 768, 16 * 128, 0, reps, true);  // GPT-2's wte
}
