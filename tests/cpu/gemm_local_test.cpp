// Products with one row block (or two, for a plain matmul), whose tasks pack their own columns
// of B (src/cpu/gemm_local.cpp),
// against the reference executor, bit for bit, on every SIMD target and 1, 2 and 3 threads:
// several column tasks, a last task narrower than a wide tile (another tile than the rest),
// batches, conv2d computed transposed (B the im2col matrix, K = 27 as a first layer's) and not,
// with bias, ReLU and a residual in the epilogue; NaN, infinities, signed zeros and subnormals;
// every rounding mode. Each case also checks that the path ran.
#include <gtest/gtest.h>

#include <algorithm>

#include "cpu/gemm.h"
#include "cpu/gemm_fused.h"
#include "cpu/gemm_local.h"
#include "harness.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

void check_local(const std::string& what, const std::function<Tensor()>& build) {
  check_path(what, build, cpu::gemm_local_runs, "pack per task");
}

TEST(CpuBackend, MatmulLocalPacking) {
  // M <= 96 (one row block); N from one task to several, the last one narrow.
  const int64_t shapes[][3] = {{16, 48, 1320}, {96, 40, 700}, {7, 200, 513}, {2, 5, 4100}};
  for (DType d : {DType::Float32, DType::Float64})
    for (const auto& s : shapes)
      for (Round r : kAllRounds) {
        if (d == DType::Float64 && s[2] > 1000) continue;  // the reference executor is slow
        if (s[0] != 7 && r != Round::NearestEven && r != Round::Up) continue;
        const std::string tag = std::string(dtype_name(d)) + " " + std::to_string(s[0]) + "x" + std::to_string(s[1]) +
                                "x" + std::to_string(s[2]) + " " + std::string(round_name(r));
        const uint64_t seed = static_cast<uint64_t>(s[0] * 7 + s[2] + static_cast<int>(r) * 13);
        check_local("matmul " + tag, [&] {
          Tensor x = near_one_tensor(d, {s[0], s[1]}, seed, true), y = near_one_tensor(d, {s[1], s[2]}, seed + 1);
          RoundingScope scope(r);
          return x.matmul(y);
        });
      }
  check_local("batched 3x(40x70 @ 70x600)", [] {
    return near_one_tensor(DType::Float32, {3, 40, 70}, 5, true).matmul(near_one_tensor(DType::Float32, {3, 70, 600}, 6));
  });
}

// Two row blocks (97 to 192 rows: an MLP's batch of 128), each task packing its columns of B and
// computing them for both row blocks: x @ w and x @ w.T (the linear layer's forward, with its
// bias and ReLU in the epilogue, applied to each block), a second block of 1 to 96 rows, one and
// several column tasks, batches, specials, two rounding modes.
TEST(CpuBackend, MatmulLocalPackingTwoRowBlocks) {
  const int64_t shapes[][3] = {{128, 70, 300}, {97, 33, 170}, {192, 20, 64}, {128, 300, 10}};
  for (DType d : {DType::Float32, DType::Float64})
    for (const auto& s : shapes)
      for (Round r : {Round::NearestEven, Round::Down}) {
        const std::string tag = std::string(dtype_name(d)) + " " + std::to_string(s[0]) + "x" + std::to_string(s[1]) +
                                "x" + std::to_string(s[2]) + " " + std::string(round_name(r));
        const uint64_t seed = static_cast<uint64_t>(s[0] * 5 + s[2] + static_cast<int>(r) * 11);
        check_local("matmul " + tag, [&] {
          Tensor x = near_one_tensor(d, {s[0], s[1]}, seed), y = near_one_tensor(d, {s[1], s[2]}, seed + 1, true);
          RoundingScope scope(r);
          return x.matmul(y);
        });
        check_local("linear+relu " + tag, [&] {
          Tensor x = near_one_tensor(d, {s[0], s[1]}, seed + 2), w = near_one_tensor(d, {s[2], s[1]}, seed + 3);
          Tensor bias = near_one_tensor(d, {s[2]}, seed + 4, true);
          RoundingScope scope(r);
          Tensor h = x.matmul(w.permute({1, 0})).add(bias);
          return prim::where(prim::cmplt(Tensor::full({}, 0.0, d), h), h, 0.0);  // ReLU as WHERE
        });
      }
  check_local("batched 2x(130x40 @ 40x300)", [] {
    return near_one_tensor(DType::Float32, {2, 130, 40}, 7).matmul(near_one_tensor(DType::Float32, {2, 40, 300}, 8, true));
  });
}

// conv2d as the ONNX models run it: a first layer (3 channels, K = 27) on wide images (computed
// transposed: B is the im2col matrix), a 3x3 layer with bias, residual and ReLU, narrow images.
TEST(CpuBackend, ConvLocalPacking) {
  for (Round r : {Round::NearestEven, Round::Down}) {
    const std::string tag = std::string(" ") + std::string(round_name(r));
    // Padded first and written out, as src/onnx's Conv does (a padded view is another path).
    check_local("conv2d 3->16 3x3 on 2x3x20x36 padded by 1, bias, relu" + tag, [&] {
      Tensor x = near_one_tensor(DType::Float32, {2, 3, 20, 36}, 70, true);
      x = prim::mul(x.pad({{0, 0}, {0, 0}, {1, 1}, {1, 1}}), 1.0).realize();
      Tensor w = near_one_tensor(DType::Float32, {16, 3, 3, 3}, 71), b = near_one_tensor(DType::Float32, {16}, 72, true);
      RoundingScope scope(r);
      return x.conv2d(w, b, 1, {1}, {1}, {0}).relu();
    });
    check_local("conv2d 8->16 3x3 on 3x8x18x18 + bias + residual, relu" + tag, [&] {
      Tensor x = near_one_tensor(DType::Float32, {3, 8, 18, 18}, 80);
      Tensor w = near_one_tensor(DType::Float32, {16, 8, 3, 3}, 81), b = near_one_tensor(DType::Float32, {16}, 82, true);
      Tensor res = near_one_tensor(DType::Float32, {3, 16, 16, 16}, 83, true);
      RoundingScope scope(r);
      return x.conv2d(w, b, 1, {1}, {1}, {0}).add(res).relu();
    });
    check_local("conv2d 8->32 1x1 stride 2 on 4x8x12x6" + tag, [&] {
      Tensor x = near_one_tensor(DType::Float32, {4, 8, 12, 6}, 90, true);
      Tensor w = near_one_tensor(DType::Float32, {32, 8, 1, 1}, 91);
      RoundingScope scope(r);
      return x.conv2d(w, std::nullopt, 1, {2}, {1}, {0});
    });
  }
}

// conv2d computed transposed over a batch: the weights (A) are packed once for every image's
// tasks (gemm_pack_a, GemmArgs::apacked) instead of by each task. One channel's weights with
// NaN, infinities, signed zeros and subnormals; 16 and 40 output channels (the 8 x 3 tile, 40 in five panels), 64
// (the 6 x 4 tile, its last panel four rows); 3, 8 and 40 input channels (K = 27 and 72 in one k
// block, 360 in several, so the tasks read the shared panels from inside), images of 12 x 20
// (some panels cross a row end); unfused (to nearest) and fused (down); every SIMD target, 1-3
// threads. The unfused runs must each take the path (the fused ones where a target has no FMA
// run elsewhere).
TEST(CpuBackend, ConvWeightsPackedOnceForEveryImage) {
  struct Case { int64_t cin, cout; };
  for (const Case c : {Case{3, 16}, Case{8, 40}, Case{40, 16}, Case{8, 64}})
    for (bool fused : {false, true}) {
      const Round r = fused ? Round::Down : Round::NearestEven;  // two modes: each run is slow
      const std::string tag = std::to_string(c.cin) + "->" + std::to_string(c.cout) + (fused ? " fused " : " ") +
                              std::string(round_name(r));
      auto build = [&] {
        const auto seed = static_cast<uint64_t>(c.cout * 3 + c.cin);
        Tensor x = near_one_tensor(DType::Float32, {3, c.cin, 12, 20}, seed);
        x = prim::mul(x.pad({{0, 0}, {0, 0}, {1, 1}, {1, 1}}), 1.0).realize();
        // The specials in one output channel only: in every channel they would make most sums NaN.
        Tensor w = near_one_tensor(DType::Float32, {1, c.cin, 3, 3}, seed + 1, true)
                       .cat({near_one_tensor(DType::Float32, {c.cout - 1, c.cin, 3, 3}, seed + 2)}, 0);
        FusedScope products(fused);
        RoundingScope scope(r);
        return x.conv2d(w, std::nullopt, 1, {1}, {1}, {0});
      };
      if (fused) check("conv2d weights packed once " + tag, build);
      else check_path("conv2d weights packed once " + tag, build, cpu::gemm_shared_a_products, "pack A once");
    }
}

// conv2d computed transposed whose B panels the kernel reads in place from the padded image
// (gemm_direct_panel): output rows of 32 and 16 positions (every vector of a panel one run along
// a row), 20 (some vectors cross a row end and are packed: both kinds in one task), float32 and
// float64, NaN, infinities, signed zeros and subnormals in the image, three rounding modes, an
// epilogue; every SIMD target, 1-3 threads. The cases together must read some panel in place.
TEST(CpuBackend, ConvPanelsInPlace) {
  const int64_t before = cpu::gemm_direct_tasks();
  struct Case { DType d; int64_t cin, cout, h, w; };
  const Case cases[] = {{DType::Float32, 4, 16, 6, 32}, {DType::Float32, 8, 32, 8, 16},
                        {DType::Float32, 3, 16, 5, 20}, {DType::Float64, 4, 16, 4, 16}};
  for (const Case& c : cases)
    for (Round r : {Round::NearestEven, Round::Up, Round::TowardZero}) {
      if (c.d == DType::Float64 && r != Round::NearestEven) continue;  // the reference is slow
      const std::string tag = std::string(dtype_name(c.d)) + " " + std::to_string(c.cin) + "->" +
                              std::to_string(c.cout) + " on " + std::to_string(c.h) + "x" + std::to_string(c.w) +
                              " " + std::string(round_name(r));
      const uint64_t seed = static_cast<uint64_t>(c.cin * 31 + c.w + static_cast<int>(r));
      check_local("conv2d in place " + tag, [&] {
        Tensor x = near_one_tensor(c.d, {2, c.cin, c.h, c.w}, seed, true);
        x = prim::mul(x.pad({{0, 0}, {0, 0}, {1, 1}, {1, 1}}), 1.0).realize();
        Tensor w = near_one_tensor(c.d, {c.cout, c.cin, 3, 3}, seed + 1), b = near_one_tensor(c.d, {c.cout}, seed + 2);
        RoundingScope scope(r);
        return x.conv2d(w, b, 1, {1}, {1}, {0}).relu();
      });
    }
  EXPECT_GT(cpu::gemm_direct_tasks(), before) << "no task read a B panel in place";
}

// The 8 x 3 register tile (src/cpu/gemm.cpp, TileFor): products of 8 to 88 rows, a multiple of
// 8 (conv2d's output channels), whose rows 6-row tiles would leave partly empty; one and several
// column panels, a last panel narrower than the tile; float32 and float64, NaN, infinities,
// signed zeros and subnormals, rounding modes. Where the best target has 32 vector registers,
// each of these shapes must get the 8-row tile (elsewhere it does not exist).
TEST(CpuBackend, EightRowTile) {
  const int64_t shapes[][3] = {{16, 27, 720}, {32, 70, 300}, {8, 16, 1000}, {40, 9, 230}, {88, 33, 600}};
  for (DType d : {DType::Float32, DType::Float64})
    for (const auto& s : shapes)
      for (Round r : {Round::NearestEven, Round::Down}) {
        if (d == DType::Float64 && (s[2] > 700 || r != Round::NearestEven)) continue;  // the reference is slow
        const std::string tag = std::string(dtype_name(d)) + " " + std::to_string(s[0]) + "x" + std::to_string(s[1]) +
                                "x" + std::to_string(s[2]) + " " + std::string(round_name(r));
        const uint64_t seed = static_cast<uint64_t>(s[0] * 11 + s[2] + static_cast<int>(r) * 5);
        check("8-row tile " + tag, [&] {
          Tensor x = near_one_tensor(d, {s[0], s[1]}, seed, true), y = near_one_tensor(d, {s[1], s[2]}, seed + 1, true);
          RoundingScope scope(r);
          return x.matmul(y);
        });
      }
  BackendSettings keep;
  set_simd_target(targets_to_test().back());
  int64_t mr = 0, nr = 0;
  cpu::gemm_panel_sizes(DType::Float32, 16, 1000, &mr, &nr);
  if (mr == 4) GTEST_SKIP() << "the best target has 16 vector registers: no 8-row tile";
  for (DType d : {DType::Float32, DType::Float64})
    for (const auto& s : shapes) {
      cpu::gemm_panel_sizes(d, s[0], s[2], &mr, &nr);
      EXPECT_EQ(mr, 8) << dtype_name(d) << " " << s[0] << "x" << s[2];
    }
}

// conv2d whose im2col matrix passes 32 MB (32->16 5x5 on 24x24 at batch 27: 34.6 MB) with one
// row block of output channels: computed transposed, each task packing its own columns a k
// block at a time (past 32 MB it once was not: that limit is for products whose transposed B is
// packed whole). Its bits against its images computed one at a time (each small: the transposed
// path the tests above check against the reference; the last image checked against it here
// too), unfused and fused, on every target with 1
// and 2 threads; each run checked to take the path (fused: where the target has FMA).
TEST(CpuBackend, ConvLargeIm2colComputedTransposed) {
  BackendSettings keep;
  set_backend(Backend::Cpu);
  const int64_t n = 27;
  for (bool fused : {false, true}) {
    FusedScope scope(fused);
    const Tensor x = near_one_tensor(DType::Float32, {n, 32, 24, 24}, 21).realize();
    const Tensor w = near_one_tensor(DType::Float32, {16, 32, 5, 5}, 22, true).realize();
    set_simd_target(targets_to_test().front());
    set_num_threads(1);
    std::vector<uint8_t> want;
    for (int64_t i = 0; i < n; ++i) {
      const std::vector<uint8_t> one = x.shrink({{i, i + 1}, {0, 32}, {0, 24}, {0, 24}}).conv2d(w).bytes();
      want.insert(want.end(), one.begin(), one.end());
    }
    {  // The last image's bits against the reference executor too.
      set_backend(Backend::Ref);
      const std::vector<uint8_t> ref = x.shrink({{n - 1, n}, {0, 32}, {0, 24}, {0, 24}}).conv2d(w).bytes();
      set_backend(Backend::Cpu);
      EXPECT_TRUE(std::equal(ref.begin(), ref.end(), want.end() - static_cast<std::ptrdiff_t>(ref.size())))
          << (fused ? "fused: " : "") << "an image's conv differs from the reference executor";
    }
    for (const std::string& target : targets_to_test()) {
      set_simd_target(target);
      for (int threads : {1, 2}) {
        set_num_threads(threads);
        const int64_t before = cpu::matmul_conv_row_products();
        const std::vector<uint8_t> got = x.conv2d(w).bytes();
        // (Fused products on a target without FMA take gemm_fused.h's kernels, not the tiles.)
        if (!fused || cpu::fused_native_fma()) {
          EXPECT_GT(cpu::matmul_conv_row_products(), before)
              << (fused ? "fused " : "") << "on " << target << " with " << threads << " threads: not computed transposed";
        }
        EXPECT_TRUE(got == want) << (fused ? "fused " : "") << "on " << target << " with " << threads << " threads";
      }
    }
  }
}

}  // namespace
}  // namespace maroon::test
