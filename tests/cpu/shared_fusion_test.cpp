// A node read several times whose readers all end in one kernel is fused into that kernel
// (src/cpu/plan.cpp, shared_sinks; issue 16): GELU's u = x / sqrt(2) and Erf's t = 1 / (1 + p|u|)
// are computed once per tile inside the GELU's kernel instead of written out, and the matmul
// before a GELU takes the whole of it as its epilogue. Against the reference executor, bit for
// bit, on every SIMD target and 1, 2 and 3 threads; each CPU run must be the expected number of
// kernels (1 for a GELU: 3 when u and t are written out), and where the readers of a node are in
// two kernels it is still written out.
#include <gtest/gtest.h>

#include <cmath>

#include "cpu/epilogue.h"
#include "harness.h"
#include "maroon/counters.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

// The exporter's GELU (PyTorch's nn.GELU, exact): x * 0.5 * (1 + erf(x / sqrt(2))), with
// Maroon's Erf (Tensor::erf: t read five times, u seven). The division by sqrt(2) as a product
// (a division by a scalar is a kernel of its own for the scalar's reciprocal).
Tensor gelu_erf(const Tensor& x) {
  Tensor e = prim::mul(x, 1 / std::sqrt(2.0)).erf();
  return prim::mul(prim::mul(x, prim::add(e, 1.0)), 0.5);
}

// check(), and that every CPU run was `want` kernels (counted by GlobalCounters from the moment
// the graph is built; its inputs are realized before).
void check_kernels(const std::string& what, int64_t want, const std::function<Tensor()>& build) {
  check(
      what,
      [&] {
        Tensor t = build();
        reset_counters();
        return t;
      },
      [&](const std::string& target, int threads) {
        EXPECT_EQ(counters().kernel_count, want) << what << " on " << target << " with " << threads << " threads";
      });
}

// Values spread over GELU's whole range (Erf's exp2 underflows past |x| ~ 13, overflows nowhere)
// with, in one element of eight, a NaN, an infinity, a signed zero or a subnormal.
Tensor spread(DType d, const Shape& s, uint64_t seed, double scale) {
  Tensor x = near_one_tensor(d, s, seed, true);
  x = prim::mul(x, scale);
  x.realize();
  return x;
}

TEST(CpuSharedFusion, GeluIsOneKernel) {
  for (DType d : {DType::Float32, DType::Float64})
    for (double scale : {1.0, 4.0, 20.0})
      for (const Shape& s : {Shape{3, 7, 130}, Shape{1000}, Shape{5}}) {
        const std::string tag = std::string(dtype_name(d)) + " x" + std::to_string(scale) + " " + shape_str(s);
        check_kernels("gelu " + tag, 1, [&] { return gelu_erf(spread(d, s, 7 + s.size(), scale)); });
      }
  // The other rounding modes (EXP2 then runs outside the chains).
  for (Round r : kAllRounds)
    check_kernels("gelu " + std::string(round_name(r)), 1, [&] {
      Tensor x = spread(DType::Float32, {9, 65}, 3, 3.0);
      RoundingScope scope(r);
      return gelu_erf(x);
    });
}

// nn.Linear then GELU (the transformer's feed-forward): one kernel, the GELU as the matmul's
// epilogue.
TEST(CpuSharedFusion, LinearGeluIsTheMatmulsEpilogue) {
  for (DType d : {DType::Float32, DType::Float64})
    for (const Shape& mkn : {Shape{64, 32, 96}, Shape{100, 17, 300}, Shape{9, 40, 33}}) {
      const std::string tag = std::string(dtype_name(d)) + " " + shape_str(mkn);
      const int64_t before = cpu::matmul_epilogue_runs();
      const int compared = g_runs;
      check_kernels("linear + gelu " + tag, 1, [&] {
        Tensor x = spread(d, {mkn[0], mkn[1]}, 11, 2.0), w = spread(d, {mkn[1], mkn[2]}, 12, 0.5);
        Tensor b = spread(d, {mkn[2]}, 13, 1.0);
        return gelu_erf(x.matmul(w).add(b));
      });
      EXPECT_EQ(cpu::matmul_epilogue_runs() - before, g_runs - compared) << tag << ": a run had no epilogue";
    }
}

// A node read twice by one op ((a + b) squared as a product) is one kernel with its reader; a
// node whose readers are in two kernels (a sum and an elementwise op) is written out, and the
// result is still the reference's.
TEST(CpuSharedFusion, OnlyWhenTheReadersShareAKernel) {
  check_kernels("(a + b) * (a + b) * c", 1, [] {
    Tensor a = spread(DType::Float32, {300}, 21, 2.0), b = spread(DType::Float32, {300}, 22, 2.0);
    Tensor c = spread(DType::Float32, {300}, 23, 2.0);
    Tensor h = prim::mul(a.add(b), 3.0);
    return prim::mul(prim::mul(h, h), c);
  });
  // h's readers: the row sums (a reduction, its own kernel) and the product with their
  // reciprocals (which are read through an expand, so a kernel too): h written out is 4 kernels,
  // h recomputed in both readers would be 3.
  check_kernels("h / sum(h)", 4, [] {
    Tensor a = spread(DType::Float32, {20, 40}, 24, 1.0);
    Tensor h = prim::mul(a, 3.0).exp2();
    return prim::mul(h, h.sum(1, true).reciprocal());
  });
}

}  // namespace
}  // namespace maroon::test
