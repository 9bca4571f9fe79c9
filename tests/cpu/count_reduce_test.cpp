// Window sums of a compare cast to float on the CPU backend against the reference executor, bit
// for bit, on every SIMD target and 1, 2 and 3 threads, each run required to take
// try_count_reduce (src/cpu/count_reduce.cpp): max-pool's count of maxima per window, which the
// plan computes from the compare's operands instead of a written-out mask (plan.cpp), and plain
// sums of CMPEQ, CMPNE and CMPLT over windows of 1 to 64 positions, operands read through
// permuted and broadcast views, float32 and float64, of random bits (NaN, infinities, signed
// zeros, subnormals) and of values that tie often.
#include <gtest/gtest.h>

#include "cpu/mask_rules.h"
#include "cpu/kernel.h"
#include "harness.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

const std::vector<std::string>& all_targets() {
  static const std::vector<std::string> t = targets_to_test();
  return t;
}

// Values from {-1, -0, +0, 1, NaN, inf, a subnormal}: compares that tie, and the edge cases.
Tensor tie_prone(const Shape& s, DType d, uint64_t seed) {
  Gen g(seed);
  const sf::Format f = d == DType::Float32 ? sf::kF32 : sf::kF64;
  std::vector<uint64_t> v(static_cast<size_t>(numel(s)));
  for (auto& x : v) {
    switch (g.next() % 7) {
      case 0: x = encode(f, -1); break;
      case 1: x = f.sign_bit(); break;
      case 2: x = 0; break;
      case 3: x = encode(f, 1); break;
      case 4: x = sf::canonical_nan(f); break;
      case 5: x = f.exp_mask() << f.mbits; break;
      default: x = 1; break;
    }
  }
  return tensor_of_bits(v, s, d);
}

TEST(CpuCountReduce, CompareCountsEqualTheReference) {
  const int runs_before = g_runs;
  int cases = 0;
  struct Win {
    Shape shape;      // the compared tensors' shape; the sum is over `axes` (trailing)
    std::vector<int64_t> axes;
  };
  const std::vector<Win> wins{
      {{4, 3, 10, 10, 2, 2}, {4, 5}},  // a 2x2 pool's windows
      {{3, 7, 5}, {2}},                // 5 positions
      {{2, 9, 1}, {2}},                // one position
      {{6, 4, 8, 8}, {2, 3}},          // 64 positions, the most taken
      {{5, 33, 3, 3}, {2, 3}},         // odd outer run
  };
  for (const Win& w : wins)
    for (Op op : {Op::CMPEQ, Op::CMPNE, Op::CMPLT})
      for (DType sd : {DType::Float32, DType::Float64})
        for (DType od : {DType::Float32, DType::Float64})
          for (bool views : {false, true}) {
            if (od != sd && (op != Op::CMPEQ || views)) continue;
            const std::string what = std::string(op_name(op)) + " " + shape_str(w.shape) + " " +
                                     std::string(dtype_name(sd)) + "->" + std::string(dtype_name(od)) +
                                     (views ? " permuted, broadcast" : "");
            check_path_on(what, [&] {
              Tensor a = tie_prone(w.shape, sd, 11 + cases), b = a;
              if (views) {
                // a read permuted (the window axes swapped with the leading ones and back), b a
                // per-outer value broadcast over the window (a pool's maximum)
                Shape t = w.shape;
                std::swap(t[0], t[t.size() - 1]);
                std::vector<int64_t> order(t.size());
                for (size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int64_t>(k);
                std::swap(order[0], order[order.size() - 1]);
                a = prim::permute(tie_prone(t, sd, 13 + cases), order);
                Shape bs = w.shape;
                for (int64_t ax : w.axes) bs[static_cast<size_t>(ax)] = 1;
                b = prim::expand(tie_prone(bs, sd, 17 + cases), w.shape);
              } else {
                // random bits, and a's own values wherever another draw ties with a
                b = prim::where(prim::cmpne(tie_prone(w.shape, sd, 23 + cases), a),
                                random_bits_tensor(w.shape, sd, 29 + cases), a).realize();
              }
              Tensor c = op == Op::CMPEQ ? prim::cmpeq(a, b) : op == Op::CMPNE ? prim::cmpne(a, b) : prim::cmplt(a, b);
              return prim::reduce(prim::cast(c, od), ReduceOp::ADD, w.axes);
            }, cpu::count_reduce_runs, "take try_count_reduce", all_targets());
            ++cases;
          }
  std::printf("compare counts: %d cases, %d backend runs equal to the reference\n", cases, g_runs - runs_before);
}

// max_pool2d's gradient: the mask (x == max).cast(float) is read by the count of maxima and by
// the scaled gradient, recomputed in both; the count must take try_count_reduce.
TEST(CpuCountReduce, MaxPoolGradientCountsItsMaxima) {
  for (DType d : {DType::Float32, DType::Float64})
    for (bool ties : {false, true}) {
      const std::string what = std::string("max_pool2d gradient ") + std::string(dtype_name(d)) + (ties ? " ties" : "");
      check_path_on(what, [&] {
        Tensor x = ties ? tie_prone({3, 4, 12, 12}, d, 31) : near_one_tensor(d, {3, 4, 12, 12}, 37, true);
        Tensor y = x.max_pool2d({2, 2});
        (y * near_one_tensor(d, y.shape(), 41)).sum().backward();
        return *x.grad();
      }, cpu::count_reduce_runs, "take try_count_reduce", all_targets());
    }
}

}  // namespace
}  // namespace maroon::test

namespace maroon::test {
namespace {

// WHERE of a constant condition (max_pool2d's `mask.where(x, -inf)` with nothing to pad, and its
// gradient `mask.where(g, 0)`) whose chosen operand is realized: the node takes that operand's
// buffer and view, no kernel (plan.cpp: constant_select). A handle keeps the WHERE alive while a
// sum and a product read it, so that it is written out rather than fused (as the CNN's gradient
// is: backward() keeps it as a tensor's .grad). Conditions true and false, through a zero PAD,
// operands permuted; a PAD of nonzero widths must not be taken for a constant.
TEST(CpuCountReduce, ConstantSelectTakesItsOperandsBuffer) {
  for (DType d : {DType::Float32, DType::Float64})
    for (int kind = 0; kind < 4; ++kind) {
      const char* names[] = {"true", "false", "true through a zero pad, permuted operand", "padded mask"};
      const std::string what = std::string("where(") + names[kind] + ") " + std::string(dtype_name(d));
      auto build = [&] {
        Tensor a = near_one_tensor(d, {6, 5, 4}, 43, true), b = near_one_tensor(d, {6, 5, 4}, 47, true);
        Tensor cond = Tensor::full({6, 5, 4}, kind != 1, DType::Bool);
        if (kind == 2) {
          cond = prim::pad(Tensor::full({6, 5, 4}, true, DType::Bool), Pairs{{0, 0}, {0, 0}, {0, 0}});
          a = prim::permute(near_one_tensor(d, {4, 6, 5}, 53, true), {1, 2, 0});
        }
        if (kind == 3) cond = prim::pad(Tensor::full({6, 5, 2}, true, DType::Bool), Pairs{{0, 0}, {0, 0}, {1, 1}});
        Tensor w = prim::where(cond, a, b);
        Tensor out = (w * prim::expand(prim::reduce(w, ReduceOp::ADD, {2}), w.shape()));
        out.realize();  // while `w` is held
        return out;
      };
      if (kind == 3) check(what, build);
      else check_path_on(what, build, cpu::constant_select_runs, "take the chosen operand's buffer", all_targets());
    }
}

}  // namespace
}  // namespace maroon::test
