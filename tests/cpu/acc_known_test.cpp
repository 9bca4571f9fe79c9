// Known accumulator programs (src/cpu/acc_known.h): the ONNX transformer's bias + GELU epilogue
// run as straight-line code, against the reference executor bit for bit on every SIMD target and
// 1, 2 and 3 threads (harness.h), each run checked to have taken the known path; its leaves as
// tiles (a matmul's epilogue, the elementwise kernel's staged tiles) and in place with the
// constants broadcast (S steps); the arguments at GELU's edges (signed zeros, infinities, NaN
// payloads, subnormals, huge values, erf's EXP2 underflowing to subnormals and zero). Programs
// that differ in one step run through the interpreter, and the directed rounding modes build
// no accumulator program at all.
#include <gtest/gtest.h>

#include <cmath>

#include "harness.h"
#include "cpu/acc_known.h"
#include "cpu/epilogue.h"
#include "cpu/kernel.h"
#include "maroon/primitives.h"
#include "maroon/round.h"

namespace maroon::test {
namespace {

// Arguments over GELU's whole range: a third from random bits (Gen: specials, subnormals, huge
// values), the rest in [-14, 14] on a fine grid (exp2(-u^2 log2 e) reaches binary32's subnormals
// at |x| ~ 13 and 0 past ~14.6), with exact zeros of both signs among them.
Tensor gelu_args(const Shape& s, uint64_t seed) {
  Gen g(seed);
  std::vector<uint64_t> v(static_cast<size_t>(numel(s)));
  for (auto& x : v) {
    const uint64_t r = g.next() % 12;
    if (r < 4) {
      x = g.bits(DType::Float32);
    } else if (r == 4) {
      x = g.next() & 1 ? 0x80000000u : 0u;
    } else {
      const double u = static_cast<double>(g.next() % (28 * 4096 + 1)) / 4096.0 - 14.0;
      x = encode(sf::kF32, static_cast<double>(static_cast<float>(u)));
    }
  }
  return tensor_of_bits(v, s, DType::Float32);
}

// PyTorch 1.13's exported GELU as src/onnx builds it (Div -> Erf -> Add -> Mul -> Mul), after a
// bias add: the transformer's program.
Tensor bias_gelu(const Tensor& h, const Tensor& b) {
  Tensor x = h + b;
  return x.div(Tensor::full({}, std::sqrt(2.0), DType::Float32)).erf().add(1.0).mul(x).mul(0.5);
}

// The targets that run known programs: all but the sizeless-vector ones (SVE, RVV: a mask
// cannot be an array element there, so the kernel interprets; acc_kernel.cpp). Every run on the
// others must take the path; the bits are compared on all.
void check_known(const std::string& what, const std::function<Tensor()>& build) {
  std::vector<std::string> fixed;
  for (const std::string& t : targets_to_test())
    if (t != "sve" && t != "sve2" && t != "rvv") fixed.push_back(t);
  const int checked = check_path_on(what, build, [] { return cpu::acc_known_runs(); }, "run the known program", fixed);
  EXPECT_GT(checked, 0) << what << ": no run on a target with known programs";
}

// The product (fused, as the transformer's, and as rounded products) with the bias along its rows,
// then GELU: the matmul's epilogue, its leaves as tiles (V steps).
TEST(CpuAccKnown, BiasGeluEpilogue) {
  for (bool fused : {true, false}) {
    for (int64_t rows : {int64_t{5}, int64_t{64}}) {
      const std::string name = std::string(fused ? "fused" : "unfused") + " epilogue rows " + std::to_string(rows);
      const int64_t before = cpu::matmul_epilogue_runs();
      check_known(name, [&] {
        const FusedScope scope(fused);
        Tensor a = near_one_tensor(DType::Float32, {rows, 16}, 1), w = near_one_tensor(DType::Float32, {16, 80}, 2);
        Tensor b = gelu_args({80}, 3);
        return bias_gelu(a.matmul(w), b);
      });
      EXPECT_GT(cpu::matmul_epilogue_runs(), before) << name << ": no epilogue ran";
    }
  }
}

// The elementwise kernel: tiles staged from views (a broadcast bias, a partial last vector) and,
// past a tile and its slack with every leaf contiguous, whole tiles in place with the constants
// broadcast where they lie (S steps).
TEST(CpuAccKnown, BiasGeluElementwise) {
  const Shape small[] = {{1}, {7, 13}, {3, 300}};
  for (const Shape& s : small)
    check_known("tiles " + shape_str(s), [&] {
      Shape bs(s.size(), 1);
      bs.back() = s.back();
      return bias_gelu(gelu_args(s, 11), gelu_args(bs, 12).expand(s));
    });
  for (const Shape& s : {Shape{3, 24001}, Shape{512, 100}}) {
    check_path("in place " + shape_str(s), [&] { return bias_gelu(gelu_args(s, 13), gelu_args(s, 14)); },
               [] { return cpu::acc_range_runs(); }, "run tiles in place");
    check_known("in place " + shape_str(s), [&] { return bias_gelu(gelu_args(s, 13), gelu_args(s, 14)); });
  }
}

// One step other than the known program's (the last product by 0.5 an addition, the polynomial
// one coefficient shorter): an accumulator program still, interpreted, the same bits.
TEST(CpuAccKnown, OtherProgramsInterpreted) {
  const Shape s{3, 300};
  auto almost = [&](int which) {
    Tensor x = gelu_args(s, 21) + gelu_args(s, 22);
    Tensor e = x.div(Tensor::full({}, std::sqrt(2.0), DType::Float32)).erf();
    return which == 0 ? e.add(1.0).mul(x).add(0.5) : e.add(1.0).mul(x).mul(x).mul(0.5);
  };
  for (int which = 0; which < 2; ++which) {
    const int64_t known = cpu::acc_known_runs(), acc = cpu::acc_runs();
    check("almost gelu " + std::to_string(which), [&] { return almost(which); });
    EXPECT_EQ(cpu::acc_known_runs(), known) << "a program other than the known one ran as it";
    EXPECT_GT(cpu::acc_runs(), acc) << "no accumulator program ran";
  }
}

// The directed rounding modes: the chain kernels run in round-to-nearest only, so no accumulator
// program is built and the known path never runs; the bits are still the reference's.
TEST(CpuAccKnown, DirectedRoundingModes) {
  for (Round r : {Round::TowardZero, Round::Down, Round::Up}) {
    const int64_t known = cpu::acc_known_runs();
    check("rounding " + std::to_string(static_cast<int>(r)), [&] {
      const RoundingScope scope(r);
      return bias_gelu(gelu_args({3, 300}, 31), gelu_args({300}, 32).reshape({1, 300}).expand({3, 300}));
    });
    EXPECT_EQ(cpu::acc_known_runs(), known) << "the known program ran in a directed mode";
  }
}

// Known programs off: the same programs through the interpreter, the same bits (the benchmark's
// A/B switch).
TEST(CpuAccKnown, SwitchedOffInterprets) {
  cpu::set_acc_known_programs(false);
  const int64_t known = cpu::acc_known_runs();
  check("off", [&] { return bias_gelu(gelu_args({7, 13}, 41), gelu_args({7, 13}, 42)); });
  cpu::set_acc_known_programs(true);
  EXPECT_EQ(cpu::acc_known_runs(), known) << "the known program ran while off";
}

}  // namespace
}  // namespace maroon::test
