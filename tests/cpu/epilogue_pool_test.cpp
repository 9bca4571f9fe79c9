// A 2 x 2 max-pool folded inside the conv's epilogue (src/cpu/epilogue_pool.cpp), against the
// reference executor bit for bit on every SIMD target and 1-3 threads, each CPU run checked to
// have taken the path (cpu::epilogue_pools): conv2d + bias (+ ReLU) then MaxPool cut as the ONNX
// importer cuts it (shrink, reshape, permute, max over the last two axes) and as
// Tensor::max_pool2d does, on 32x32, 16x16 and 8x8 images (the CNN's; rows of 16 and 8 pooled
// outputs: whole and half vectors) and 12-wide ones (rows of 6: the gathered tail), float32 and
// float64, with NaN payloads, infinities, signed zeros (a window of +0 and -0 without the ReLU)
// and subnormals in the bias. Pools it must leave to their own step still agree: 3x3 windows,
// stride 1, odd planes, a sum (average pool).
#include <gtest/gtest.h>

#include "cpu/epilogue.h"
#include "cpu/epilogue_pool.h"
#include "harness.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

// A bias whose first values are NaNs with payloads, +-0, +-inf and a subnormal, the rest near 1.
Tensor special_bias(DType d, int64_t n, uint64_t seed) {
  const bool f32 = d == DType::Float32;
  Gen g(seed);
  std::vector<uint64_t> v = near_one(g, static_cast<size_t>(n), f32 ? sf::kF32 : sf::kF64);
  const std::vector<uint64_t> sp =
      f32 ? std::vector<uint64_t>{0x7FA00001u, 0xFFC12345u, 0x80000000u, 0u, 0x7F800000u, 0xFF800000u, 0x80000003u}
          : std::vector<uint64_t>{0x7FF4000000000001ull, 0xFFF8000000012345ull, 0x8000000000000000ull, 0ull,
                                  0x7FF0000000000000ull, 0xFFF0000000000000ull, 0x8000000000000003ull};
  for (size_t i = 0; i < sp.size() && i < v.size(); ++i) v[i] = sp[i];
  return tensor_of_bits(v, {n}, d);
}

// MaxPool as src/onnx/ops_pool.cpp cuts it: kh x kw windows at stride (kh, kw).
Tensor onnx_max_pool(const Tensor& x, int64_t kh, int64_t kw) {
  const Shape& s = x.shape();
  const int64_t oh = s[2] / kh, ow = s[3] / kw;
  return x.shrink({{0, s[0]}, {0, s[1]}, {0, oh * kh}, {0, ow * kw}})
      .reshape({s[0], s[1], oh, kh, ow, kw})
      .permute({0, 1, 2, 4, 3, 5})
      .max(Axis({4, 5}));
}

void check_pooled(const std::string& what, const std::function<Tensor()>& build) {
  check_path(what, build, [] { return cpu::epilogue_pools(); }, "fold the pool in the epilogue");
}

void check_not_pooled(const std::string& what, const std::function<Tensor()>& build) {
  check_epilogue_without(what, build, [] { return cpu::matmul_epilogue_runs(); }, [] { return cpu::epilogue_pools(); },
                         "folded the pool in the epilogue");
}

TEST(CpuEpiloguePool, ConvBiasReluMaxPoolBitExact) {
  for (DType d : {DType::Float32, DType::Float64}) {
    const std::string dn(dtype_name(d));
    struct Img { int64_t cin, cout, h, w; };
    for (Img im : {Img{3, 16, 32, 32}, Img{16, 32, 16, 16}, Img{3, 16, 8, 8}, Img{3, 16, 6, 12}}) {
      const std::string tag = dn + " " + std::to_string(im.cin) + "->" + std::to_string(im.cout) + " on " +
                              std::to_string(im.h) + "x" + std::to_string(im.w);
      auto x = [=](uint64_t seed, bool specials = false) { return near_one_tensor(d, {2, im.cin, im.h, im.w}, seed, specials); };
      auto w = [=](uint64_t seed) { return near_one_tensor(d, {im.cout, im.cin, 3, 3}, seed); };
      check_pooled("conv2d + bias, relu, onnx max-pool " + tag, [=] {
        return onnx_max_pool(x(1).conv2d(w(2), special_bias(d, im.cout, 3), 1, {1}, {1}, {1}).relu(), 2, 2);
      });
      check_pooled("conv2d + bias (signed zeros, NaNs in windows), onnx max-pool " + tag, [=] {
        return onnx_max_pool(x(4).conv2d(w(5), special_bias(d, im.cout, 6), 1, {1}, {1}, {1}), 2, 2);
      });
      check_pooled("conv2d of specials + bias, relu, max_pool2d " + tag, [=] {
        return x(7, true).conv2d(w(8), special_bias(d, im.cout, 9), 1, {1}, {1}, {1}).relu().max_pool2d({2, 2});
      });
    }
    // Batch 2 of 24x24: tasks of 256 positions (10 2/3 image rows), so windows split between
    // two tasks, folded after. (Through the padded input's copy, cpu/matmul_plan.cpp: 32x32
    // images made tasks of 8 rows, and no window was split.)
    const int64_t straddled = cpu::epilogue_pools_straddled();
    check_pooled(dn + " windows split between tasks", [=] {
      // Each run's output allocated where a tensor of other values of its size was freed: a
      // window left unfolded would not read as the last run's result left in a reused block.
      { Tensor other = near_one_tensor(d, {2, 16, 12, 12}, 15).neg().realize(); }
      return onnx_max_pool(near_one_tensor(d, {2, 3, 24, 24}, 12)
                               .conv2d(near_one_tensor(d, {16, 3, 3, 3}, 13), special_bias(d, 16, 14), 1, {1}, {1}, {1})
                               .relu(),
                           2, 2);
    });
    EXPECT_GT(cpu::epilogue_pools_straddled(), straddled) << dn << ": no window was split between tasks";
    // The conv's output read by another op too (a sum beside the pool): still written whole.
    check_pooled(dn + " conv output also summed", [=] {
      Tensor y = near_one_tensor(d, {2, 3, 16, 16}, 16)
                     .conv2d(near_one_tensor(d, {16, 3, 3, 3}, 17), special_bias(d, 16, 18), 1, {1}, {1}, {1})
                     .relu();
      return onnx_max_pool(y, 2, 2).add(y.sum(Axis({2, 3}), true).reshape({2, 16, 1, 1}));
    });
    // A plane of -0 and +0 and NaNs only: every window's max is decided by the signed-zero and
    // NaN rules (the conv of zeros is +0 or -0 by the bias).
    check_pooled(dn + " windows of signed zeros and NaNs", [=] {
      const sf::Format f = d == DType::Float32 ? sf::kF32 : sf::kF64;
      Tensor z = tensor_of_bits(std::vector<uint64_t>(2 * 3 * 16 * 16, f.sign_bit()), {2, 3, 16, 16}, d);
      return onnx_max_pool(z.conv2d(near_one_tensor(d, {16, 3, 3, 3}, 10), special_bias(d, 16, 11), 1, {1}, {1}, {1}), 2, 2);
    });
  }
}

TEST(CpuEpiloguePool, OtherPoolsKeepTheirStep) {
  const DType d = DType::Float32;
  auto conv = [=](int64_t h, int64_t w) {
    return near_one_tensor(d, {2, 3, h, w}, 20).conv2d(near_one_tensor(d, {16, 3, 3, 3}, 21),
                                                        special_bias(d, 16, 22), 1, {1}, {1}, {1}).relu();
  };
  check_not_pooled("3x3 windows", [=] { return onnx_max_pool(conv(18, 18), 3, 3); });
  check_not_pooled("2x2 windows at stride 1", [=] { return conv(16, 16).max_pool2d({2, 2}, {1, 1}); });
  check_not_pooled("odd plane (a row dropped)", [=] { return onnx_max_pool(conv(15, 16), 2, 2); });
  check_not_pooled("average pool", [=] { return conv(16, 16).avg_pool2d({2, 2}); });
}

}  // namespace
}  // namespace maroon::test
