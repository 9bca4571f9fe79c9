// Panels packed a k at a time by a lane permute (src/cpu/gemm.cpp, AVX-512): A panels (PackASpan)
// of conv2d's im2col rows when the product is not computed transposed (images narrower than 8
// positions), and B panels (PackBSpan) of its columns when it is (src/cpu/matmul.cpp's
// grouped_rows: output rows of at least 8 positions 2 apart, stride-2 convs 3x3 and 1x1, or two
// rows of an 8-wide image), in one group of rows or two (a panel that crosses an output row).
// Against the reference executor, bit for bit, on every SIMD target and 1-3 threads; each
// AVX-512 run must take the path.
#include <gtest/gtest.h>

#include "cpu/gemm.h"
#include "harness.h"

namespace maroon::test {
namespace {

struct Conv {
  int64_t cin, cout, hw, k, stride, pad;
  std::string tag() const {
    return std::to_string(cin) + "->" + std::to_string(cout) + " " + std::to_string(k) + "x" + std::to_string(k) +
           " on " + std::to_string(hw) + " stride " + std::to_string(stride);
  }
};

// As ONNX's Conv runs (src/onnx/ops_nn.cpp): the padded input written out first. Specials (NaN,
// infinities, signed zeros, subnormals) in x where asked; elsewhere they would make most sums NaN.
Tensor conv(const Conv& c, bool specials, bool bias_relu, int64_t batch = 2) {
  const DType d = DType::Float32;
  Tensor x = near_one_tensor(d, {batch, c.cin, c.hw, c.hw}, c.cin + c.hw, specials);
  if (c.pad) x = x.pad({{0, 0}, {0, 0}, {c.pad, c.pad}, {c.pad, c.pad}}).mul(Tensor::full({}, 1.0, d));
  Tensor w = near_one_tensor(d, {c.cout, c.cin, c.k, c.k}, c.cout + 7);
  if (!bias_relu) return x.conv2d(w, std::nullopt, 1, {c.stride}, {1}, {0});
  return x.conv2d(w, near_one_tensor(d, {c.cout}, c.cout + 3, true), 1, {c.stride}, {1}, {0}).relu();
}

TEST(CpuSpanPack, NarrowConvsPackAPanelsBitExact) {
  // 7 positions a row, stride 2 (12-row panels across output rows); a 7-wide image (6-row panels
  // across rows); a 7-wide one with specials.
  for (Conv c : {Conv{16, 32, 14, 3, 2, 1}, Conv{32, 32, 7, 3, 1, 1}, Conv{8, 24, 9, 3, 1, 0}})
    check_path_on("conv2d " + c.tag(), [=] { return conv(c, c.cin == 8, false); },
                  [] { return cpu::gemm_span_a_panels(); }, "pack A panels by lane permutes", {"avx512"});
  // float64 keeps the element-by-element packing (and the same bits).
  check("float64 conv2d 16->32 stride 2", [] {
    return near_one_tensor(DType::Float64, {1, 16, 16, 16}, 5, true)
        .conv2d(near_one_tensor(DType::Float64, {32, 16, 3, 3}, 6, true), std::nullopt, 1, {2}, {1}, {1});
  });
}

TEST(CpuSpanPack, StridedAndEightWideConvsPackBPanelsBitExact) {
  // The ONNX ResNet's stride-2 convs (3x3 and the 1x1 shortcuts: one group of 16 columns 2 apart)
  // and its 64->64 on 8x8 (two groups of 8), 16->32 on an odd 15x15 (8 outputs a row, 17 apart
  // after padding), specials in x for some; with a bias and ReLU (the write-out's epilogue) or not.
  const Conv convs[] = {{16, 32, 32, 3, 2, 1}, {16, 32, 32, 1, 2, 0}, {32, 64, 16, 3, 2, 1},
                        {32, 64, 16, 1, 2, 0}, {64, 64, 8, 3, 1, 1},  {16, 32, 15, 3, 2, 1}};
  for (size_t i = 0; i < std::size(convs); ++i) {
    const Conv c = convs[i];
    const bool specials = i % 2 == 1, epi = i % 3 != 0;
    check_path_on("conv2d " + c.tag() + (specials ? " with specials" : "") + (epi ? " + bias, relu" : ""),
                  [=] { return conv(c, specials, epi); }, [] { return cpu::gemm_span_b_panels(); },
                  "pack B panels by lane permutes", {"avx512"});
  }
}

TEST(CpuSpanPack, TilesAcrossTwoImagesWrittenAsColumnRuns) {
  // 8x8 outputs (64 an image), 3 images, in 48-column panels (the 8 x 3 tile of 32 channels,
  // AVX-512): a panel across two images is computed in a scratch tile and written a row's runs
  // at a time.
  const Conv c{16, 32, 15, 3, 2, 1};
  for (bool epi : {false, true})
    check_path_on("conv2d " + c.tag() + (epi ? " + bias, relu" : ""), [=] { return conv(c, true, epi, 3); },
                  [] { return cpu::gemm_column_run_tasks(); }, "write a tile as runs of columns", {"avx512"});
}

}  // namespace
}  // namespace maroon::test
