// Layer normalization over the last axis as one kernel (src/cpu/row_layernorm.cpp), as the ONNX
// importer builds it (src/onnx/ops_nn.cpp: mean, x - mean, the squares' mean, 1 / sqrt(var + eps),
// the scale and the shift), against the reference executor on every SIMD target and 1-3 threads
// (harness.h), each run checked to take the kernel.
#include <gtest/gtest.h>

#include "cpu/row_layernorm.h"
#include "cpu/row_softmax.h"
#include "harness.h"
#include "maroon/maroon.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

int64_t layernorm_tasks() { return cpu::row_layernorm_tasks(); }

Tensor onnx_layernorm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps = 1e-5) {
  const int64_t last = x.ndim() - 1;
  Tensor mean = x.mean(Axis(std::vector<int64_t>{last}), true);
  Tensor d = x.sub(mean);
  Tensor var = d.mul(d).mean(Axis(std::vector<int64_t>{last}), true);
  Tensor invstd = var.add(Tensor::full({}, eps, DType::Float32)).sqrt().reciprocal();
  return d.mul(invstd).mul(gamma).add(beta);
}

// Rows of 64 (the encoder's), 100 and 7 (a tail past the last whole vector, folded by gathers),
// 16; row counts that leave a partial group of lanes and a partial task; values near one with
// NaN, infinities, signed zeros and subnormals (one in eight), random bits (overflowing squares,
// zero variances); x a leaf, a matmul's result, and a residual add the plan would recompute in
// each reader (written out for the kernel instead).
TEST(CpuBackend, RowLayerNormOneKernel) {
  const int runs_before = g_runs;
  int cases = 0;
  const Shape shapes[] = {{6, 9, 64}, {3, 5, 100}, {37, 7}, {70, 16}, {2, 33, 64}};
  for (const Shape& s : shapes) {
    const uint64_t seed = 1900 + static_cast<uint64_t>(cases);
    const int64_t len = s.back();
    auto affine = [&](uint64_t k) { return near_one_tensor(DType::Float32, {len}, seed + k, true); };
    check_path("layernorm near one " + shape_str(s), [&] {
      return onnx_layernorm(near_one_tensor(DType::Float32, s, seed, true), affine(10), affine(11));
    }, layernorm_tasks, "run the row layernorm");
    check_path("layernorm random bits " + shape_str(s), [&] {
      return onnx_layernorm(random_bits_tensor(s, DType::Float32, seed + 1), affine(12), affine(13), 0.25);
    }, layernorm_tasks, "run the row layernorm");
    check_path("layernorm of a residual add " + shape_str(s), [&] {
      Tensor a = near_one_tensor(DType::Float32, s, seed + 2, true);
      Tensor b = near_one_tensor(DType::Float32, s, seed + 3);
      return onnx_layernorm(a + b, affine(14), affine(15));
    }, layernorm_tasks, "run the row layernorm");
    check_path("layernorm of a matmul " + shape_str(s), [&] {
      Shape as = s;
      as.back() = 16;
      Tensor a = near_one_tensor(DType::Float32, as, seed + 4, true);
      Tensor b = near_one_tensor(DType::Float32, {16, len}, seed + 5);
      return onnx_layernorm(a.matmul(b), affine(16), affine(17));
    }, layernorm_tasks, "run the row layernorm");
    cases += 4;
  }
  std::printf("row layernorm: %d cases, %d backend runs equal to the reference\n", cases, g_runs - runs_before);
}

// Without a scale and shift: Tensor::layernorm (x - mean, times 1 / sqrt(var + eps)), which the
// kernel takes as its last multiply (session 30; before, three kernels: 2.7x PyTorch's time on
// (8192,512)). Shapes and values as above, x a leaf, a residual add and a matmul's result.
TEST(CpuBackend, RowLayerNormWithoutScaleAndShift) {
  int64_t seed = 1960;
  for (const Shape& s : {Shape{6, 9, 64}, Shape{3, 5, 100}, Shape{37, 7}, Shape{2, 33, 64}}) {
    check_path("Tensor::layernorm " + shape_str(s), [&] {
      return near_one_tensor(DType::Float32, s, seed, true).layernorm(-1);
    }, layernorm_tasks, "run the row layernorm");
    check_path("Tensor::layernorm of random bits, eps 0.25 " + shape_str(s), [&] {
      return random_bits_tensor(s, DType::Float32, seed + 1).layernorm(-1, 0.25);
    }, layernorm_tasks, "run the row layernorm");
    check_path("Tensor::layernorm of a residual add " + shape_str(s), [&] {
      return (near_one_tensor(DType::Float32, s, seed + 2, true) + near_one_tensor(DType::Float32, s, seed + 3))
          .layernorm(-1);
    }, layernorm_tasks, "run the row layernorm");
    check_path("ONNX-style layernorm without scale and shift " + shape_str(s), [&] {
      Tensor x = near_one_tensor(DType::Float32, s, seed + 4, true);
      const int64_t last = x.ndim() - 1;
      Tensor d = x.sub(x.mean(Axis(std::vector<int64_t>{last}), true));
      Tensor var = d.mul(d).mean(Axis(std::vector<int64_t>{last}), true);
      return d.mul(var.add(Tensor::full({}, 1e-5, DType::Float32)).sqrt().reciprocal());
    }, layernorm_tasks, "run the row layernorm");
    seed += 10;
  }
}

// Layernorms the kernel must leave alone (float64, another rounding mode, a scale without a shift) and a scale seen through a flip (planned for the kernel, then computed node by node
// because the row is not contiguous): the same bits, and the kernel does not run.
TEST(CpuBackend, RowLayerNormOtherCasesKeepTheirKernels) {
  auto none = [](const std::string& what, const std::function<Tensor()>& build) {
    const int64_t before = layernorm_tasks();
    check(what, build);
    EXPECT_EQ(layernorm_tasks(), before) << what << ": ran the row layernorm";
  };
  const Shape s{6, 9, 64};
  none("layernorm float64", [&] {
    Tensor x = near_one_tensor(DType::Float64, s, 1990, true);
    Tensor g = near_one_tensor(DType::Float64, {64}, 1991);
    Tensor mean = x.mean(Axis(std::vector<int64_t>{2}), true);
    Tensor d = x.sub(mean);
    Tensor var = d.mul(d).mean(Axis(std::vector<int64_t>{2}), true);
    return d.mul(var.add(1e-5).sqrt().reciprocal()).mul(g).add(g);
  });
  none("layernorm rounding down", [&] {
    Tensor x = near_one_tensor(DType::Float32, s, 1992, true);
    Tensor g = near_one_tensor(DType::Float32, {64}, 1993);
    RoundingScope scope(Round::Down);
    return onnx_layernorm(x, g, g);
  });
  none("layernorm with a scale, without a shift", [&] {
    Tensor x = near_one_tensor(DType::Float32, s, 1994, true);
    Tensor g = near_one_tensor(DType::Float32, {64}, 1995);
    Tensor mean = x.mean(Axis(std::vector<int64_t>{2}), true);
    Tensor d = x.sub(mean);
    Tensor var = d.mul(d).mean(Axis(std::vector<int64_t>{2}), true);
    return d.mul(var.add(Tensor::full({}, 1e-5, DType::Float32)).sqrt().reciprocal()).mul(g);
  });
  none("layernorm with a flipped scale", [&] {
    Tensor x = near_one_tensor(DType::Float32, s, 1996, true);
    Tensor g = near_one_tensor(DType::Float32, {64}, 1997);
    return onnx_layernorm(x, g.flip({0}), g);
  });
}

// A captured step (TinyJit) replays its plans on a private copy of the graph (Plan::remap): an
// attention-like step, softmax then layernorm of a residual add, gives the plain function's bits
// on every call, with new data each time, and its replays run both row kernels.
TEST(CpuBackend, RowKernelsInTinyJitReplays) {
  auto step = [](const std::vector<Tensor>& in) {
    Tensor p = in[0].matmul(in[1]).softmax(-1);
    return std::vector<Tensor>{onnx_layernorm(p.matmul(in[1]) + in[0], in[2], in[3])};
  };
  for (int t : {1, 2}) {
    BackendSettings keep;
    set_backend(Backend::Cpu);
    set_num_threads(t);
    TinyJit jit(step);
    for (int k = 0; k < 5; ++k) {
      const uint64_t seed = 2000 + static_cast<uint64_t>(10 * k);
      auto inputs = [&] {
        return std::vector<Tensor>{near_one_tensor(DType::Float32, {4, 24, 64}, seed, true),
                                   near_one_tensor(DType::Float32, {64, 64}, seed + 1),
                                   near_one_tensor(DType::Float32, {64}, seed + 2),
                                   near_one_tensor(DType::Float32, {64}, seed + 3)};
      };
      const int64_t sm = cpu::row_softmax_tasks(), ln = layernorm_tasks();
      std::vector<uint8_t> got = jit(inputs())[0].bytes();
      if (k >= 2) {
        EXPECT_GT(cpu::row_softmax_tasks(), sm) << "replay " << k << " did not run the row softmax";
        EXPECT_GT(layernorm_tasks(), ln) << "replay " << k << " did not run the row layernorm";
      }
      set_backend(Backend::Ref);
      std::vector<uint8_t> want = step(inputs())[0].bytes();
      set_backend(Backend::Cpu);
      ASSERT_EQ(got, want) << "call " << k << " on " << t << " threads";
    }
  }
}

}  // namespace
}  // namespace maroon::test
