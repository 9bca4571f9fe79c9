// REDUCE_MULACC (the opt-in fused product, docs/spec.md §14) through the matmul's own register
// tiles with FMA steps (gemm.cpp, gemm_direct.cpp: GemmArgs::fused): against the reference
// executor bit for bit on every SIMD target and 1-3 threads, each CPU run checked to have taken
// the fused tiles on a target with an FMA instruction (cpu::gemm_fused_tile_tasks) and never on
// one without (SSE4, scalar: gemm_fused.h's exact software steps instead). Products that take
// each of the tiles' paths (read in place, one or two row blocks, packed blocks, edges, a narrow
// product computed transposed, k blocks), every rounding mode, NaNs and infinities, the
// epilogues (bias and ReLU, a conv's 2x2 max-pool) and kept plans shared with unfused products.
#include <gtest/gtest.h>

#include "cpu/epilogue.h"
#include "cpu/epilogue_pool.h"
#include "cpu/gemm.h"
#include "cpu/gemm_direct.h"
#include "cpu/gemm_local.h"
#include "harness.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

// check(), and per CPU run: the fused tiles ran where the target has FMA and not elsewhere;
// `path` (another counter of the tiles' paths, optional) moved on every run on them. Returns the
// runs on fused tiles.
int check_fused(const std::string& what, const std::function<Tensor()>& build,
                const std::function<int64_t()>& path = nullptr, const char* path_name = "") {
  int on_tiles = 0;
  int64_t tiles = cpu::gemm_fused_tile_tasks(), other = path ? path() : 0;
  check(what, build, [&](const std::string& target, int threads) {
    const int64_t t = cpu::gemm_fused_tile_tasks(), o = path ? path() : 0;
    const std::string where = what + " on " + target + " with " + std::to_string(threads) + " threads";
    if (cpu::gemm_fma_tiles()) {
      EXPECT_GT(t, tiles) << where << ": the fused tiles did not run";
      if (path) EXPECT_GT(o, other) << where << ": did not " << path_name;
      on_tiles += t > tiles;
    } else {
      EXPECT_EQ(t, tiles) << where << ": fused tiles on a target without FMA";
    }
    tiles = t;
    other = o;
  });
  return on_tiles;
}

Tensor fused_matmul(const Tensor& a, const Tensor& b) { return a.matmul(b, std::nullopt, true); }

// near_one_tensor's values over 3: full mantissas, so that products round (near_one's own are
// exact, and an FMA chain over exact products is the unfused sum: a tile that multiplied and
// added would pass).
Tensor thirds(DType d, const Shape& s, uint64_t seed, bool specials = false) {
  return near_one_tensor(d, s, seed, specials).div(Tensor::full({}, 3.0, d)).realize();
}

TEST(CpuFusedTiles, MatmulPathsBitExact) {
  int on_tiles = 0;
  for (DType d : {DType::Float32, DType::Float64}) {
    const std::string dn(dtype_name(d));
    auto t = [d](int64_t r, int64_t c, uint64_t seed, bool specials = false) {
      return thirds(d, {r, c}, seed, specials);
    };
    on_tiles += check_fused(dn + " 40x50 @ 50x64, read in place", [=] { return fused_matmul(t(40, 50, 1), t(50, 64, 2)); },
                            [] { return cpu::gemm_direct_runs(); }, "read the operands in place");
    on_tiles += check_fused(dn + " 130x300 @ 300x200, two row blocks", [=] { return fused_matmul(t(130, 300, 3), t(300, 200, 4)); },
                            [] { return cpu::gemm_local_runs(); }, "pack B per task");
    on_tiles += check_fused(dn + " 300x260 @ 260x290 of specials, packed blocks and edges",
                            [=] { return fused_matmul(t(300, 260, 5, true), t(260, 290, 6, true)); });
    on_tiles += check_fused(dn + " 200x70 @ 70x10, narrow (transposed)", [=] { return fused_matmul(t(200, 70, 7), t(70, 10, 8)); },
                            [] { return cpu::matmul_narrow_transposes(); }, "compute the product transposed");
    on_tiles += check_fused(dn + " batched 3x(70x90 @ 90x50), permuted view",
                            [=] { return fused_matmul(thirds(d, {3, 90, 70}, 9).permute({0, 2, 1}),
                                                      thirds(d, {3, 90, 50}, 10)); });
    for (Round r : {Round::TowardZero, Round::Up, Round::Down})
      on_tiles += check_fused(dn + " 96x200 @ 200x100 in " + std::string(round_name(r)), [=] {
        RoundingScope scope(r);
        return fused_matmul(t(96, 200, 11), t(200, 100, 12));
      });
  }
  EXPECT_GT(on_tiles, 0) << "no target of this machine ran the fused tiles";
  std::printf("fused tiles: %d CPU runs on them, all equal to the reference\n", on_tiles);
}

TEST(CpuFusedTiles, EpiloguesBitExact) {
  for (DType d : {DType::Float32, DType::Float64}) {
    const std::string dn(dtype_name(d));
    check_fused(dn + " linear 128x784 @ 784x64 + bias, relu", [=] {
      return fused_matmul(thirds(d, {128, 784}, 1), thirds(d, {784, 64}, 2))
          .add(thirds(d, {64}, 3, true))
          .relu();
    }, [] { return cpu::matmul_epilogue_runs(); }, "run the bias and relu as the product's epilogue");
    check_fused(dn + " conv2d 3->16 on 32x32 + bias, relu, 2x2 max-pool", [=] {
      return thirds(d, {2, 3, 32, 32}, 4, true)
          .conv2d(thirds(d, {16, 3, 3, 3}, 5), thirds(d, {16}, 6), 1, {1}, {1}, {1}, true)
          .relu()
          .max_pool2d({2, 2});
    }, [] { return cpu::epilogue_pools(); }, "fold the pool in the epilogue");
    check_fused(dn + " conv2d 16->32 stride 2 on 16x16 + bias", [=] {
      return thirds(d, {2, 16, 16, 16}, 7)
          .conv2d(thirds(d, {32, 16, 3, 3}, 8), thirds(d, {32}, 9), 1, {2}, {1}, {1}, true);
    }, [] { return cpu::matmul_epilogue_runs(); }, "run the bias as the product's epilogue");
  }
}

// The same operands multiplied fused and unfused, alternately, on one thread: kept plans
// (matmul_kept.h) are shared by shape, never by kind, so each keeps its own bits.
TEST(CpuFusedTiles, KeptPlansKeepTheirKind) {
  const Tensor a = thirds(DType::Float32, {64, 96}, 1), b = thirds(DType::Float32, {96, 80}, 2);
  BackendSettings keep;
  set_backend(Backend::Ref);
  const std::vector<uint8_t> fused = fused_matmul(a, b).bytes(), plain = a.matmul(b).bytes();
  ASSERT_NE(fused, plain);
  set_backend(Backend::Cpu);
  set_num_threads(1);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(fused_matmul(a, b).bytes(), fused) << "fused, round " << i;
    EXPECT_EQ(a.matmul(b).bytes(), plain) << "unfused, round " << i;
  }
}

}  // namespace
}  // namespace maroon::test
