// Long sums onto few outputs (src/cpu/gemm_longk.cpp: one vector of one operand's rows a task,
// packed a k block at a time, tiles of up to 13 rows of the other operand broadcast over it)
// against the reference executor, bit for bit, on every SIMD target and 1, 2 and 3 threads:
// conv2d's first-layer weight gradient (the case it is for: its output gradient's channels as
// the lanes), plain products with A's rows as the lanes (a last vector of a few lanes, tiles of
// 13, 12, 8 and 4 rows, one vector split in two tasks) and with B's columns as the lanes (C's
// indices swapped), k runs cut by the blocks; float32 and float64, default and fused, every
// rounding mode, NaN, infinities, signed zeros and subnormals. Every case checks that the path
// ran, and that it did not where it must not (short k, many outputs, a batch).
#include <gtest/gtest.h>

#include "cpu/gemm_longk.h"
#include "harness.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

// Every run took the path; fused products only where the target has an FMA instruction (AVX2,
// AVX-512: elsewhere gemm_fused.h's software steps run them).
void check_longk(const std::string& what, const std::function<Tensor()>& build, bool fused = false) {
  if (!fused) return check_path(what, build, cpu::gemm_longk_runs, "run as a long sum onto few outputs");
  check_path_on(what, build, cpu::gemm_longk_runs, "run as a long sum onto few outputs", {"avx2", "avx512"});
}

// Values near one (near_one_tensor) and, with `special`, five special ones among them: a NaN,
// both infinities, a -0 and a subnormal, each at its own place. (near_one_tensor's specials, one
// in eight, put a NaN into every one of these long sums: all outputs NaN, whatever the kernel.)
Tensor operand(DType d, const Shape& s, uint64_t seed, bool special) {
  Gen gen(seed);
  const sf::Format f = d == DType::Float32 ? sf::kF32 : sf::kF64;
  std::vector<uint64_t> v = near_one(gen, static_cast<size_t>(numel(s)), f);
  if (special) {
    const size_t n = v.size();
    v[n / 7] = sf::canonical_nan(f);
    v[n / 3] = f.exp_mask() << f.mbits;
    v[n / 2 + 1] = f.sign_bit() | (f.exp_mask() << f.mbits);
    v[n - 2] = f.sign_bit();
    v[n / 5] = 1 + gen.next() % f.man_mask();
  }
  return tensor_of_bits(v, s, d);
}

std::string tag(DType d, Round r, bool fused) {
  return std::string(dtype_name(d)) + " " + std::string(round_name(r)) + (fused ? " fused" : "");
}

// The weight gradient of sum(conv2d(x, w) * g), x (n,1,28,28), w (32,1,5,5): 32 x 25 outputs,
// k = n * 576 (n = 8: 4,608). With `special`, g holds a NaN and x an infinity and a -0.
Tensor first_layer_weight_gradient(int64_t n, DType d, Round r, bool fused, bool special) {
  Tensor x = operand(d, {n, 1, 28, 28}, 11 + static_cast<uint64_t>(r), special);
  Tensor w = operand(d, {32, 1, 5, 5}, 12, false);
  Tensor g = operand(d, {n, 32, 24, 24}, 13, special);
  if (fused) {  // full mantissas: an FMA chain and a multiply-then-add differ
    const Tensor three = Tensor::full({}, 3.0, d);
    x = x.div(three).realized_leaf(), g = g.div(three).realized_leaf();
  }
  const FusedScope products(fused);
  RoundingScope scope(r);
  return (x.conv2d(w) * g).sum().gradient({w})[0];
}

TEST(CpuLongK, FirstLayerWeightGradient) {
  for (DType d : {DType::Float32, DType::Float64})
    for (Round r : kAllRounds)
      for (bool fused : {false, true}) {
        // The reference executor is slow: fused float32 in two modes, float64 in one.
        if (d == DType::Float64 ? r != Round::Down : fused && r != Round::NearestEven && r != Round::Up) continue;
        check_longk("first layer weight gradient " + tag(d, r, fused),
                    [&] { return first_layer_weight_gradient(8, d, r, fused, r == Round::NearestEven); }, fused);
      }
}

// A ResNet-style layer's weight gradient: 16 -> 16 channels, 3x3 with padding 1, on 4 images of
// 32x32 (k = 4,096): 16 x 144 outputs, the input's windows read over its padded copy
// (matmul_plan.cpp) and the output gradient's 16 rows the lanes.
TEST(CpuLongK, PaddedLayerWeightGradient) {
  for (bool fused : {false, true})
    check_longk(std::string("padded 16->16 3x3 weight gradient") + (fused ? " fused" : ""), [&] {
      Tensor x = near_one_tensor(DType::Float32, {4, 16, 32, 32}, 41);
      Tensor w = near_one_tensor(DType::Float32, {16, 16, 3, 3}, 42);
      Tensor g = near_one_tensor(DType::Float32, {4, 16, 32, 32}, 43);
      const FusedScope products(fused);
      return (x.conv2d(w, std::nullopt, 1, {1}, {1}, {1}) * g).sum().gradient({w})[0];
    }, fused);
}

// x (M, K) @ y (K, N), both row-major: A's rows (M) are the lanes, y's columns broadcast.
// M = 20: a vector and a last one of 4 lanes on AVX-512 (float32), 3 vectors of 8 and 4 on AVX2;
// N = 30: three tiles of 10 (the 12-row kernel, its last two rows read again and discarded);
// N = 25: 13 + 12; N = 7: one tile of 8; N = 3: of 4; M = 16, N = 40: one vector (on
// AVX-512), its four tiles split in two tasks. K = 4,200: the last block of 104.
TEST(CpuLongK, PlainProductsRowsAsLanes) {
  const int64_t shapes[][3] = {{20, 30, 4200}, {20, 25, 4200}, {16, 40, 4200}, {9, 7, 4200}, {33, 3, 4200},
                               {50, 50, 4200}, {16, 256, 4200}};  // the last two past 2,048 outputs
  for (const auto& s : shapes)
    for (DType d : {DType::Float32, DType::Float64})
      for (bool fused : {false, true}) {
        if (d == DType::Float64 && s[0] != 20) continue;  // the reference executor is slow
        const Round r = fused ? Round::Up : Round::NearestEven;
        const std::string shape = std::to_string(s[0]) + "x" + std::to_string(s[2]) + " @ " + std::to_string(s[2]) +
                                  "x" + std::to_string(s[1]);
        check_longk("matmul " + shape + " " + tag(d, r, fused), [&] {
          Tensor x = operand(d, {s[0], s[2]}, static_cast<uint64_t>(s[0] + s[1]), true);
          Tensor y = operand(d, {s[2], s[1]}, static_cast<uint64_t>(s[1] * 3), true);
          const FusedScope products(fused);
          RoundingScope scope(r);
          return x.matmul(y);
        }, fused);
      }
}

// x.T @ y.T from x (K, 20) and y (30, K): A's k is 20 apart (no runs), B's columns are y's rows,
// a stride apart and each contiguous along k: they are the lanes, and C's rows and columns
// swap roles. And a k that is not one run: y (30, 70, 60) summed over its last two axes with
// x (20, 70, 60) (k = 4,200 in runs of 60 through a permuted view, cut by the 256-k blocks).
TEST(CpuLongK, ColumnsAsLanesAndRunsOfK) {
  for (DType d : {DType::Float32, DType::Float64})
    for (Round r : {Round::NearestEven, Round::TowardZero}) {
      check_longk("x.T @ y.T, columns as lanes " + tag(d, r, false), [&] {
        Tensor x = operand(d, {4200, 20}, 21, true), y = operand(d, {30, 4200}, 22, true);
        RoundingScope scope(r);
        return x.permute({1, 0}).matmul(y.permute({1, 0}));
      });
      check_longk("runs of 60 along k " + tag(d, r, false), [&] {
        Tensor x = operand(d, {20, 70, 60}, 23, true), y = operand(d, {30, 60, 70}, 24, true);
        RoundingScope scope(r);
        Tensor a = x.reshape({20, 1, 70, 60}), b = y.permute({0, 2, 1}).reshape({1, 30, 70, 60});
        return (a * b).sum(std::vector<int64_t>{2, 3});
      });
    }
}

// Not this path: k below 4,096, more than 4,096 outputs, fewer than 8 rows for the lanes, and a
// batched product.
TEST(CpuLongK, OnlyLongSumsOntoFewOutputs) {
  const auto none = [](const std::string& what, const std::function<Tensor()>& build) {
    const int64_t before = cpu::gemm_longk_runs();
    check(what, build);
    EXPECT_EQ(cpu::gemm_longk_runs(), before) << what << " ran as a long sum";
  };
  none("k = 4,000", [] {
    return near_one_tensor(DType::Float32, {20, 4000}, 31).matmul(near_one_tensor(DType::Float32, {4000, 30}, 32));
  });
  none("70 x 60 outputs", [] {
    return near_one_tensor(DType::Float32, {70, 4200}, 33).matmul(near_one_tensor(DType::Float32, {4200, 60}, 34));
  });
  none("4 rows (lanes) by 30", [] {
    return near_one_tensor(DType::Float32, {4, 4200}, 37).matmul(near_one_tensor(DType::Float32, {4200, 30}, 38));
  });
  none("a batch of 2", [] {
    return near_one_tensor(DType::Float32, {2, 20, 4200}, 35).matmul(near_one_tensor(DType::Float32, {2, 4200, 30}, 36));
  });
}

}  // namespace
}  // namespace maroon::test
