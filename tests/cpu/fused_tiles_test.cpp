// REDUCE_MULACC (the opt-in fused product, docs/spec.md §14) through the matmul's own register
// tiles with FMA steps (gemm.cpp, gemm_direct.cpp: GemmArgs::fused): against the reference
// executor bit for bit on every SIMD target and 1-3 threads, each CPU run checked to have taken
// the fused tiles on a target with an FMA instruction (cpu::gemm_fused_tile_tasks) and never on
// one without (SSE4, scalar: gemm_fused.h's exact software steps instead). Products that take
// each of the tiles' paths (read in place, one or two row blocks, packed blocks, edges, a narrow
// product computed transposed, k blocks), every rounding mode, NaNs and infinities, the
// epilogues (bias and ReLU, a conv's 2x2 max-pool) and kept plans shared with unfused products.
#include <gtest/gtest.h>

#include <algorithm>

#include "cpu/epilogue.h"
#include "cpu/epilogue_pool.h"
#include "cpu/gemm.h"
#include "cpu/gemm_direct.h"
#include "cpu/gemm_fused.h"
#include "cpu/gemm_local.h"
#include "harness.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

// check(), and per CPU run: the fused tiles ran where the target has FMA and not elsewhere;
// `path` (another counter of the tiles' paths, optional) moved on every run on them. Returns the
// runs on fused tiles.
// `path_on`: the targets that must take `path` (all FMA targets if empty).
int check_fused(const std::string& what, const std::function<Tensor()>& build,
                const std::function<int64_t()>& path = nullptr, const char* path_name = "",
                const std::vector<std::string>& path_on = {}) {
  int on_tiles = 0;
  int64_t tiles = cpu::gemm_fused_tile_tasks(), other = path ? path() : 0;
  check(what, build, [&](const std::string& target, int threads) {
    const int64_t t = cpu::gemm_fused_tile_tasks(), o = path ? path() : 0;
    const std::string where = what + " on " + target + " with " + std::to_string(threads) + " threads";
    if (cpu::fused_native_fma()) {
      EXPECT_GT(t, tiles) << where << ": the fused tiles did not run";
      if (path && (path_on.empty() || std::find(path_on.begin(), path_on.end(), target) != path_on.end())) {
        EXPECT_GT(o, other) << where << ": did not " << path_name;
      }
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

// As ONNX's Conv runs (src/onnx/ops_nn.cpp): the padded input written out first.
Tensor padded_conv(int64_t cin, int64_t cout, int64_t hw, int64_t k, int64_t stride, bool fused, bool specials) {
  const DType d = DType::Float32;
  Tensor x = thirds(d, {2, cin, hw, hw}, cin + hw, specials);
  if (k > 1) x = x.pad({{0, 0}, {0, 0}, {k / 2, k / 2}, {k / 2, k / 2}}).mul(Tensor::full({}, 1.0, d));
  return x.conv2d(thirds(d, {cout, cin, k, k}, cout + 7), thirds(d, {cout}, cout + 3, true), 1, {stride}, {1}, {0},
                  fused)
      .relu();
}

// conv2d computed transposed (gemm.cpp's Block): B panels of columns in groups (stride 2, two
// rows of an 8-wide image) packed by their task a k block at a time (GemmArgs::span_in_block,
// AVX-512), fused and not (a 1x1 conv's k is affine: its panels are packed up front); and a fused
// product whose B panels are all read in place with K past 320 (gemm_kc's equal blocks: 36
// channels, K = 324, two blocks of 162).
TEST(CpuFusedTiles, ConvPanelsPackedByTheTaskBitExact) {
  struct C { int64_t cin, cout, hw, k, stride; };
  for (C c : {C{16, 32, 16, 3, 2}, C{32, 64, 16, 3, 2}, C{64, 64, 8, 3, 1}, C{16, 32, 15, 3, 2}}) {
    const std::string tag = std::to_string(c.cin) + "->" + std::to_string(c.cout) + " " + std::to_string(c.k) + "x" +
                            std::to_string(c.k) + " stride " + std::to_string(c.stride) + " on " + std::to_string(c.hw);
    for (bool specials : {false, true}) {
      const std::string what = "conv2d " + tag + (specials ? " with specials" : "");
      check_fused("fused " + what, [=] { return padded_conv(c.cin, c.cout, c.hw, c.k, c.stride, true, specials); },
                  [] { return cpu::gemm_task_span_panels(); }, "pack B panels in the task", {"avx512"});
      check_path_on("unfused " + what, [=] { return padded_conv(c.cin, c.cout, c.hw, c.k, c.stride, false, specials); },
                    [] { return cpu::gemm_task_span_panels(); }, "pack B panels in the task", {"avx512"});
    }
  }
  // 48-wide rows: whole 48-column panels, and tasks of 384 columns (matmul.cpp's conv span).
  check_fused("fused conv2d 36->16 3x3 on 48x48, K 324 read in place",
              [] { return padded_conv(36, 16, 48, 3, 1, true, false); }, [] { return cpu::gemm_direct_tasks(); },
              "read B panels in place");
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
