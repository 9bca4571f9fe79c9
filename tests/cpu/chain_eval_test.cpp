// Chains of float ops evaluated with the running value in registers (cpu/fastops.h: ChainStep,
// Program::segments): bits against the reference executor on every SIMD target and 1, 2 and 3
// threads (harness.h), each case checked to have run a chain. Operands hold random bits (NaN
// payloads, infinities, signed zeros, subnormals), tiles end mid-vector, leaves are read in
// place, broadcast, staged through views and from other kernels' values.
#include <gtest/gtest.h>

#include "harness.h"
#include "cpu/kernel.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

constexpr DType kChainDtypes[] = {DType::Float32, DType::Float64};

// The segment kernels this file tests run where a program is not an accumulator program
// (acc_eval_test.cpp): these cases turn those off to reach them.
struct NoAccPrograms {
  NoAccPrograms() { cpu::set_acc_programs(false); }
  ~NoAccPrograms() { cpu::set_acc_programs(true); }
};

void check_chain(const std::string& what, const std::function<Tensor()>& build) {
  NoAccPrograms off;
  check_path(what, build, [] { return cpu::chain_runs(); }, "run a chain");
}

// Shapes: one element, a partial vector, tiles with a partial last one, many tiles.
const Shape kChainShapes[] = {{1}, {7, 13}, {3, 300}, {3, 24001}};

TEST(CpuChainEval, AdamUpdateShape) {
  int cases = 0;
  for (DType d : kChainDtypes)
    for (const Shape& s : kChainShapes) {
      ++cases;
      check_chain("adam update " + std::string(dtype_name(d)) + " " + shape_str(s), [&] {
        Tensor t = random_bits_tensor(s, d, 1), m = random_bits_tensor(s, d, 2), v = random_bits_tensor(s, d, 3);
        Tensor r1 = random_bits_tensor({1}, d, 4).reshape(Shape(s.size(), 1)).expand(s);
        Tensor r2 = random_bits_tensor({1}, d, 5).reshape(Shape(s.size(), 1)).expand(s);
        // t - lr * (m * r1 / (sqrt(v * r2) + eps) + 0 * t): optim.cpp's Adam parameter update.
        Tensor up = prim::mul(prim::mul(m, r1), prim::reciprocal(prim::add(prim::sqrt(prim::mul(v, r2)), 1e-8)));
        up = prim::add(up, prim::mul(0.0, t));
        return prim::add(t, prim::mul(prim::mul(up, 1e-3), -1.0));
      });
    }
  EXPECT_EQ(cases, 8);
}

TEST(CpuChainEval, EveryStepAndOperandOrder) {
  for (DType d : kChainDtypes)
    for (const Shape& s : kChainShapes) {
      const std::string name = std::string(dtype_name(d)) + " " + shape_str(s);
      // The running value as first and as second operand, squared, and every op.
      check_chain("steps " + name, [&] {
        Tensor a = random_bits_tensor(s, d, 11), b = random_bits_tensor(s, d, 12), c = random_bits_tensor(s, d, 13);
        Tensor h = prim::add(a, b);
        h = prim::mul(c, h);
        h = prim::mul(h, h);
        h = prim::maximum(a, h);
        h = prim::maximum(h, b);
        h = prim::sqrt(h);
        h = prim::reciprocal(h);
        return prim::add(c, h);
      });
      // A leaf squared as the first step, a chain starting with a unary op, a chain whose
      // intermediate another op reads as well (the chain ends there).
      check_chain("square first " + name, [&] {
        Tensor a = random_bits_tensor(s, d, 21), b = random_bits_tensor(s, d, 22);
        Tensor sq = prim::add(prim::mul(a, a), b);
        Tensor r = prim::reciprocal(prim::sqrt(b));
        return prim::mul(prim::add(sq, r), sq);
      });
      // The running value as both operands of ADD and MAX (x + x, max(x, x)): only MUL has a
      // step for that (Square); the others must end the chain, the value being in no tile.
      check_chain("self operand " + name, [&] {
        Tensor a = random_bits_tensor(s, d, 23), b = random_bits_tensor(s, d, 24);
        Tensor h = prim::mul(prim::add(a, b), b);
        h = prim::add(h, h);
        h = prim::mul(prim::maximum(h, h), a);
        return prim::sqrt(h);
      });
      // Longer than kMaxChain: split into chains, each the next one's first operand.
      check_chain("long " + name, [&] {
        Tensor a = near_one_tensor(d, s, 25), b = near_one_tensor(d, s, 26, true);
        Tensor h = prim::add(a, b);
        for (int i = 0; i < 2 * cpu::kMaxChain + 5; ++i) h = i % 2 ? prim::add(h, a) : prim::mul(b, h);
        return h;
      });
      // Values near one: the steps' results are mostly finite and rounded, not NaN.
      check_chain("near one " + name, [&] {
        Tensor a = near_one_tensor(d, s, 31), b = near_one_tensor(d, s, 32, true);
        return prim::add(prim::mul(prim::sqrt(prim::maximum(a, b)), 0.1), prim::mul(b, 0.9));
      });
    }
}

TEST(CpuChainEval, LeavesThroughViews) {
  for (DType d : kChainDtypes) {
    const std::string name(dtype_name(d));
    // Permuted, padded and broadcast leaves are staged into tiles before the chain reads them.
    check_chain("permuted and padded " + name, [&] {
      Tensor a = random_bits_tensor({300, 7}, d, 41).permute({1, 0});
      Tensor b = random_bits_tensor({5, 298}, d, 42).pad({{1, 1}, {2, 0}});
      Tensor c = random_bits_tensor({7, 1}, d, 43).expand({7, 300});
      return prim::mul(prim::add(prim::mul(a, b), c), prim::sqrt(c));
    });
    // A chain over a reduction's result read through a broadcast (a mean subtracted).
    check_chain("after a reduction " + name, [&] {
      Tensor a = random_bits_tensor({9, 260}, d, 51);
      Tensor m = a.reduce(ReduceOp::ADD, {1}).expand({9, 260});
      return prim::mul(prim::add(a, prim::mul(m, -1.0)), prim::add(a, prim::mul(m, -1.0)));
    });
  }
}

// EXP2 as a chain step (float32, rounded to nearest): softmax's exp of a shifted, scaled row and
// GELU's erf, whose EXP2 sits between MUL steps. The arguments cover the SIMD exp2's fallbacks:
// integers, tiny |x|, subnormal and underflowing results, overflow, NaN payloads, infinities.
void check_exp2_chain(const std::string& what, const std::function<Tensor()>& build) {
  NoAccPrograms off;
  check_path(what, build, [] { return cpu::chain_exp2_runs(); }, "run a chain with an EXP2 step");
}

TEST(CpuChainEval, Exp2Steps) {
  for (const Shape& s : kChainShapes) {
    const std::string name = shape_str(s);
    check_exp2_chain("exp2 in the middle " + name, [&] {
      Tensor a = near_one_tensor(DType::Float32, s, 71, true), b = near_one_tensor(DType::Float32, s, 72);
      return prim::mul(prim::add(prim::exp2(prim::mul(a, 160.0)), b), b);
    });
    check_exp2_chain("exp2 first and twice " + name, [&] {
      Tensor a = random_bits_tensor(s, DType::Float32, 73), b = near_one_tensor(DType::Float32, s, 74, true);
      return prim::exp2(prim::mul(prim::exp2(a), b));
    });
    check_exp2_chain("softmax " + name, [&] {
      Tensor a = prim::mul(near_one_tensor(DType::Float32, s, 75, true), 40.0);
      return a.softmax(-1);
    });
    check_exp2_chain("gelu " + name, [&] {
      Tensor x = prim::mul(near_one_tensor(DType::Float32, s, 76, true), 14.0);
      return x.mul(0.5).mul(x.mul(0.7071067811865476).erf().add(1.0));
    });
  }
  // float64 has no SIMD exp2: its EXP2 ends a chain and runs on its own.
  check("exp2 float64", [&] {
    Tensor a = near_one_tensor(DType::Float64, {3, 300}, 77, true);
    return prim::mul(prim::exp2(prim::mul(a, 160.0)), a);
  });
}

// Rounding ops outside round-to-nearest are not chained (the kernels run in the library's
// round-to-nearest state): the same bits by the one-op path, in every mode.
TEST(CpuChainEval, RoundingModes) {
  for (DType d : kChainDtypes)
    for (Round r : {Round::NearestEven, Round::TowardZero, Round::Up, Round::Down})
      check(std::string("modes ") + std::string(dtype_name(d)) + " " + std::string(round_name(r)), [&] {
        Tensor a = random_bits_tensor({3, 700}, d, 61), b = near_one_tensor(d, {3, 700}, 62, true);
        RoundingScope scope(r);
        return prim::add(prim::reciprocal(prim::sqrt(prim::mul(a, b))), prim::exp2(prim::mul(b, 100.0)));
      });
}

}  // namespace
}  // namespace maroon::test
