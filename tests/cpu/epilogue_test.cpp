// The matmul's epilogue (src/cpu/epilogue.cpp, issue 16) against the reference executor, bit for
// bit, on every SIMD target and 1, 2 and 3 threads: a bias broadcast over rows or columns, ReLU
// (WHERE and MAXIMUM), a residual add, casts, conv2d's bias over planes (its product computed
// transposed and not), batches; operands and biases with NaN, infinities, signed zeros and
// subnormals; every rounding mode. Each case also checks that the epilogue ran (the fusion
// happened) or, where something else reads the product, that it did not.
#include <gtest/gtest.h>

#include "cpu/epilogue.h"
#include "harness.h"
#include "maroon/counters.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

// Values near 1 with random signs; with `specials`, about one in eight is a NaN, an infinity, a
// signed zero or a subnormal.
std::vector<uint64_t> values(DType d, int64_t n, uint64_t seed, bool specials) {
  Gen g(seed);
  const sf::Format f = fmt(d);
  std::vector<uint64_t> v = near_one(g, static_cast<size_t>(n), f);
  if (!specials) return v;
  for (auto& x : v) {
    switch (g.next() % 16) {
      case 0: x = sf::canonical_nan(f); break;
      case 1: x = f.exp_mask() << f.mbits; break;                 // +inf
      case 2: x = f.sign_bit() | (f.exp_mask() << f.mbits); break;  // -inf
      case 3: x = f.sign_bit(); break;                             // -0
      case 4: x = (g.next() & 1 ? f.sign_bit() : 0) | (1 + g.next() % f.man_mask()); break;  // subnormal
      default: break;
    }
  }
  return v;
}

Tensor data(DType d, const Shape& s, uint64_t seed, bool specials = false) {
  return tensor_of_bits(values(d, numel(s), seed, specials), s, d);
}

// x[M,K] @ y[K,N] as the Tensor API writes it (a REDUCE, then a reshape).
Tensor mm(const Tensor& x, const Tensor& y) { return x.matmul(y); }

Tensor relu_where(const Tensor& h) {
  return prim::where(prim::cmplt(Tensor::full({}, 0.0, h.dtype()), h), h, 0.0);
}

struct Size { int64_t m, k, n; };
std::string size_str(Size s) {
  return std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n);
}

// Checks a case and that the epilogue ran (or, with fuses = false, never ran) in every run.
void check_epilogue(const std::string& what, bool fuses, const std::function<Tensor()>& build) {
  const int64_t before = cpu::matmul_epilogue_runs();
  const int runs = g_runs;
  check(what, build);
  const int64_t ran = cpu::matmul_epilogue_runs() - before;
  if (fuses) {
    EXPECT_EQ(ran, g_runs - runs) << what << ": the epilogue did not run in every backend run";
  } else {
    EXPECT_EQ(ran, 0) << what << ": fused although something else reads the product";
  }
}

TEST(CpuBackend, MatmulEpilogueBiasReluResidual) {
  const int runs_before = g_runs;
  const int64_t epi_before = cpu::matmul_epilogue_runs();
  // One and several row blocks (96) and column blocks (256), k blocks (256), edge tiles.
  const Size sizes[] = {{33, 65, 17}, {100, 300, 130}, {800, 8, 520}, {20, 10, 300}};
  for (DType d : {DType::Float32, DType::Float64})
    for (Size s : sizes)
      for (Round r : kAllRounds) {
        // Every rounding mode on the small product; the larger ones (slow on the reference
        // executor) in two, and in float32 only.
        if (s.m != 33 && r != Round::NearestEven && r != Round::Down) continue;
        if (d == DType::Float64 && s.m * s.n > 10000) continue;  // float64: the small products
        const std::string tag = std::string(dtype_name(d)) + " " + size_str(s) + " " + std::string(round_name(r));
        const uint64_t seed = static_cast<uint64_t>(s.m * 131 + s.n + static_cast<int>(r) * 7);
        const bool specials = r == Round::NearestEven || r == Round::Down;
        auto x = [&] { return data(d, {s.m, s.k}, seed, specials); };
        auto y = [&] { return data(d, {s.k, s.n}, seed + 1); };
        // + bias over the columns (nn.Linear's), then relu
        check_epilogue("linear+relu " + tag, true, [&] {
          Tensor b = data(d, {s.n}, seed + 2, true);
          RoundingScope scope(r);
          return relu_where(mm(x(), y()).add(b));
        });
        // + bias per row (broadcast along the columns), relu as MAXIMUM
        check_epilogue("row bias+maximum " + tag, true, [&] {
          Tensor b = data(d, {s.m, 1}, seed + 3, true);
          RoundingScope scope(r);
          return prim::maximum(prim::add(mm(x(), y()), b.expand({s.m, s.n})), 0.0);
        });
        // + bias + residual, then relu (a ResNet block's end), x transposed in memory
        check_epilogue("bias+residual+relu x^T " + tag, true, [&] {
          Tensor xt = data(d, {s.k, s.m}, seed, specials).permute({1, 0});
          Tensor b = data(d, {1, s.n}, seed + 4, true), res = data(d, {s.m, s.n}, seed + 5, true);
          RoundingScope scope(r);
          return relu_where(mm(xt, y()).add(b).add(res));
        });
      }
  // A cast down and back up inside the chain (the result keeps the product's dtype), a scalar
  // scale (Gemm's alpha) and a residual read through a permuted view.
  check_epilogue("scale, cast and permuted residual", true, [] {
    Tensor res = data(DType::Float32, {70, 90}, 8, true).permute({1, 0});
    Tensor h = mm(data(DType::Float32, {90, 40}, 6, true), data(DType::Float32, {40, 70}, 7));
    return prim::mul(h, 0.5).cast(DType::Float16).cast(DType::Float32).add(res);
  });
  // Batched: [B, M, K] @ [B, K, N] + bias.
  check_epilogue("batched + bias", true, [] {
    Tensor x = data(DType::Float32, {3, 40, 70}, 9, true), y = data(DType::Float32, {3, 70, 50}, 10);
    return relu_where(mm(x, y).add(data(DType::Float32, {50}, 11, true)));
  });
  std::printf("matmul epilogues: %d backend runs equal to the reference, %lld with the epilogue\n",
              g_runs - runs_before, static_cast<long long>(cpu::matmul_epilogue_runs() - epi_before));
}

// A bias along the output's rows is read in place by tiles of whole vectors that lie in one row
// (epilogue.cpp; before, each tile copied its 256 elements): rows of 256 and of 320 (a tile of
// 256 and one of 64), and of 300 (its last 44 columns copied as before); a bias read through a
// strided view (every other element) is copied. NaN, infinities, signed zeros, subnormals, two
// rounding modes; every run of the rows of 256 and 320 must read a row in place. The ReLU's
// result is halved, so that the tile interpreter runs the chain (adds and a ReLU alone are the
// row epilogue's: epilogue_rows_test.cpp).
TEST(CpuBackend, MatmulEpilogueBiasRowsInPlace) {
  for (DType d : {DType::Float32, DType::Float64})
    for (Round r : {Round::NearestEven, Round::Up})
      for (int64_t n : {256, 320, 300}) {
        const std::string tag = std::string(dtype_name(d)) + " n " + std::to_string(n) + " " +
                                std::string(round_name(r));
        const int64_t before = cpu::epilogue_rows_in_place(), by_column = cpu::epilogue_rows_by_column();
        const int runs = g_runs;
        check_epilogue("linear+bias+relu, halved " + tag, true, [&] {
          Tensor x = data(d, {40, 24}, 51, true), y = data(d, {24, n}, 52);
          Tensor b = data(d, {n}, 53, true);
          RoundingScope scope(r);
          return prim::mul(relu_where(mm(x, y).add(b)), 0.5);
        });
        if (n != 300) {
          EXPECT_GE(cpu::epilogue_rows_in_place() - before, g_runs - runs) << tag << ": no row read in place";
          EXPECT_GE(cpu::epilogue_rows_by_column() - by_column, g_runs - runs) << tag << ": a row found by coordinates";
        }
      }
  check_epilogue("strided bias", true, [] {
    Tensor b = data(DType::Float32, {512}, 54, true).reshape({256, 2}).shrink({{0, 256}, {0, 1}}).reshape({256});
    return mm(data(DType::Float32, {40, 24}, 55, true), data(DType::Float32, {24, 256}, 56)).add(b);
  });
}

// conv2d + bias (+ residual), relu: output planes, computed transposed (wide images: whole rows
// of a channel adjacent) or not (narrow ones: runs down the positions of each channel).
TEST(CpuBackend, ConvEpilogueBiasOverPlanes) {
  for (int64_t width : {20, 6})
    for (int64_t pad : {0, 1})
      for (Round r : {Round::NearestEven, Round::Up}) {
        const std::string tag = "on 7x" + std::to_string(width) + " pad " + std::to_string(pad) + " " +
                                std::string(round_name(r));
        check_epilogue("conv2d 4->12 3x3 + bias, relu " + tag, true, [&] {
          Tensor x = data(DType::Float32, {2, 4, 7, width}, 30 + width, true);
          Tensor w = data(DType::Float32, {12, 4, 3, 3}, 31), b = data(DType::Float32, {12}, 32, true);
          RoundingScope scope(r);
          return x.conv2d(w, b, 1, {1}, {1}, {pad}).relu();
        });
        check_epilogue("conv2d 4->12 3x3 + bias + residual, relu " + tag, true, [&] {
          Tensor x = data(DType::Float32, {2, 4, 7, width}, 40 + width);
          Tensor w = data(DType::Float32, {12, 4, 3, 3}, 41), b = data(DType::Float32, {12}, 42, true);
          const int64_t o = pad ? 0 : 2;
          Tensor res = data(DType::Float32, {2, 12, 7 - o, width - o}, 43, true);
          RoundingScope scope(r);
          return x.conv2d(w, b, 1, {1}, {1}, {pad}).add(res).relu();
        });
      }
}

// A ResNet's last block into its global average pool: the bias + residual + ReLU read only by a
// REDUCE ADD is the conv's epilogue (and the sum folds its buffer), not fused into the sum;
// a linear layer's biased ReLU summed over its rows likewise; a small one not. Wide and narrow images, two
// rounding modes, specials; bits against the reference on every target and thread count.
TEST(CpuBackend, EpilogueBeforeASum) {
  for (int64_t width : {20, 6})
    for (Round r : {Round::NearestEven, Round::Down}) {
      const std::string tag = "on 20x" + std::to_string(width) + " " + std::string(round_name(r));
      check_epilogue("mean(relu(conv2d + bias + residual)) " + tag, true, [&] {
        Tensor x = data(DType::Float32, {3, 4, 20, width}, 60 + width);
        Tensor w = data(DType::Float32, {12, 4, 3, 3}, 61), b = data(DType::Float32, {12}, 62, true);
        Tensor res = data(DType::Float32, {3, 12, 20, width}, 63, true);
        RoundingScope scope(r);
        return x.conv2d(w, b, 1, {1}, {1}, {1}).add(res).relu().mean(Axis({2, 3}));
      });
    }
  check_epilogue("sum(relu(x @ w + b)) over rows", true, [&] {
    return relu_where(mm(data(DType::Float32, {100, 60}, 64), data(DType::Float32, {60, 64}, 65)).add(data(DType::Float32, {64}, 66, true)))
        .sum(Axis({0}));
  });
  // Small (under the matmul kernel's 4096 products): left fused into the sum.
  check_epilogue("sum(relu(x @ w + b)) over rows, small", false, [&] {
    return relu_where(mm(data(DType::Float32, {20, 10}, 67), data(DType::Float32, {10, 16}, 68)).add(data(DType::Float32, {16}, 69, true)))
        .sum(Axis({0}));
  });
}

// What blocks the epilogue: the product read by something else as well (a second kernel, or a
// tensor the caller keeps, as a gradient would), or a consumer that changes the dtype. The
// results are still the reference's.
TEST(CpuBackend, MatmulEpilogueOnlyWhenNothingElseReadsTheProduct) {
  auto x = [] { return data(DType::Float32, {50, 60}, 50, true); };
  auto y = [] { return data(DType::Float32, {60, 40}, 51); };
  auto b = [] { return data(DType::Float32, {40}, 52, true); };
  check_epilogue("product read twice", false, [&] {
    Tensor h = mm(x(), y());
    return relu_where(h.add(b())).cat({h.exp2()});
  });
  std::vector<Tensor> kept;
  check_epilogue("product kept by the caller", false, [&] {
    kept.push_back(mm(x(), y()));
    return relu_where(kept.back().add(b()));
  });
  check_epilogue("comparison (bool result)", false, [&] { return prim::cmplt(mm(x(), y()), b().reshape({1, 40}).expand({50, 40})); });
  // The bias and relu of a kept sum still fuse into the product (h is the materialized node).
  check_epilogue("biased sum read twice", true, [&] {
    Tensor h = mm(x(), y()).add(b());
    return relu_where(h).cat({h});
  });
}

// One kernel where there were two: the matmul and its bias + relu, counted by GlobalCounters.
TEST(CpuBackend, MatmulEpilogueIsOneKernel) {
  BackendSettings keep;
  set_backend(Backend::Cpu);
  Tensor x = data(DType::Float32, {64, 128}, 60), w = data(DType::Float32, {128, 96}, 61);
  Tensor b = data(DType::Float32, {96}, 62);
  x.realize();
  w.realize();
  b.realize();
  auto kernels = [](const std::function<Tensor()>& f) {
    reset_counters();
    f().realize();
    return counters().kernel_count;
  };
  const int64_t before = cpu::matmul_epilogue_runs();
  const int64_t fused = kernels([&] { return relu_where(mm(x, w).add(b)); });
  EXPECT_EQ(cpu::matmul_epilogue_runs(), before + 1);
  EXPECT_EQ(fused, 1);
  // A residual add (read twice by the ReLU after it, so materialized on its own before) and
  // the ReLU: still one kernel with the matmul.
  Tensor res = data(DType::Float32, {64, 96}, 63);
  res.realize();
  EXPECT_EQ(kernels([&] { return relu_where(mm(x, w).add(b).add(res)); }), 1);
  EXPECT_EQ(cpu::matmul_epilogue_runs(), before + 2);
  // The same product read twice: the matmul and the chain are two kernels (cat is a third).
  const int64_t apart = kernels([&] {
    Tensor h = mm(x, w);
    return relu_where(h.add(b)).cat({h});
  });
  EXPECT_GE(apart, 2);
  EXPECT_EQ(cpu::matmul_epilogue_runs(), before + 2);
}


// ReLU's gradient compares ReLU's output, not its input (src/core/gradient.cpp,
// where_condition): a conv + bias + ReLU that the forward pass realized (as batchnorm's running
// statistics realize beautiful_mnist's) is not computed again for the backward pass. The
// gradients equal the reference's and the epilogue runs once per backend run, the forward's
// (twice if the backward computed conv + bias again).
TEST(CpuBackend, ReluGradientDoesNotComputeTheConvAgain) {
  for (DType d : {DType::Float32, DType::Float64}) {
    const std::string what = "conv2d + bias, relu realized, then its gradients " + std::string(dtype_name(d));
    const int64_t before = cpu::matmul_epilogue_runs();
    const int runs = g_runs;
    check(what, [&] {
      Tensor x = data(d, {2, 4, 7, 9}, 70, true), w = data(d, {6, 4, 3, 3}, 71);
      Tensor b = data(d, {6}, 72, true);
      Tensor y = x.conv2d(w, b).relu();
      y.realize();
      (y * data(d, y.shape(), 73, true)).sum().backward();
      return x.grad()->flatten().cat({w.grad()->flatten(), b.grad()->flatten()});
    });
    EXPECT_EQ(cpu::matmul_epilogue_runs() - before, g_runs - runs)
        << what << ": one epilogue per run (the forward's) expected; more means the backward computed conv + bias again";
  }
}

// The rewrite against the gradient's definition: where(k < x, x, z) passes g where k < x and
// +0 elsewhere, for x with NaN, infinities, signed zeros and subnormals. It reads the output
// only where k and z are one constant (k < z false); where(0 < x, x, 0.5) must keep comparing
// x (its output 0.5 is above 0 where x is not).
TEST(CpuBackend, ReluGradientBitsAreTheDefinition) {
  for (DType d : {DType::Float32, DType::Float64})
    for (double k : {0.0, 1.0})
      for (double z : {0.0, 1.0, 0.5, -0.0}) {
        const std::string what = std::string(dtype_name(d)) + " where(" + std::to_string(k) + " < x, x, " +
                                 std::to_string(z) + ")";
        Tensor x = data(d, {300}, 80, true), g = data(d, {300}, 81);  // g: no NaN (g * 1 is g)
        const std::vector<uint64_t> xb = x.bits(), gb = g.bits();
        Tensor kk = Tensor::full({}, k, d);
        std::vector<uint64_t> want(xb.size());
        const std::vector<uint64_t> lt = prim::cmplt(kk, x).bits();  // k < x, as the op defines it
        for (size_t i = 0; i < want.size(); ++i) want[i] = lt[i] ? gb[i] : 0;
        BackendSettings keep;
        for (Backend be : {Backend::Ref, Backend::Cpu}) {
          set_backend(be);
          Tensor xi = tensor_of_bits(xb, {300}, d);
          Tensor y = prim::where(prim::cmplt(Tensor::full({}, k, d), xi), xi, Tensor::full({}, z, d));
          y.realize();
          (y * tensor_of_bits(gb, {300}, d)).sum().backward();
          EXPECT_EQ(xi.grad()->bits(), want) << what << (be == Backend::Ref ? " (reference)" : " (cpu)");
        }
      }
}

}  // namespace
}  // namespace maroon::test
