// Row epilogues (src/cpu/epilogue_rows.cpp): a matmul's bias, residual and ReLU run a row at a
// time in registers. Against the reference executor, bit for bit, on every SIMD target and 1-3
// threads, each CPU run checked to have taken the path: conv2d + bias (+ residual), ReLU, on
// images whose rows are not whole vectors, computed transposed (wide images) and not (narrow
// ones); a bias alone (NaN sums made canonical, bias NaNs with payloads); a product with a bias
// per row; float32 and float64 with NaN, infinities, signed zeros (sums of +-0 that ReLU maps to
// +0) and subnormals; an operand that is itself a sum of two leaves; a bias along the rows; Clip
// and other MAX or MUL steps with a scalar. Programs it must leave to the tile interpreter: an add
// or a scale rounded upward, a MAX with a tensor, more than four steps.
#include <gtest/gtest.h>

#include "cpu/epilogue.h"
#include "cpu/epilogue_rows.h"
#include "harness.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

// A bias of n values near 1 whose first ones are NaNs with payloads (quiet and signaling, either
// sign), +-0, +-inf and subnormals.
Tensor special_bias(DType d, int64_t n, uint64_t seed) {
  const bool f32 = d == DType::Float32;
  Gen g(seed);
  std::vector<uint64_t> v = near_one(g, static_cast<size_t>(n), f32 ? sf::kF32 : sf::kF64);
  const std::vector<uint64_t> sp =
      f32 ? std::vector<uint64_t>{0x7FA00001u, 0xFFC12345u, 0x7FC00000u, 0x80000000u, 0u, 0x7F800000u, 0xFF800000u, 0x80000003u}
          : std::vector<uint64_t>{0x7FF4000000000001ull, 0xFFF8000000012345ull, 0x7FF8000000000000ull, 0x8000000000000000ull,
                                  0ull, 0x7FF0000000000000ull, 0xFFF0000000000000ull, 0x8000000000000003ull};
  for (size_t i = 0; i < sp.size() && i < v.size(); ++i) v[i] = sp[i];
  return tensor_of_bits(v, {n}, d);
}

void check_rows(const std::string& what, const std::function<Tensor()>& build) {
  check_path(what, build, [] { return cpu::row_epilogue_tasks(); }, "run the row epilogue");
}

void check_not_rows(const std::string& what, const std::function<Tensor()>& build) {
  check_epilogue_without(what, build, [] { return cpu::matmul_epilogue_runs(); }, [] { return cpu::row_epilogue_tasks(); },
                         "took the row epilogue");
}

TEST(CpuEpilogueRows, ConvBiasResidualReluBitExact) {
  for (DType d : {DType::Float32, DType::Float64}) {
    const std::string dn(dtype_name(d));
    for (int64_t width : {21, 6}) {  // transposed (rows of 21 positions) and not (runs of 6 channels' positions)
      const std::string tag = dn + " on 5x" + std::to_string(width);
      // Operands without specials (a NaN or infinity among a conv's 27 terms would make most sums
      // NaN, hiding the bias's); one case with them.
      auto x = [=](uint64_t seed) { return near_one_tensor(d, {2, 3, 5, width}, seed); };
      auto w = [=](uint64_t seed) { return near_one_tensor(d, {16, 3, 3, 3}, seed); };
      check_rows("conv2d of specials + bias, relu " + tag, [=] {
        return near_one_tensor(d, {2, 3, 5, width}, 15, true)
            .conv2d(near_one_tensor(d, {16, 3, 3, 3}, 16, true), special_bias(d, 16, 17), 1, {1}, {1}, {1})
            .relu();
      });
      check_rows("conv2d + bias, relu " + tag, [=] {
        return x(1).conv2d(w(2), special_bias(d, 16, 3), 1, {1}, {1}, {1}).relu();
      });
      check_rows("conv2d + bias + residual, relu " + tag, [=] {
        Tensor res = near_one_tensor(d, {2, 16, 5, width}, 6, true);
        return x(4).conv2d(w(5), near_one_tensor(d, {16}, 7, true), 1, {1}, {1}, {1}).add(res).relu();
      });
      check_rows("conv2d + bias with NaN payloads " + tag, [=] {  // the sum's NaN made canonical
        return x(8).conv2d(w(9), special_bias(d, 16, 10), 1, {1}, {1}, {1});
      });
      check_rows("conv2d + bias with NaN payloads, relu " + tag, [=] {
        return x(8).conv2d(w(9), special_bias(d, 16, 14), 1, {1}, {1}, {1}).relu();
      });
      check_rows("conv2d + residual, relu, no bias " + tag, [=] {
        Tensor res = random_bits_tensor({2, 16, 3, width - 2}, d, 13);
        return x(11).conv2d(w(12)).add(res).relu();
      });
    }
    check_rows(dn + " matmul + bias per row, relu", [=] {
      Tensor b = near_one_tensor(d, {40, 1}, 22, true);
      return prim::add(near_one_tensor(d, {40, 50}, 20).matmul(near_one_tensor(d, {50, 70}, 21)),
                       b.expand({40, 70}))
          .relu();
    });
  }
}

// conv2d's bias and ReLU alone (one add of one element along a run, then ReLU) have their own
// loop (BiasReluRun): each CPU run must take it, bits as the reference's (bias NaNs with
// payloads, +-0, +-inf, subnormals; operands with specials); a bias without the ReLU, a residual
// added too, or a per-position bias must not.
TEST(CpuEpilogueRows, BiasReluTakesItsOwnLoop) {
  auto bias_relu = [](const std::string& what, const std::function<Tensor()>& build) {
    check_path(what, build, [] { return cpu::bias_relu_row_tasks(); }, "run the bias + ReLU loop");
  };
  auto not_bias_relu = [](const std::string& what, const std::function<Tensor()>& build) {
    const int64_t rows = cpu::row_epilogue_tasks(), before = cpu::bias_relu_row_tasks();
    check(what, build);
    EXPECT_GT(cpu::row_epilogue_tasks(), rows) << what << ": did not run the row epilogue";
    EXPECT_EQ(cpu::bias_relu_row_tasks(), before) << what << ": took the bias + ReLU loop";
  };
  for (DType d : {DType::Float32, DType::Float64}) {
    const std::string dn(dtype_name(d));
    for (int64_t width : {21, 6, 32}) {
      const std::string tag = dn + " on 5x" + std::to_string(width);
      bias_relu("conv2d of specials + bias, relu " + tag, [=] {
        return near_one_tensor(d, {2, 3, 5, width}, 40, true)
            .conv2d(near_one_tensor(d, {16, 3, 3, 3}, 41, true), special_bias(d, 16, 42), 1, {1}, {1}, {1})
            .relu();
      });
      bias_relu("conv2d + bias with NaN payloads, relu " + tag, [=] {
        return near_one_tensor(d, {2, 3, 5, width}, 43)
            .conv2d(near_one_tensor(d, {16, 3, 3, 3}, 44), special_bias(d, 16, 45), 1, {1}, {1}, {1})
            .relu();
      });
      bias_relu("conv2d of -0 + bias, relu (sums of signed zeros) " + tag, [=] {
        const sf::Format f = d == DType::Float32 ? sf::kF32 : sf::kF64;
        Tensor x = tensor_of_bits(std::vector<uint64_t>(static_cast<size_t>(2 * 3 * 5 * width), f.sign_bit()), {2, 3, 5, width}, d);
        return x.conv2d(near_one_tensor(d, {16, 3, 3, 3}, 56), special_bias(d, 16, 57), 1, {1}, {1}, {1}).relu();
      });
      not_bias_relu("conv2d + bias, no relu " + tag, [=] {
        return near_one_tensor(d, {2, 3, 5, width}, 46)
            .conv2d(near_one_tensor(d, {16, 3, 3, 3}, 47), special_bias(d, 16, 48), 1, {1}, {1}, {1});
      });
      not_bias_relu("conv2d + bias + residual, relu " + tag, [=] {
        Tensor res = near_one_tensor(d, {2, 16, 5, width}, 49, true);
        return near_one_tensor(d, {2, 3, 5, width}, 50)
            .conv2d(near_one_tensor(d, {16, 3, 3, 3}, 51), near_one_tensor(d, {16}, 52, true), 1, {1}, {1}, {1})
            .add(res)
            .relu();
      });
    }
    bias_relu(dn + " matmul + bias per row, relu", [=] {
      Tensor b = near_one_tensor(d, {40, 1}, 53, true);
      return prim::add(near_one_tensor(d, {40, 50}, 54).matmul(near_one_tensor(d, {50, 70}, 55)), b.expand({40, 70}))
          .relu();
    });
  }
}

// A residual branch's own bias left to this epilogue: relu((conv + b) + (y + b1)), as the ONNX
// ResNet's downsampling blocks are (y another conv's output): the sum y + b1 is computed in the
// row, then added. y and b1 either way round, with and without ReLU, both with NaN, infinities,
// signed zeros and subnormals; float32 and float64, images computed transposed and not. Each CPU run must take the
// pair path; a sum used twice must keep the tile interpreter (computed once there).
TEST(CpuEpilogueRows, ResidualBranchSumAddedInTheRow) {
  auto pair_rows = [](const std::string& what, const std::function<Tensor()>& build) {
    check_path(what, build, [] { return cpu::pair_row_tasks(); }, "add a sum of two leaves in the row");
  };
  for (DType d : {DType::Float32, DType::Float64})
    for (int64_t width : {21, 6, 40}) {
      const std::string tag = std::string(dtype_name(d)) + " on 5x" + std::to_string(width);
      auto conv = [=](uint64_t seed) {
        return near_one_tensor(d, {2, 3, 5, width}, seed)
            .conv2d(near_one_tensor(d, {16, 3, 3, 3}, seed + 1), near_one_tensor(d, {16}, seed + 2, true), 1, {1}, {1}, {1});
      };
      // Thirds: full mantissas, so that the order of the three adds shows (near_one's sums are
      // exact, and the same in any order).
      auto branch = [=](uint64_t seed) { return prim::mul(near_one_tensor(d, {2, 16, 5, width}, seed, true), 1.0 / 3).realize(); };
      auto bias1 = [=](uint64_t seed) {
        return prim::mul(special_bias(d, 16, seed), 1.0 / 3).realize().reshape({1, 16, 1, 1});
      };
      pair_rows("relu((conv + b) + (y + b1)) " + tag, [=] { return conv(60).add(branch(63).add(bias1(64))).relu(); });
      pair_rows("relu((conv + b) + (b1 + y)) " + tag, [=] { return conv(65).add(bias1(68).add(branch(69))).relu(); });
      pair_rows("(conv + b) + (y + b1), no relu " + tag, [=] { return conv(70).add(branch(73).add(bias1(74))); });
      check_not_rows("(conv + (y + b1)) + (y + b1) " + tag, [=] {
        const Tensor s = branch(75).add(bias1(76));
        return conv(77).add(s).add(s);
      });
    }
}

// A linear layer's bias (one element per output column, the same for every row) read as a
// stream from the run's column: x @ w + b, with a ReLU, with a residual added too, and a bias
// with specials added to a sum of two leaves; rows of 256, 300 and 70 columns (tasks split the
// columns, so runs start mid-row), float32 and float64, two rounding modes for the plain case.
// Each CPU run must take the row epilogue.
TEST(CpuEpilogueRows, LinearBiasAlongTheRows) {
  for (DType d : {DType::Float32, DType::Float64})
    for (int64_t n : {256, 300, 70}) {
      const std::string tag = std::string(dtype_name(d)) + " 40x24 @ 24x" + std::to_string(n);
      auto x = [=](uint64_t seed) { return near_one_tensor(d, {40, 24}, seed); };
      auto w = [=](uint64_t seed) { return near_one_tensor(d, {24, n}, seed); };
      check_rows("x @ w + b, relu " + tag, [=] { return x(80).matmul(w(81)).add(special_bias(d, n, 82)).relu(); });
      check_rows("x @ w + b + residual " + tag, [=] {
        return x(83).matmul(w(84)).add(near_one_tensor(d, {n}, 85, true)).add(near_one_tensor(d, {40, n}, 86, true));
      });
      check_rows("x @ w + b, no relu (NaN sums canonical) " + tag, [=] {
        return x(87).matmul(w(88)).add(special_bias(d, n, 89));
      });
    }
}

// ONNX's Clip (src/onnx/ops_elementwise.cpp: maximum, then minimum as -max(-t, -hi), a MUL by -1
// each way) after a conv's bias: MobileNet's ReLU6 by ClipRun's loop, other bounds by the row
// epilogue's steps (lo or hi a zero of the wrong sign, a NaN bound, one bound only, a max alone,
// a scale), against the reference with NaN payloads, infinities, signed zeros and subnormals in
// the bias and the operands, float32 and float64, transposed and not.
TEST(CpuEpilogueRows, ClipAndScalarStepsBitExact) {
  auto clip_runs = [] { return cpu::clip_row_tasks(); };
  auto step_runs = [] { return cpu::step_row_tasks(); };
  for (DType d : {DType::Float32, DType::Float64}) {
    const std::string dn(dtype_name(d));
    auto k = [d](double v) { return Tensor::full({}, v, d); };
    for (int64_t width : {21, 6}) {
      const std::string tag = " " + dn + " on 5x" + std::to_string(width);
      auto conv = [=](uint64_t seed, bool specials) {
        return near_one_tensor(d, {2, 3, 5, width}, seed, specials)
            .conv2d(near_one_tensor(d, {16, 3, 3, 3}, seed + 1, specials), special_bias(d, 16, seed + 2), 1, {1}, {1},
                    {1});
      };
      auto clip = [=](uint64_t seed, bool specials, double lo, double hi) {
        return conv(seed, specials).maximum(k(lo)).minimum(k(hi));
      };
      check_path("relu6" + tag, [=] { return clip(40, false, 0.0, 6.0); }, clip_runs, "run ClipRun");
      check_path("clip -0.5..0.75" + tag, [=] { return clip(43, false, -0.5, 0.75); }, clip_runs, "run ClipRun");
      check_path("clip of specials" + tag, [=] { return clip(46, true, -0.25, 0.5); }, clip_runs, "run ClipRun");
      check_path("clip, no bias" + tag, [=] {
        return near_one_tensor(d, {2, 3, 5, width}, 49, true)
            .conv2d(near_one_tensor(d, {16, 3, 3, 3}, 50, true), std::nullopt, 1, {1}, {1}, {1})
            .maximum(k(-0.5))
            .minimum(k(0.5));
      }, clip_runs, "run ClipRun");
      check_path("clip from -0" + tag, [=] { return clip(52, true, -0.0, 0.5); }, step_runs, "run the steps");
      check_path("clip to +0" + tag, [=] { return clip(55, true, -0.5, 0.0); }, step_runs, "run the steps");
      // Zeros: every sum +0, so a MAX meets a zero of the other sign (-(+0) against +0, and with
      // lo = -0, +0 against -0).
      auto zeros = [=](double lo, double hi) {
        return Tensor::zeros({2, 3, 5, width}, d).realized_leaf()
            .conv2d(near_one_tensor(d, {16, 3, 3, 3}, 70), Tensor::zeros({16}, d).realized_leaf(), 1, {1}, {1}, {1})
            .maximum(k(lo))
            .minimum(k(hi));
      };
      check_path("zeros clipped to -0" + tag, [=] { return zeros(-0.5, -0.0); }, clip_runs, "run ClipRun");
      check_path("zeros clipped from -0 to -0" + tag, [=] { return zeros(-0.0, -0.0); }, step_runs, "run the steps");
      check_path("clip to NaN" + tag, [=] { return clip(58, true, -0.5, std::nan("")); }, step_runs, "run the steps");
      check_path("relu as maximum" + tag, [=] { return conv(61, true).maximum(k(0.0)); }, step_runs, "run the steps");
      check_path("minimum only" + tag, [=] { return conv(64, true).minimum(k(0.25)); }, step_runs, "run the steps");
      check_path("a scale" + tag, [=] { return prim::mul(conv(67, true), 0.5); }, step_runs, "run the steps");
    }
  }
}

TEST(CpuEpilogueRows, OtherChainsKeepTheTileInterpreter) {
  const DType d = DType::Float32;
  auto conv = [=] {
    return near_one_tensor(d, {2, 3, 5, 21}, 30, true).conv2d(near_one_tensor(d, {16, 3, 3, 3}, 31, true));
  };
  auto bias = [=] { return near_one_tensor(d, {16}, 32, true).reshape({1, 16, 1, 1}); };
  check_not_rows("bias rounded upward", [=] {
    Tensor c = conv(), b = bias();
    RoundingScope up(Round::Up);
    return c.add(b);
  });
  check_not_rows("a scale rounded upward", [=] {
    Tensor c = conv();
    RoundingScope up(Round::Up);
    return prim::mul(c, 0.5);
  });
  check_not_rows("maximum with a tensor", [=] { return prim::maximum(conv(), near_one_tensor(d, {2, 16, 3, 19}, 33)); });
  check_not_rows("more than four steps", [=] { return prim::mul(prim::mul(prim::mul(prim::mul(prim::mul(conv(), 0.5), 0.5), 0.5), 0.5), 0.5); });
}

}  // namespace
}  // namespace maroon::test
