// A node that a handle outside the schedule also sees is fused all the same, and computed again
// by whoever reads it later, when it is a short chain of cheap ops reading at most one
// full-size buffer (src/cpu/plan.cpp, recompute_cost). The handle is most often a later
// gradient's graph: batchnorm's input gradient wrote out three products that the weight's and
// the bias's sums read later. Against the reference executor, bit for bit, on every SIMD target
// and 1, 2 and 3 threads, both the sum realized first and the held node realized after it; each
// CPU run of the sum must be the expected number of kernels (1: nothing written out, 2: the
// held node written out first). A held bias add over a product is the matmul's epilogue instead.
#include <gtest/gtest.h>

#include <optional>

#include "harness.h"
#include "maroon/counters.h"
#include "maroon/nn.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

// The sum over (batch, y, x) of a node built by `held` from its inputs, realized while a handle
// to that node stays alive; then the node itself. Both compared with the reference; the sum's
// kernels counted on each CPU run.
void check_held(const std::string& what, int64_t want_kernels, const std::function<Tensor()>& held,
                const std::function<Tensor(const Tensor&)>& sum_of) {
  std::optional<Tensor> h;  // the handle outside the sum's schedule
  check(
      what,
      [&] {
        h = held();
        Tensor s = sum_of(*h);
        reset_counters();
        return s;
      },
      [&](const std::string& target, int threads) {
        EXPECT_EQ(counters().kernel_count, want_kernels) << what << " on " << target << " with " << threads << " threads";
      });
  check(what + ", the held node after the sum", [&] {
    h = held();
    sum_of(*h).realize();
    return *h;
  });
}

const Shape kRecomputeShape{4, 8, 5, 40};  // (batch, channels, y, x): runs of 200 per channel and batch
Tensor rc_channel_sum(const Tensor& t) { return t.sum(Axis{0, 2, 3}); }
Tensor rc_per_channel(DType d, uint64_t seed) { return near_one_tensor(d, {1, kRecomputeShape[1], 1, 1}, seed, true).realize(); }
Tensor rc_full(DType d, uint64_t seed) { return near_one_tensor(d, kRecomputeShape, seed, true).realize(); }

TEST(CpuRecompute, CheapChainsSeenOutsideAreNotWrittenOut) {
  for (DType d : {DType::Float32, DType::Float64}) {
    const std::string t = std::string(dtype_name(d)) + " ";
    Tensor x = rc_full(d, 1), y = rc_full(d, 2), a = rc_per_channel(d, 3), w = rc_per_channel(d, 4);
    check_held(t + "x * a", 1, [&] { return prim::mul(x, a); }, rc_channel_sum);
    // Batchnorm's dy * invstd * weight: three ops, one stream, the others per channel.
    check_held(t + "(x * a) * w", 1, [&] { return prim::mul(prim::mul(x, a), w); },
               [&](const Tensor& h) { return rc_channel_sum(prim::mul(h, y)); });
    check_held(t + "x * a + w", 1, [&] { return prim::add(prim::mul(x, a), w); }, rc_channel_sum);
  }
}

TEST(CpuRecompute, CostlyChainsSeenOutsideAreWrittenOut) {
  for (DType d : {DType::Float32, DType::Float64}) {
    const std::string t = std::string(dtype_name(d)) + " ";
    Tensor x = rc_full(d, 5), y = rc_full(d, 6), a = rc_per_channel(d, 7);
    // Two streams, one op or more (Adam's m: b1 * m + (1 - b1) * g, written beside its reader).
    check_held(t + "x * y", 2, [&] { return prim::mul(x, y); }, rc_channel_sum);
    check_held(t + "x * a + y * a", 2, [&] { return prim::add(prim::mul(x, a), prim::mul(y, a)); }, rc_channel_sum);
    // An op without a SIMD row (EXP2: a correctly rounded exponential per element).
    check_held(t + "exp2(x)", 2, [&] { return x.exp2(); }, rc_channel_sum);
    // Five cheap ops over one stream: longer than kMaxRecomputedOps.
    check_held(t + "five ops", 2, [&] { return prim::mul(prim::add(prim::mul(prim::add(prim::mul(x, a), a), a), a), a); },
               rc_channel_sum);
  }
  // MUL has no SIMD row for half floats: a product of float16 is written out as before. Three
  // kernels: the product, the sum (in float32, as Tensor::sum accumulates half floats) and its
  // cast back; two where the product is fused.
  Tensor h = rc_full(DType::Float32, 14).cast(DType::Float16).realize();
  Tensor ha = rc_per_channel(DType::Float32, 15).cast(DType::Float16).realize();
  check_held("float16 x * a", 3, [&] { return prim::mul(h, ha); }, rc_channel_sum);
}

// A cheap chain read by two sums (two kernels) is computed in each rather than written out.
TEST(CpuRecompute, CheapChainReadByTwoSumsIsComputedInEach) {
  for (DType d : {DType::Float32, DType::Float64}) {
    Tensor x = rc_full(d, 8), y = rc_full(d, 9), a = rc_per_channel(d, 10), w = rc_per_channel(d, 11);
    const std::string what = std::string(dtype_name(d)) + " two sums of (x * a) * w";
    check(
        what,
        [&] {
          Tensor c = prim::mul(prim::mul(x, a), w);
          Tensor s = prim::add(rc_channel_sum(c), rc_channel_sum(prim::mul(c, y)));
          reset_counters();
          return s;
        },
        [&](const std::string& target, int threads) {
          EXPECT_EQ(counters().kernel_count, 3) << what << " on " << target << " with " << threads << " threads";
        });
  }
}

// Batchnorm's training forward, realized, and the gradient of sum(y * g) built (not realized).
struct BatchnormGradients {
  TrainingScope training{true};
  nn::BatchNorm bn{kRecomputeShape[1]};
  Tensor x;
  BatchnormGradients(const Tensor& x0, const Tensor& g) : x(x0.detach()) {
    Tensor y = bn(x);
    y.realize();
    prim::mul(y, g.detach()).sum().backward();
  }
};

// Batchnorm's gradients realized one at a time (the optimizer's order: the input's, then the
// weight's and the bias's): the same bits as the reference, and the input gradient's schedule
// leaves no full-size buffer alive but the gradient.
TEST(CpuRecompute, BatchnormGradientsRealizedOneAtATime) {
  Tensor x0 = rc_full(DType::Float32, 12), g = rc_full(DType::Float32, 13);
  auto grads = [&](int which) {
    BatchnormGradients b(x0, g);
    b.x.grad()->realize();
    if (which == 0) return *b.x.grad();
    b.bn.weight->grad()->realize();
    return which == 1 ? *b.bn.weight->grad() : *b.bn.bias->grad();
  };
  for (int which : {0, 1, 2}) check("batchnorm gradient " + std::to_string(which), [&] { return grads(which); });
  BackendSettings keep;
  set_backend(Backend::Cpu);
  BatchnormGradients b(x0, g);
  const int64_t before = counters().mem_used;
  b.x.grad()->realize();
  const int64_t full_bytes = numel(kRecomputeShape) * 4;
  // The gradient, and no written-out product (each would be another full-size buffer kept for
  // the weight's and the bias's sums).
  EXPECT_LT(counters().mem_used - before, 2 * full_bytes);
  EXPECT_GE(counters().mem_used - before, full_bytes);
}

// A product plus its bias that a handle keeps (conv2d's output, kept for ReLU's gradient) is not
// left to be computed again later: the matmul writes it as its epilogue (plan.cpp,
// epilogue_instead_of_fusing), in place of the bare product. The sum reading it through a ReLU runs as
// two kernels (the matmul and the sum), and the held node is then realized already: no kernel
// (computed again, it was one more pass). Both equal the reference.
TEST(CpuRecompute, HeldBiasAddIsTheProductsEpilogue) {
  for (DType d : {DType::Float32, DType::Float64}) {
    const std::string what = std::string(dtype_name(d)) + " conv2d(x, w, b) held, relu summed per channel";
    Tensor x = near_one_tensor(d, {4, 3, 20, 20}, 21, true).realize();
    Tensor w = near_one_tensor(d, {8, 3, 3, 3}, 22).realize(), b = near_one_tensor(d, {8}, 23, true).realize();
    auto kernels = [&](int64_t want) {
      return [&, want](const std::string& target, int threads) {
        EXPECT_EQ(counters().kernel_count, want) << what << " on " << target << " with " << threads << " threads";
      };
    };
    std::optional<Tensor> h;  // the handle outside the sum's schedule
    check(what, [&] {
      h = x.conv2d(w, b);
      Tensor s = h->relu().sum(Axis{0, 2, 3});
      reset_counters();
      return s;
    }, kernels(2));
    check(what + ", the held node after the sum", [&] {
      h = x.conv2d(w, b);
      h->relu().sum(Axis{0, 2, 3}).realize();
      reset_counters();
      return *h;
    }, kernels(0));
  }
}

}  // namespace
}  // namespace maroon::test
