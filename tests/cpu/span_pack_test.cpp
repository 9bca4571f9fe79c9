// A panels packed a k at a time by a lane permute (src/cpu/gemm.cpp's PackASpan, AVX-512):
// conv2d's im2col rows when the product is not computed transposed (narrow images, strided
// convs), in one group of rows or two (a panel that crosses an output row). Against the
// reference executor, bit for bit, on every SIMD target and 1-3 threads; each AVX-512 run must
// take the path.
#include <gtest/gtest.h>

#include "cpu/gemm.h"
#include "harness.h"

namespace maroon::test {
namespace {

void check_span(const std::string& what, const std::function<Tensor()>& build) {
  check_path_on(what, build, [] { return cpu::gemm_span_a_panels(); }, "pack A panels by lane permutes",
                {"avx512"});
}

TEST(CpuSpanPack, StridedAndNarrowConvsBitExact) {
  const DType d = DType::Float32;
  struct Conv { int64_t cin, cout, hw, stride, pad; };
  // 16->32 stride 2 on 32x32 (12-row panels 2 apart, some across two output rows), 32->64
  // stride 2 on 16x16 and 64->64 on 8x8 (6-row panels across rows), a narrow 9x9 image (with
  // NaN, infinities, signed zeros and subnormals in x; elsewhere they would make most sums NaN).
  for (Conv c : {Conv{16, 32, 32, 2, 1}, Conv{32, 64, 16, 2, 1}, Conv{64, 64, 8, 1, 1}, Conv{8, 24, 9, 1, 0}}) {
    const std::string tag = std::to_string(c.cin) + "->" + std::to_string(c.cout) + " on " + std::to_string(c.hw) +
                            " stride " + std::to_string(c.stride);
    const int64_t k = 3;
    check_span("conv2d " + tag, [=] {
      // As ONNX's Conv runs (src/onnx/ops_nn.cpp): the padded input written out first.
      Tensor x = near_one_tensor(d, {2, c.cin, c.hw, c.hw}, c.cin + c.hw, c.cin == 8)
                     .pad({{0, 0}, {0, 0}, {c.pad, c.pad}, {c.pad, c.pad}})
                     .mul(Tensor::full({}, 1.0, d));
      Tensor w = near_one_tensor(d, {c.cout, c.cin, k, k}, c.cout + 7);
      return x.conv2d(w, std::nullopt, 1, {c.stride}, {1}, {0});
    });
  }
  // float64 keeps the element-by-element packing (and the same bits).
  check("float64 conv2d 16->32 stride 2", [] {
    return near_one_tensor(DType::Float64, {1, 16, 16, 16}, 5, true)
        .conv2d(near_one_tensor(DType::Float64, {32, 16, 3, 3}, 6, true), std::nullopt, 1, {2}, {1}, {1});
  });
}

}  // namespace
}  // namespace maroon::test
