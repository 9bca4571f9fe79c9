// conv2d's gradients on the CPU backend against the reference executor, bit for bit, on every
// SIMD target and 1, 2 and 3 threads: the input gradient's window tensor folded onto the image
// tile by tile (src/cpu/matmul_fold.cpp) and the weight gradient's matmul, for beautiful_mnist's
// layer shapes and for padding, stride, dilation, one channel, rectangular kernels and images,
// groups, float64, the rounding modes and special values.
#include <gtest/gtest.h>

#include <algorithm>

#include "cpu/epilogue.h"
#include "cpu/epilogue_rows.h"
#include "cpu/gemm.h"
#include "cpu/kernel.h"
#include "harness.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

struct Conv {
  const char* name;
  int64_t n, cin, cout, h, w, kh, kw;
  std::vector<int64_t> stride, dilation, padding;
  int64_t groups = 1;
};

std::string describe(const Conv& c, DType d, Round r) {
  return std::string(c.name) + " " + std::to_string(c.cin) + "->" + std::to_string(c.cout) + " " +
         std::to_string(c.kh) + "x" + std::to_string(c.kw) + " on " + std::to_string(c.h) + "x" +
         std::to_string(c.w) + " " + std::string(dtype_name(d)) + " " + std::string(round_name(r));
}

// The input and weight gradients of sum(conv2d(x, w) * g): g is the output gradient as drawn.
// `special` puts infinities into w and a NaN into g (an inf - inf in the fold, a NaN term).
// With `fused` (FusedScope: conv2d and, by its gradient rule, both gradients as REDUCE_MULACC),
// x and w are near-one values over 3 (full mantissas: products round, so an FMA chain and a
// multiply-then-add give other bits and a fold over the wrong tiles would show).
Tensor gradients(const Conv& c, DType d, Round r, bool special, bool fused = false) {
  Gen gen(c.cin * 131 + c.cout * 7 + c.h + c.kh);
  const sf::Format f = fmt(d);
  std::vector<uint64_t> xv = near_one(gen, c.n * c.cin * c.h * c.w, f);
  std::vector<uint64_t> wv = near_one(gen, c.cout * (c.cin / c.groups) * c.kh * c.kw, f);
  Tensor x = tensor_of_bits(xv, {c.n, c.cin, c.h, c.w}, d);
  Tensor w = tensor_of_bits(wv, {c.cout, c.cin / c.groups, c.kh, c.kw}, d);
  if (fused) {
    const Tensor three = Tensor::full({}, 3.0, d);
    x = x.div(three).realized_leaf(), w = w.div(three).realized_leaf();
  }
  const FusedScope products(fused);
  RoundingScope scope(r);
  Tensor y = x.conv2d(w, std::nullopt, c.groups, c.stride, c.dilation, c.padding);
  std::vector<uint64_t> gv = near_one(gen, static_cast<size_t>(numel(y.shape())), f);
  if (special) {
    wv[0] = encode(f, INFINITY);
    wv[1] = encode(f, -INFINITY);
    gv[gv.size() / 2] = encode(f, NAN);
    w = tensor_of_bits(wv, w.shape(), d);
    y = x.conv2d(w, std::nullopt, c.groups, c.stride, c.dilation, c.padding);
  }
  (y * tensor_of_bits(gv, y.shape(), d)).sum().backward();
  return x.grad()->flatten().cat({w.grad()->flatten()});
}

TEST(CpuConvGradients, EqualTheReferenceOnEveryTargetAndThreadCount) {
  const int runs_before = g_runs;
  const int64_t folds_before = cpu::matmul_fold_runs();
  const std::vector<Conv> convs{
      // beautiful_mnist's layers (batch 1): the input gradients of the three layers that have
      // one, and the first layer's (one input channel) as if its input wanted a gradient too.
      // The second layer's weight gradient (32 rows, 800 columns) is computed transposed.
      {"mnist layer 1", 1, 1, 32, 28, 28, 5, 5, {1}, {1}, {0}},
      {"mnist layer 2", 1, 32, 32, 24, 24, 5, 5, {1}, {1}, {0}},
      {"mnist layer 3", 1, 32, 64, 10, 10, 3, 3, {1}, {1}, {0}},
      {"mnist layer 4", 1, 64, 64, 8, 8, 3, 3, {1}, {1}, {0}},
      // Odd shapes: padding (some windows reach only padding), stride (pixels no window
      // covers), dilation, rectangular kernels and images, one input channel, asymmetric
      // padding, stride larger than the kernel, a 1x1 kernel.
      {"padded", 3, 5, 7, 9, 11, 3, 3, {1}, {1}, {1}},
      {"padded 2, rectangular", 2, 3, 4, 7, 13, 5, 3, {1}, {1}, {2, 1}},
      {"stride 2", 2, 6, 5, 13, 12, 3, 3, {2}, {1}, {0}},
      {"stride 2 padded", 2, 4, 8, 11, 11, 5, 5, {2}, {1}, {2}},
      {"dilation 2", 2, 4, 6, 12, 10, 3, 2, {1}, {2}, {0}},
      {"stride 3 dilation 2 padded", 1, 3, 5, 17, 15, 3, 3, {3, 2}, {2, 1}, {1, 0, 2, 1}},
      {"stride past the kernel", 4, 6, 8, 20, 20, 2, 2, {3}, {1}, {0}},
      {"one input channel", 3, 1, 2, 20, 30, 4, 4, {1}, {1}, {0}},
      {"1x1 kernel", 4, 24, 16, 6, 6, 1, 1, {1}, {1}, {0}},
      {"groups 2", 2, 8, 8, 9, 9, 3, 3, {1}, {1}, {1}, 2},
  };
  int cases = 0;
  for (size_t i = 0; i < convs.size(); ++i) {
    const Conv& c = convs[i];
    // Each in float32 to nearest and rounding down (the mode in which a sum can be -0); the
    // odd shapes also rounding up and in float64.
    std::vector<std::pair<DType, Round>> modes{{DType::Float32, Round::NearestEven}, {DType::Float32, Round::Down}};
    if (i >= 4) modes.insert(modes.end(), {{DType::Float32, Round::Up}, {DType::Float64, Round::NearestEven}});
    for (const auto& mode : modes) {
      const DType d = mode.first;  // not a structured binding: clang-14 cannot capture one
      const Round r = mode.second;
      const int64_t folds = cpu::matmul_fold_runs(), planned = cpu::matmul_fold_planned_runs();
      check(describe(c, d, r), [&] { return gradients(c, d, r, false); });
      // Every case but the grouped one (whose product is batched over the groups) folds its
      // window tensor tile by tile, every unit through the fold's lane plan (plan_fold_vec).
      if (c.groups == 1) {
        EXPECT_GT(cpu::matmul_fold_runs(), folds) << describe(c, d, r) << " was not folded";
        EXPECT_EQ(cpu::matmul_fold_planned_runs() - planned, cpu::matmul_fold_runs() - folds)
            << describe(c, d, r) << " folded a unit without the lane plan";
      }
      ++cases;
    }
  }
  for (const Conv& c : {convs[4], convs[9]})
    for (Round r : {Round::NearestEven, Round::Down})
      check(describe(c, DType::Float32, r) + " with inf and NaN",
            [&] { return gradients(c, DType::Float32, r, true); });
  std::printf("conv2d gradients: %d cases, %d backend runs equal to the reference, %lld folded\n", cases,
              g_runs - runs_before, static_cast<long long>(cpu::matmul_fold_runs() - folds_before));
}

// Under FusedScope the input gradient's product is a REDUCE_MULACC: folded onto the image tile by
// tile too (the fused tiles), not written out as the whole window tensor first.
TEST(CpuConvGradients, FusedInputGradientFoldedOnEveryTarget) {
  const std::vector<Conv> convs{
      {"mnist layer 2", 1, 32, 32, 24, 24, 5, 5, {1}, {1}, {0}},
      {"padded", 3, 5, 7, 9, 11, 3, 3, {1}, {1}, {1}},
      {"stride 2 padded", 2, 4, 8, 11, 11, 5, 5, {2}, {1}, {2}},
      {"dilation 2", 2, 4, 6, 12, 10, 3, 2, {1}, {2}, {0}},
  };
  for (const Conv& c : convs)
    for (Round r : {Round::NearestEven, Round::Down}) {
      const int64_t folds = cpu::matmul_fold_runs();
      check(describe(c, DType::Float32, r) + " fused", [&] { return gradients(c, DType::Float32, r, false, true); });
      // Folded wherever the target has an FMA instruction (the fused tiles); this host's best does.
      EXPECT_GT(cpu::matmul_fold_runs(), folds) << describe(c, DType::Float32, r) << " fused was not folded";
    }
  check(describe(convs[1], DType::Float32, Round::NearestEven) + " fused, with inf and NaN",
        [&] { return gradients(convs[1], DType::Float32, Round::NearestEven, true, true); });
}

// A first layer's weight gradient over a batch large enough (32 channels by 75 (cin, ky, kx),
// k = 4 x 576) that its columns are split into two tasks (src/cpu/matmul.cpp). beautiful_mnist's
// first layer itself (one input channel: 32 x 25 outputs) runs as a long sum onto few outputs
// from batch 8 on (src/cpu/gemm_longk.cpp, tests/cpu/gemm_longk_test.cpp); this one's k of 2,304,
// short of gemm_longk's 4,096, leaves it to the split.
TEST(CpuConvGradients, LongWeightGradientSplitIntoColumnTasks) {
  const Conv c{"3 channels, batch 4", 4, 3, 32, 28, 28, 5, 5, {1}, {1}, {0}};
  for (Round r : {Round::NearestEven, Round::Down}) {
    const int64_t splits = cpu::matmul_column_splits();
    check(describe(c, DType::Float32, r), [&] { return gradients(c, DType::Float32, r, false); });
    EXPECT_GT(cpu::matmul_column_splits(), splits) << describe(c, DType::Float32, r) << " was not split";
  }
  check(describe(c, DType::Float32, Round::NearestEven) + " with inf and NaN",
        [&] { return gradients(c, DType::Float32, Round::NearestEven, true); });
}

// A weight gradient computed transposed (rows (cin, ky, kx), 200 of them; k the 1,600 positions)
// packs its windows a panel of 12 rows at a time, each row read through its own pointer, at most
// 5 of them adjacent (src/cpu/gemm_pack.h): every run takes that path.
TEST(CpuConvGradients, WeightGradientPanelsPackedRowByRow) {
  const Conv c{"weight gradient of 8->4 5x5 on 24x24, batch 4", 4, 8, 4, 24, 24, 5, 5, {1}, {1}, {0}};
  for (Round r : {Round::NearestEven, Round::Down}) {
    const int64_t rows = cpu::gemm_row_a_panels();
    const int compared = g_runs;
    check(describe(c, DType::Float32, r), [&] { return gradients(c, DType::Float32, r, false); });
    EXPECT_GE(cpu::gemm_row_a_panels() - rows, g_runs - compared) << describe(c, DType::Float32, r) << ": not row by row";
  }
  check(describe(c, DType::Float32, Round::NearestEven) + " with inf and NaN",
        [&] { return gradients(c, DType::Float32, Round::NearestEven, true); });
}

// The same panels on x86 with AVX2 (float32): eight k at a time through registers wherever
// eight k are adjacent along an output row (gemm.cpp's PackAPanel), then four, the rest element
// by element; every run on that target must take it. On AVX-512 the same products read A in
// place instead (gemm.cpp's AInPlace: one column panel), and every run there must: twelve-row
// tiles (4 output channels: the 12 x 2 tile, 200 rows, so the last tile is part past the
// product) with runs of 20 k cut by the 128-k blocks (also with inf and NaN, and fused) and of
// 6, and six-row tiles (64 output channels: the 6 x 4 tile) with runs of 12; on AVX2, four-row
// panels (its 4 x 2 tile) of the same. Only compared: a stride of 2 (no two k adjacent) and a
// padded image (its windows copied dense with kx innermost, so no two k adjacent either).
TEST(CpuConvGradients, WeightGradientPanelsPackedInRegisters) {
  auto windows = [] { return cpu::gemm_register_window_a_panels(); };
  auto in_place = [] { return cpu::gemm_a_in_place_tasks(); };
  const Conv runs20{"runs of 20", 4, 8, 4, 24, 24, 5, 5, {1}, {1}, {0}};
  const Conv runs12{"runs of 12", 7, 12, 64, 16, 16, 5, 5, {1}, {1}, {0}};
  const Conv runs6{"runs of 6", 51, 16, 4, 8, 8, 3, 3, {1}, {1}, {0}};
  int checked = 0;
  for (const Conv& c : {runs20, runs12, runs6}) {
    auto run = [&] { return gradients(c, DType::Float32, Round::NearestEven, false); };
    checked += check_path_on(describe(c, DType::Float32, Round::NearestEven), run, windows, "pack A through registers",
                             {"avx2"});
    checked += check_path_on(describe(c, DType::Float32, Round::NearestEven), run, in_place, "read A in place",
                             {"avx512"});
  }
  auto specials = [&] { return gradients(runs20, DType::Float32, Round::Down, true); };
  checked += check_path_on(describe(runs20, DType::Float32, Round::Down) + " with inf and NaN", specials, windows,
                           "pack A through registers", {"avx2"});
  checked += check_path_on(describe(runs20, DType::Float32, Round::Down) + " with inf and NaN", specials, in_place,
                           "read A in place", {"avx512"});
  for (const Conv& c : {runs20, runs12})  // the FMA tiles (REDUCE_MULACC) read A in place too
    checked += check_path_on(describe(c, DType::Float32, Round::NearestEven) + " fused",
                             [&] { return gradients(c, DType::Float32, Round::NearestEven, false, true); }, in_place,
                             "read A in place", {"avx512"});
  for (const Conv& c : {Conv{"stride 2", 14, 8, 4, 24, 24, 5, 5, {2}, {1}, {0}},
                        Conv{"padded", 4, 16, 4, 22, 22, 3, 3, {1}, {1}, {1}}})
    check(describe(c, DType::Float32, Round::NearestEven),
          [&] { return gradients(c, DType::Float32, Round::NearestEven, false); });
  if (checked == 0) GTEST_SKIP() << "no AVX2 on this machine: compared, path not checked";
}

// A weight gradient summed over a long k (24 images of 20x20 outputs: k = 9600, more than two
// blocks of 4096 rows): its one B panel, the output gradient transposed, is packed a block of
// rows per task (try_matmul), each block's stretches of k (an image's plane) transposed whole
// (pack_b_panels). Every run must pack so (fused: on the targets with FMA); with inf and NaN.
TEST(CpuConvGradients, LongWeightGradientPacksItsPanelInRowBlocks) {
  const Conv c{"weight gradient over 24 images", 24, 8, 4, 24, 24, 5, 5, {1}, {1}, {0}};
  auto blocks = [] { return cpu::matmul_row_block_packs(); };
  check_path(describe(c, DType::Float32, Round::NearestEven),
             [&] { return gradients(c, DType::Float32, Round::NearestEven, false); }, blocks, "pack B in row blocks");
  check_path(describe(c, DType::Float32, Round::Up) + " with inf and NaN",
             [&] { return gradients(c, DType::Float32, Round::Up, true); }, blocks, "pack B in row blocks");
  // Fused: the packed tiles run only where the target has FMA (elsewhere the exact software path).
  check_path_on(describe(c, DType::Float32, Round::NearestEven) + " fused",
                [&] { return gradients(c, DType::Float32, Round::NearestEven, false, true); }, blocks,
                "pack B in row blocks", {"avx2", "avx512"});
}

// A weight gradient with more rows (cin, ky, kx) than four blocks of kGemmMC over a long k (16
// input channels: 400 rows; 21 images of 20x20 outputs: k = 8400): every task streams the one B
// panel packed whole, so the rows run in four wider blocks (GemmArgs::mc: 108 rows, the last 76)
// instead of five of 96. Every run must (fused: on the targets with FMA); with inf and NaN (a
// third case, plain and round-to-nearest, added 2.4 s of the reference executor).
TEST(CpuConvGradients, LongWeightGradientRunsInFourRowBlocks) {
  const Conv c{"weight gradient of 16->4 over 21 images", 21, 16, 4, 24, 24, 5, 5, {1}, {1}, {0}};
  auto wide = [] { return cpu::matmul_wide_row_blocks(); };
  auto weight_gradient = [&](Round r, bool special, bool fused) {
    return [&c, r, special, fused] {
      Gen gen(77);
      const DType d = DType::Float32;
      const int64_t o = c.h - c.kh + 1;
      Tensor x = tensor_of_bits(near_one(gen, c.n * c.cin * c.h * c.w), {c.n, c.cin, c.h, c.w}, d);
      Tensor w = tensor_of_bits(near_one(gen, c.cout * c.cin * c.kh * c.kw), {c.cout, c.cin, c.kh, c.kw}, d);
      std::vector<uint64_t> gv = near_one(gen, c.n * c.cout * o * o);
      if (special) gv[5] = encode(sf::kF32, NAN), gv[gv.size() / 2] = encode(sf::kF32, INFINITY);
      Tensor g = tensor_of_bits(gv, {c.n, c.cout, o, o}, d);
      if (fused) {
        const Tensor three = Tensor::full({}, 3.0, d);
        x = x.div(three).realized_leaf(), g = g.div(three).realized_leaf();
      }
      const FusedScope products(fused);
      RoundingScope scope(r);
      return (x.conv2d(w) * g).sum().gradient({w})[0];
    };
  };
  check_path(describe(c, DType::Float32, Round::Down) + " with inf and NaN", weight_gradient(Round::Down, true, false),
             wide, "run in four row blocks");
  check_path_on(describe(c, DType::Float32, Round::NearestEven) + " fused", weight_gradient(Round::NearestEven, false, true),
                wide, "run in four row blocks", {"avx2", "avx512"});
}

// ReLU's gradient through conv2d's input gradient: where(0 < h, dh, 0) over the fold's result is
// run as the fold's epilogue (matmul_fold.cpp, try_matmul_fold_epilogue), each image plane
// masked as soon as it is folded, by the row epilogue's mask (epilogue_rows.h). The ReLU sits
// between two convs with a bias on the first, whose gradient also reads the mask (so the masked
// gradient is written out), and is realized first, as a training step's forward is (the mask
// then reads its output). inf, NaN and -0 in the output gradient, float32 (default and fused)
// and float64, two rounding modes. Every run must take both the fold's epilogue and the mask.
TEST(CpuConvGradients, ReluGradientMasksEachFoldedPlane) {
  auto folds = [] { return cpu::fold_epilogue_runs(); };
  auto masks = [] { return cpu::mask_row_tasks(); };
  for (DType d : {DType::Float32, DType::Float64})
    for (Round r : {Round::NearestEven, Round::Up})
      for (bool fused : {false, true}) {
        if (fused && d == DType::Float64) continue;
        const std::string what = std::string("relu between two convs, ") + std::string(dtype_name(d)) + " " +
                                 std::string(round_name(r)) + (fused ? " fused" : "");
        auto build = [&, d, r, fused] {
          Gen gen(91);
          const sf::Format f = fmt(d);
          // The first image zero and the first bias +0: that channel's conv is a signed zero
          // there, which the mask must not pass (CMPLT(0, -0) and CMPLT(0, +0) are false).
          std::vector<uint64_t> xv = near_one(gen, 4 * 3 * 14 * 14, f), bv = near_one(gen, 8, f);
          std::fill(xv.begin(), xv.begin() + 3 * 14 * 14, encode(f, 0.0));
          bv[0] = encode(f, 0.0);
          Tensor x = tensor_of_bits(xv, {4, 3, 14, 14}, d);
          Tensor w1 = tensor_of_bits(near_one(gen, 8 * 3 * 3 * 3, f), {8, 3, 3, 3}, d);
          Tensor b1 = tensor_of_bits(bv, {8}, d);
          Tensor w2 = tensor_of_bits(near_one(gen, 6 * 8 * 3 * 3, f), {6, 8, 3, 3}, d);
          std::vector<uint64_t> gv = near_one(gen, 4 * 6 * 10 * 10, f);
          gv[7] = encode(f, NAN), gv[333] = encode(f, INFINITY), gv[1000] = encode(f, -0.0);
          Tensor g = tensor_of_bits(gv, {4, 6, 10, 10}, d);
          if (fused) {
            const Tensor three = Tensor::full({}, 3.0, d);
            x = x.div(three).realized_leaf(), w2 = w2.div(three).realized_leaf();
          }
          const FusedScope products(fused);
          RoundingScope scope(r);
          Tensor a = x.conv2d(w1, b1).relu();
          a.realize();  // as a training step's forward is before its gradients: the mask reads it
          Tensor y = a.conv2d(w2);
          std::vector<Tensor> gr = (y * g).sum().gradient({w1, b1});
          return gr[0].flatten().cat({gr[1]});
        };
        const int64_t masked = masks();
        if (fused) check_path_on(what, build, folds, "mask the fold's planes", {"avx2", "avx512"});
        else check_path(what, build, folds, "mask the fold's planes");
        EXPECT_GT(masks(), masked) << what << ": the mask ran through the tile interpreter";
      }
}

}  // namespace
}  // namespace maroon::test
