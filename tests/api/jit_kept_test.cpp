// A replay keeps from one call to the next what depends only on the graph (cpu::Plan::
// keep_between_runs: movement nodes' views, elementwise programs). Inputs given through other
// views than the captured call's, and other data, still give the bits of the plain function:
// were a kept view not recomputed when its source's view changed, the calls below would differ.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/graph.h"
#include "cpu/cpu.h"
#include "cpu/kernel.h"
#include "maroon/backend.h"
#include "maroon/maroon.h"

namespace maroon {
namespace {

// Movement nodes over the input (reshape, permute, flip), an elementwise kernel and a matmul.
std::vector<Tensor> kept_fn(const std::vector<Tensor>& in) {
  Tensor x = in[0].reshape({6, 4}).permute({1, 0});  // (4, 6)
  Tensor h = (x * 3.0f + in[0].flip({1})).relu();
  return {h.matmul(in[1]) + 0.5f};
}

// A (4, 6) float32 tensor from rows r of a (rows, cols) arange-like recipe seen through `how`:
// 0 contiguous, 1 the transpose of a realized (6, 4) buffer, 2 rows 1..4 of a realized (6, 6) one.
Tensor input(int k, int how) {
  auto values = [k](int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((static_cast<int64_t>(i) * 37 + k * 11) % 23) - 11.0f;
    return v;
  };
  if (how == 0) return Tensor::from_vector<float>(values(24), {4, 6});
  if (how == 1) return Tensor::from_vector<float>(values(24), {6, 4}).realize().permute({1, 0}).realize();
  return Tensor::from_vector<float>(values(36), {6, 6}).realize().shrink({{1, 5}, {0, 6}}).realize();
}

TEST(TinyJitKept, InputsThroughOtherViewsGiveThePlainBits) {
  const int threads = num_threads();
  const std::string simd = simd_target();
  for (const std::string& target : available_simd_targets())
  for (int t : {1, 2, 3}) {
    set_simd_target(target);
    set_num_threads(t);
    Tensor w = Tensor::from_vector<float>(std::vector<float>{1, -2, 3, 0.25f, -0.5f, 2, 1, 1, -1, 4, 0.5f, -3, 2, 2,
                                                             1, -1, 0.75f, 3, -2, 1, 1, 0, -4, 2, 1, 1, 2, -1, 3, 0.5f},
                                          {6, 5}).realize();
    TinyJit jit([](const std::vector<Tensor>& in) { return kept_fn(in); });
    const int64_t before = cpu::plan_kept_reuses();
    int64_t reused_contiguous = 0;
    const int hows[] = {0, 0, 0, 1, 1, 2, 0, 2, 0};
    for (int k = 0; k < 9; ++k) {
      Tensor x = input(k, hows[k]);
      if (hows[k] != 0) {
        ASSERT_FALSE(x.node()->view.is_contiguous()) << "the input is not a view";
      }
      const int64_t at = cpu::plan_kept_reuses();
      std::vector<uint8_t> got = jit({x, w})[0].bytes();
      if (k >= 2 && hows[k] == 0) reused_contiguous += cpu::plan_kept_reuses() - at;
      std::vector<uint8_t> want = kept_fn({input(k, hows[k]), w})[0].realize().bytes();
      ASSERT_EQ(got, want) << "call " << k << " (input view " << hows[k] << ") on " << t << " threads, " << target;
    }
    EXPECT_GT(reused_contiguous, 0) << "the replays kept nothing from the last call";
    EXPECT_GT(cpu::plan_kept_reuses(), before);
  }
  set_num_threads(threads);
  set_simd_target(simd);
}

// An input that is one element broadcast in one call and a whole tensor in the next: an
// accumulator program (cpu/acc_program.cpp) reads a broadcast leaf's one element where it lies,
// so that choice is made per run, never kept in the program the replay keeps. 1024 elements, so
// that run_elementwise hands the program whole tiles read in place.
TEST(TinyJitKept, InputBroadcastInOneCallAndWholeInTheNext) {
  const int threads = num_threads();
  const std::string simd = simd_target();
  auto fn = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 3.0f + 1.0f}; };
  auto input = [](int k, bool broadcast) {
    if (broadcast) return Tensor::from_vector<float>({static_cast<float>(k) + 0.5f}, {1}).realize().expand({1024}).realize();
    std::vector<float> v(1024);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((static_cast<int64_t>(i) * 37 + k) % 101) - 50.0f;
    return Tensor::from_vector<float>(v, {1024});
  };
  for (const std::string& target : available_simd_targets())
  for (int t : {1, 2, 3}) {
    set_simd_target(target);
    set_num_threads(t);
    TinyJit jit(fn);
    const bool broadcasts[] = {false, false, false, true, false, true, true, false};
    const int64_t ranges = cpu::acc_range_runs();
    for (int k = 0; k < 8; ++k) {
      Tensor x = input(k, broadcasts[k]);
      std::vector<uint8_t> got = jit({x})[0].bytes();
      std::vector<uint8_t> want = fn({input(k, broadcasts[k])})[0].realize().bytes();
      ASSERT_EQ(got, want) << "call " << k << (broadcasts[k] ? " (broadcast input)" : " (whole input)") << " on "
                           << t << " threads, " << target;
    }
    EXPECT_GT(cpu::acc_range_runs(), ranges) << "no accumulator program ran over whole tiles in place";
  }
  set_num_threads(threads);
  set_simd_target(simd);
}

}  // namespace
}  // namespace maroon
