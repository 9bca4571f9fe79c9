// Sums of a selection (src/cpu/select_reduce.cpp: REDUCE ADD of WHERE(mask, v, +0) whose mask is
// broadcast along some axes, GATHER's gradient) against the reference executor, bit for bit, on
// every SIMD target and 1, 2 and 3 threads: each rounding mode (toward -inf a cancellation gives
// -0, which the unselected +0 terms must leave alone), float32 and float64, values with NaN,
// infinities and signed zeros, indices repeated and out of range, and masks moving along the
// reduced axis or not. Each positive case must take that path.
#include <gtest/gtest.h>

#include <cmath>

#include "cpu/kernel.h"
#include "harness.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

// n values: a grid near one with some specials (NaN, +-inf, +-0) and pairs x, -x that cancel.
std::vector<uint64_t> values(Gen& g, size_t n, DType d, bool special) {
  const sf::Format f = fmt(d);
  std::vector<uint64_t> v = near_one(g, n, f);
  for (size_t i = 1; i < n; i += 7) v[i] = v[i - 1] ^ (uint64_t{1} << (bitwidth(d) - 1));  // -x after x
  if (special && n > 40) {
    v[3] = encode(f, NAN);
    v[11] = encode(f, INFINITY);
    v[19] = encode(f, -INFINITY);
    v[27] = encode(f, -0.0);
    v[35] = encode(f, 0.0);
  }
  return v;
}

// x's gradient of sum(gather(x, idx, 0) * g): a table of `rows` x `width`, indices drawn in
// [-1, rows + 1) (out of range selects nothing), the same along a row (an embedding) or not.
Tensor gather_gradient(DType d, Round r, int64_t rows, int64_t width, int64_t n, bool per_element, bool special) {
  Gen gen(rows * 31 + width * 7 + n + per_element);
  Tensor x = tensor_of_bits(values(gen, static_cast<size_t>(rows * width), d, false), {rows, width}, d);
  std::vector<uint64_t> iv(static_cast<size_t>(per_element ? n * width : n));
  for (auto& v : iv) v = static_cast<uint64_t>(static_cast<int64_t>(gen.next() % (rows + 2)) - 1) & 0xFFFFFFFFu;
  Tensor idx = tensor_of_bits(iv, {n, per_element ? width : 1}, DType::Int32).expand({n, width});
  Tensor gv = tensor_of_bits(values(gen, static_cast<size_t>(n * width), d, special), {n, width}, d);
  RoundingScope scope(r);
  (prim::gather(x, idx, 0) * gv).sum().backward();
  return *x.grad();
}

TEST(CpuSelectReduce, GatherGradientsEqualTheReference) {
  const int runs_before = g_runs;
  int cases = 0;
  for (DType d : {DType::Float32, DType::Float64})
    for (Round r : kAllRounds)
      for (bool special : {false, true}) {
        const int64_t before = cpu::select_reduce_runs();
        // The char GPT's token embedding (76 x 64 from 512 rows) and a small table drawn often.
        check("embedding gradient " + std::string(dtype_name(d)) + " " + std::string(round_name(r)) +
                  (special ? " specials" : ""),
              [&] { return gather_gradient(d, r, 76, 64, 512, false, special); });
        check("small table drawn often " + std::string(dtype_name(d)) + " " + std::string(round_name(r)),
              [&] { return gather_gradient(d, r, 3, 16, 300, false, special); });
        EXPECT_GT(cpu::select_reduce_runs(), before) << "the gather gradients did not take the select path";
        // Indices per element: the mask moves along every axis, the fold's path.
        check("per-element indices " + std::string(dtype_name(d)) + " " + std::string(round_name(r)),
              [&] { return gather_gradient(d, r, 9, 5, 40, true, special); });
        cases += 3;
      }
  std::printf("select sums: %d cases, %d backend runs equal to the reference\n", cases, g_runs - runs_before);
}

// The pattern written with primitives: masks that do not move along the reduced axis (every
// position selected or none), a mask over the reduced axis and one other, and a select of -0
// instead of +0 (not the pattern: the fold's path, same bits).
TEST(CpuSelectReduce, MasksAndZerosEqualTheReference) {
  const int runs_before = g_runs;
  for (DType d : {DType::Float32, DType::Float64})
    for (Round r : {Round::NearestEven, Round::Down}) {
      auto build = [&](int kind) {
        Gen gen(5 + kind);
        Tensor v = tensor_of_bits(values(gen, 6 * 7 * 20, d, true), {6, 7, 20}, d);
        std::vector<uint64_t> a(6 * 7), b(7);
        for (auto& x : a) x = gen.next() % 4;
        for (auto& x : b) x = gen.next() % 4;
        Tensor ta = tensor_of_bits(a, {6, 7, 1}, DType::Int32).expand({6, 7, 20});
        Tensor tb = tensor_of_bits(b, {1, 7, 1}, DType::Int32).expand({6, 7, 20});
        RoundingScope scope(r);
        Tensor mask = kind == 1 ? prim::cmplt(tb, Tensor::full({}, 2, DType::Int32).reshape({1, 1, 1}).expand({6, 7, 20}))
                                : prim::cmpne(ta, tb);
        Tensor zero = Tensor::full({}, kind == 2 ? -0.0 : 0.0, d).reshape({1, 1, 1}).expand({6, 7, 20});
        return prim::where(mask, v, zero).reduce(ReduceOp::ADD, {kind == 1 ? 1 : 0});
      };
      for (int kind : {0, 1, 2}) {
        const int64_t before = cpu::select_reduce_runs();
        check("select kind " + std::to_string(kind) + " " + std::string(dtype_name(d)) + " " +
                  std::string(round_name(r)),
              [&] { return build(kind); });
        if (kind == 2) EXPECT_EQ(cpu::select_reduce_runs(), before) << "a -0 select took the select path";
        else EXPECT_GT(cpu::select_reduce_runs(), before) << "kind " << kind << " did not take the select path";
      }
    }
  std::printf("select masks: %d backend runs equal to the reference\n", g_runs - runs_before);
}

}  // namespace
}  // namespace maroon::test
