// Attention's per-head products as the ONNX transformer runs them (src/cpu/gemm_direct.cpp):
// heads read through a reshape of a slice of one QKV product's output (64 positions by batch 8
// by 3 x 4 heads; the bench model has batch 32), q @ k^T per head (32 heads of 64 x d @ d x 64)
// and p @ v (64 x 64 @ 64 x d), fused (REDUCE_MULACC) and not, in every rounding mode, with NaN and infinities,
// against the reference executor bit for bit on every SIMD target and 1-3 threads. Each run is
// checked to have taken the new paths: k^T's panels (columns a head's width apart, each
// contiguous along k) packed by the task and A read in place (cpu::gemm_direct_packed_tasks),
// on every target for the default product and on those with FMA (x86: avx2, avx512) for the
// fused one (the others run gemm_fused.h's software steps); p @ v's 16 columns, one AVX-512
// vector, by the tall 8 x 1 tile (cpu::gemm_direct_tall_tasks).
#include <gtest/gtest.h>

#include "cpu/gemm_direct.h"
#include "cpu/gemm_fused.h"
#include "harness.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

constexpr int64_t kTokens = 64, kBatch = 8, kHeads = 4;

// near_one_tensor's values over 3: full mantissas, so that products round and an FMA chain
// differs from products then sums (a tile that took the other step would fail). With specials,
// about one element in 50 is drawn from near_one_tensor's specials (a NaN, an infinity, a signed
// zero or a subnormal one time in three): at its own rate, one in eight, almost every sum of 64
// would be NaN, and a wrong sum would go unseen.
Tensor thirds(const Shape& s, uint64_t seed, bool specials) {
  Tensor x = near_one_tensor(DType::Float32, s, seed);
  if (specials)
    x = near_one_tensor(DType::Float32, s, seed + 100).lt(Tensor::full({}, -0.96, DType::Float32))
            .where(near_one_tensor(DType::Float32, s, seed + 200, true), x);
  return x.div(Tensor::full({}, 3.0, DType::Float32)).realize();
}

// Part `part` (0: q, 1: k, 2: v) of a QKV output (tokens, batch, 3 x heads x dim) as
// (batch x heads, tokens, dim): PyTorch's view(tokens, batch * heads, dim).transpose(0, 1).
Tensor heads_of(const Tensor& qkv, int64_t part, int64_t dim) {
  const int64_t w = kHeads * dim;
  return qkv.shrink({{0, kTokens}, {0, kBatch}, {part * w, (part + 1) * w}})
      .reshape({kTokens, kBatch * kHeads, dim})
      .permute({1, 0, 2});
}

Tensor scores(int64_t dim, bool fused, Round r, uint64_t seed) {
  const Tensor qkv = thirds({kTokens, kBatch, 3 * kHeads * dim}, seed, true);
  RoundingScope scope(r);
  const Tensor q = heads_of(qkv, 0, dim).mul(Tensor::full({}, 0.25, DType::Float32));
  return q.matmul(heads_of(qkv, 1, dim).permute({0, 2, 1}), std::nullopt, fused);
}

Tensor attend(int64_t dim, bool fused, Round r, uint64_t seed) {
  const Tensor qkv = thirds({kTokens, kBatch, 3 * kHeads * dim}, seed, true);
  const Tensor p = thirds({kBatch * kHeads, kTokens, kTokens}, seed + 1, true);
  RoundingScope scope(r);
  return p.matmul(heads_of(qkv, 2, dim), std::nullopt, fused);
}

// The targets that must take a direct path: all for the default product, those with an FMA
// instruction for the fused one.
std::vector<std::string> direct_targets(bool fused) {
  return fused ? std::vector<std::string>{"avx2", "avx512"} : targets_to_test();
}

// check_path_on, and on a target with FMA that a fused product ran the fused tiles.
void check_heads(const std::string& what, const std::function<Tensor()>& build, bool fused,
                 const std::function<int64_t()>& path, const char* path_name,
                 const std::vector<std::string>& path_on) {
  const int64_t tiles = cpu::gemm_fused_tile_tasks();
  const int checked = check_path_on(what, build, path, path_name, path_on);
  EXPECT_GT(checked, 0) << what << ": no target of this machine takes the path";
  if (fused && cpu::fused_native_fma()) {
    EXPECT_GT(cpu::gemm_fused_tile_tasks(), tiles) << what << ": no fused tiles ran";
  }
}

std::string tag(bool fused, const char* product, int64_t dim, Round r) {
  return std::string(fused ? "fused " : "default ") + product + ", heads of " + std::to_string(dim) + " in " +
         std::string(round_name(r));
}

TEST(CpuAttentionHeads, ScoresThroughPackedKeysBitExact) {
  for (int64_t dim : {16, 8})
    for (bool fused : {false, true})
      for (Round r : kAllRounds) {
        if (dim == 8 && r != Round::NearestEven && r != Round::Up) continue;
        check_heads(tag(fused, "q @ k^T", dim, r), [=] { return scores(dim, fused, r, 11 + dim); }, fused,
                    [] { return cpu::gemm_direct_packed_tasks(); }, "pack k^T's panels in the task",
                    direct_targets(fused));
      }
}

TEST(CpuAttentionHeads, HeadsOutputBitExact) {
  for (bool fused : {false, true})
    for (Round r : kAllRounds) {
      check_heads(tag(fused, "p @ v", 16, r), [=] { return attend(16, fused, r, 47); }, fused,
                  [] { return cpu::gemm_direct_tall_tasks(); }, "run the tall one-vector tile", {"avx512"});
    }
}

}  // namespace
}  // namespace maroon::test
