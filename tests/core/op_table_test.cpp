// The op table's columns (maroon/ops.def) are claims about the code; these tests check each claim
// for every row, in both directions, so a row that lies or a new op that is missing a piece fails
// with the op and the column named. (DTYPES is checked by special_values_test, SIMD by
// tests/cpu/simd_table_test.cpp.)
#include <gtest/gtest.h>

#include <functional>

#include "core/alu.h"
#include "maroon/primitives.h"
#include "ref/scalar.h"
#include "util.h"

namespace maroon::test {
namespace {

constexpr int kN = 512;
constexpr Round kModes[] = {Round::NearestEven, Round::TowardZero, Round::Up, Round::Down};

std::vector<Tensor> operands(const OpInfo& info, DType d, uint64_t seed) {
  Gen g(seed);
  std::vector<Tensor> x;
  for (int k = 0; k < info.arity; ++k) {
    DType dk = (info.op == Op::WHERE && k == 0) ? DType::Bool : d;
    std::vector<uint64_t> v(kN);
    for (auto& b : v) b = g.bits(dk);
    x.push_back(tensor_of_bits(v, {kN}, dk));
  }
  return x;
}

// A narrower (or differently rounded) float format for CAST, an integer of the same width for
// BITCAST.
DType cast_target(DType d) {
  switch (d) {
    case DType::Float64: return DType::Float32;
    case DType::Float32: return DType::Float16;
    case DType::Float16: return DType::BFloat16;
    case DType::BFloat16: return DType::Float16;
    default: return DType::Float32;
  }
}

// The op applied to x, for every kind with arithmetic (nullopt for movement and sources).
std::optional<Tensor> apply(const OpInfo& info, const std::vector<Tensor>& x, DType d) {
  switch (info.kind) {
    case OpKind::Cast:
      if (info.op == Op::CAST) return x[0].cast(cast_target(d));
      return x[0].bitcast(bitwidth(d) == 16 ? DType::Int16 : bitwidth(d) == 32 ? DType::Int32 : DType::Int64);
    case OpKind::Reduce:
      // Short folds (8 elements): over all 512 a special value would decide every result.
      if (info.op == Op::REDUCE_MULACC)
        return prim::fused_reduce(x[0].reshape({kN / 8, 8}), x[1].reshape({kN / 8, 8}), {1});
      return x[0].reshape({kN / 8, 8}).reduce(ReduceOp::ADD, {1});
    case OpKind::Index: {
      // GATHER along rows of 8 by an index drawn from x[1]'s bits, -1..8 (two values outside).
      std::vector<int32_t> at;
      for (uint64_t b : x[1].bits()) at.push_back(static_cast<int32_t>(b % 10) - 1);
      return prim::gather(x[0].reshape({kN / 8, 8}), Tensor::from_vector<int32_t>(at, {kN / 8, 8}), 1);
    }
    case OpKind::Movement: case OpKind::Source: return std::nullopt;
    default: return alu(info.op, x);
  }
}

bool bitcast_ok(const OpInfo& info, DType d) { return info.op != Op::BITCAST || bitwidth(d) >= 16; }

TEST(OpTable, RoundsSaysWhetherFloatResultsDependOnTheMode) {
  int rows = 0;
  for (const OpInfo& info : all_ops()) {
    bool any_difference = false, applied = false;
    for (DType d : kConcreteDTypes) {
      if (!op_accepts(info.op, d) || !bitcast_ok(info, d)) continue;
      if (info.rounds && !is_float(d) && info.op != Op::CAST) continue;  // the claim is about floats
      std::vector<Tensor> x = operands(info, d, 1000 + static_cast<int>(info.op));
      std::vector<std::vector<uint64_t>> by_mode;
      for (Round r : kModes) {
        RoundingScope scope(r);
        std::optional<Tensor> y = apply(info, x, d);
        if (!y) break;
        by_mode.push_back(y->bits());
      }
      if (by_mode.empty()) break;
      applied = true;
      for (size_t m = 1; m < by_mode.size(); ++m) any_difference = any_difference || by_mode[m] != by_mode[0];
      if (!info.rounds) {
        EXPECT_FALSE(any_difference) << "maroon/ops.def says " << info.name << " is Exact, but its "
                                     << dtype_name(d) << " results depend on the rounding mode";
      }
    }
    if (info.rounds) {
      EXPECT_TRUE(any_difference) << "maroon/ops.def says " << info.name
                                  << " Rounds, but no result depended on the rounding mode";
    }
    rows += applied;
  }
  EXPECT_GE(rows, 26);
}

// fold(identity, x) == x: the identity a REDUCE starts from changes nothing, except what the
// spec defines: NaN comes out canonical, and +0 + -0 is +0 (REDUCE ADD of [-0] is +0).
TEST(OpTable, IdentityLeavesEveryOperandUnchanged) {
  int checked = 0;
  for (const OpInfo& info : all_ops()) {
    if (info.identity == Identity::None) continue;
    EXPECT_TRUE(info.kind == OpKind::Binary) << info.name << ": only binary ops have an identity";
    for (DType d : kConcreteDTypes) {
      if (!op_accepts(info.op, d)) continue;
      Tensor x = operands(info, d, 77)[0];
      Tensor e = tensor_of_bits({ref::identity(info.op, d)}, {1}, d).expand({kN});
      std::vector<uint64_t> xs = x.bits(), left = alu(info.op, {e, x}).bits(), right = alu(info.op, {x, e}).bits();
      for (int i = 0; i < kN; ++i) {
        uint64_t want = xs[i];
        if (is_float(d)) {
          sf::Format f = fmt(d);
          if (sf::is_nan(f, want)) want = sf::canonical_nan(f);
          if (info.op == Op::ADD && want == f.sign_bit()) want = 0;  // +0 + -0
        }
        ASSERT_EQ(left[i], want) << info.name << " " << dtype_name(d) << ": identity op " << hex(xs[i]);
        ASSERT_EQ(right[i], want) << info.name << " " << dtype_name(d) << ": " << hex(xs[i]) << " op identity";
      }
      ++checked;
    }
  }
  for (ReduceOp r : kAllReduceOps)
    EXPECT_NE(op_info(combiner(r)).identity, Identity::None) << "REDUCE " << reduce_op_name(r) << " needs an identity";
  EXPECT_GE(checked, 40);
}

TEST(OpTable, CommutesSaysWhetherSwappingTheFirstTwoOperandsChangesABit) {
  for (const OpInfo& info : all_ops()) {
    if (info.arity < 2 || info.op == Op::WHERE) {
      if (info.op != Op::WHERE) {
        EXPECT_FALSE(info.commutes) << info.name << " has one operand";
      }
      continue;
    }
    bool differs = false;
    for (DType d : kConcreteDTypes) {
      if (!op_accepts(info.op, d)) continue;
      std::vector<Tensor> x = operands(info, d, 4242), y = x;
      std::swap(y[0], y[1]);
      bool here = apply(info, x, d)->bits() != apply(info, y, d)->bits();
      if (info.commutes) {
        EXPECT_FALSE(here) << "maroon/ops.def says " << info.name << " Commutes, but not on " << dtype_name(d);
      }
      differs = differs || here;
    }
    if (!info.commutes) {
      EXPECT_TRUE(differs) << "maroon/ops.def says " << info.name << " is Ordered, but it commuted on every input";
    }
  }
}

// A tensor built from x by each op that has no elementwise builder (the probes for GRAD).
std::optional<Tensor> probe(Op op, const Tensor& x) {
  switch (op) {
    case Op::CAST: return x.cast(DType::Float64);
    case Op::BITCAST: return x.bitcast(DType::Int32).cast(DType::Float32);
    case Op::REDUCE: return x.reduce(ReduceOp::ADD, {0});
    case Op::REDUCE_MULACC: return prim::fused_reduce(x, x, {0});
    case Op::GATHER: return prim::gather(x, Tensor::from_vector<int32_t>({5, 0, 2, 2, -1, 6}, {6}), 0);
    case Op::RESHAPE: return x.reshape({2, 3});
    case Op::EXPAND: return x.reshape({1, 6}).expand({2, 6});
    case Op::PERMUTE: return x.reshape({2, 3}).permute({1, 0});
    case Op::PAD: return x.pad({{1, 2}});
    case Op::SHRINK: return x.shrink({{1, 4}});
    case Op::FLIP: return x.flip({0});
    case Op::DETACH: return x.detach();
    case Op::CONTIGUOUS_BACKWARD: return x.contiguous_backward();
    default: return std::nullopt;
  }
}

// Grad: a gradient flows back through the op's rule; Stop: the sources get none (zeros); None:
// a gradient reaching the op is an error naming it.
TEST(OpTable, GradSaysWhetherTheOpHasAGradientRule) {
  Tensor x = Tensor::from_vector<float>({0.5f, 1.5f, 2.0f, 0.25f, 3.0f, 1.25f}, {6});
  for (const OpInfo& info : all_ops()) {
    if (info.kind == OpKind::Source) continue;  // leaves: nothing to flow back to
    std::optional<Tensor> y;
    if (is_elementwise(info.kind) && info.kind != OpKind::Cast) {
      DType d = op_accepts(info.op, DType::Float32) ? DType::Float32 : DType::Int32;
      std::vector<Tensor> xs;
      for (int k = 0; k < info.arity; ++k)
        xs.push_back(info.op == Op::WHERE && k == 0 ? prim::cmplt(x, 1.0) : x.cast(d));
      y = alu(info.op, xs);
    } else {
      y = probe(info.op, x);
    }
    if (!y) { ADD_FAILURE() << "no gradient probe for " << info.name << " in op_table_test.cpp"; continue; }
    Tensor loss = y->cast(DType::Float32).sum();
    switch (info.grad) {
      case GradRule::Grad:
        EXPECT_EQ(loss.gradient({x})[0].shape(), x.shape()) << info.name;
        break;
      case GradRule::Stop:
        EXPECT_EQ(loss.gradient({x})[0].to_vector<float>(), std::vector<float>(6, 0.0f)) << info.name;
        break;
      case GradRule::None:
        try {
          loss.gradient({x});
          ADD_FAILURE() << "maroon/ops.def says " << info.name << " has no gradient rule, but a gradient passed it";
        } catch (const DTypeError& e) {
          EXPECT_NE(std::string(e.what()).find("no gradient rule for " + std::string(info.name)), std::string::npos)
              << e.what();
        }
        break;
    }
  }
}

}  // namespace
}  // namespace maroon::test
