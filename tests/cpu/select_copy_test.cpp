// A stack's WHERE chain over its slots written as one copy of each source (cpu/select_copy.cpp):
// the reference's bits (NaN payloads, signed zeros, subnormals, infinities kept, as WHERE keeps
// them) on every SIMD target and 1-3 threads, each CPU run checked to have taken the path; stack
// along each axis, cat of equal sizes, several dtypes, sources read through permuted, sliced,
// broadcast and flipped views, every element written over a poisoned buffer, and a JIT replay;
// and kernels that look alike but are not a stack's (unequal cat, a condition from data, a
// slot's source misplaced) must not take it.
#include <gtest/gtest.h>

#include "harness.h"
#include "cpu/select_copy.h"
#include "maroon/jit.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

int64_t copies() { return cpu::select_copies(); }

void check_copy(const std::string& what, const std::function<Tensor()>& build) {
  check_path(what, build, copies, "copy each slot");
}

std::vector<Tensor> sources(const Shape& s, DType d, int n, uint64_t seed) {
  std::vector<Tensor> ts;
  for (int i = 0; i < n; ++i) ts.push_back(random_bits_tensor(s, d, seed + static_cast<uint64_t>(i)));
  return ts;
}

TEST(CpuSelectCopy, StackAndCatSameBitsAsTheReference) {
  for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::Int32, DType::UInt8, DType::Bool}) {
    const std::string dn(dtype_name(d));
    for (int64_t axis : {0, 1, 2})
      check_copy(dn + " stack of 3 along axis " + std::to_string(axis),
                 [=] { return Tensor::stack_all(sources({4, 5, 6}, d, 3, 10 + axis), axis); });
    check_copy(dn + " cat of 4 along axis 1",
               [=] { return Tensor::cat_all(sources({3, 7, 5}, d, 4, 20), 1); });
    check_copy(dn + " cat of 2 along axis 0", [=] { return Tensor::cat_all(sources({9, 33}, d, 2, 30), 0); });
  }
}

// Sources read through views: a permute (strided rows, copied element by element), a slice (an
// offset), a broadcast row (stride 0), a flip (negative strides); and a stack of 2 and of 9.
TEST(CpuSelectCopy, SourcesThroughViews) {
  const DType d = DType::Float32;
  check_copy("permuted sources", [=] {
    std::vector<Tensor> ts = sources({6, 4}, d, 3, 40);
    for (Tensor& t : ts) t = t.permute({1, 0});
    return Tensor::stack_all(ts, 1);
  });
  check_copy("sliced sources", [=] {
    std::vector<Tensor> ts = sources({8, 10}, d, 3, 50);
    for (Tensor& t : ts) t = t.shrink({{2, 7}, {1, 9}});
    return Tensor::cat_all(ts, 0);
  });
  check_copy("broadcast and flipped sources", [=] {
    Tensor a = random_bits_tensor({1, 16}, d, 60).expand({5, 16});
    Tensor b = random_bits_tensor({5, 16}, d, 61).flip({0, 1});
    return Tensor::stack_all({a, b}, 0);
  });
  check_copy("a stack of 9", [=] { return Tensor::stack_all(sources({3, 3}, d, 9, 70), 2); });
  check_copy("3-axis permuted sources (rows through an odometer)", [=] {
    std::vector<Tensor> ts = sources({4, 5, 6}, d, 2, 75);
    for (Tensor& t : ts) t = t.permute({2, 0, 1});
    return Tensor::stack_all(ts, 2);
  });
  // Slots longer than a task (65,536 elements): pieces of one row, forward and reversed.
  check_copy("long contiguous slots", [=] { return Tensor::stack_all(sources({300, 300}, d, 2, 85), 0); });
  check_copy("long reversed slots", [=] {
    std::vector<Tensor> ts = sources({300, 300}, d, 2, 87);
    for (Tensor& t : ts) t = t.flip({0, 1});
    return Tensor::cat_all(ts, 1);
  });
  // tinygrad's bitonic sort: each stage's halves stacked back, flipped, over eight axes of two.
  check_copy("a sort's stacks", [=] { return random_bits_tensor({6, 256}, d, 76).sort(1).first; });
  check_copy("a descending sort's stacks", [=] { return random_bits_tensor({3, 40}, d, 77).sort(1, true).first; });
  check("empty sources", [=] { return Tensor::stack_all(sources({0, 4}, d, 3, 80), 1); });  // no kernel runs
}

// Kernels that are not a stack's chain: each must keep the interpreter (and its bits).
TEST(CpuSelectCopy, OtherKernelsDoNotTakeIt) {
  auto other = [](const std::string& what, const std::function<Tensor()>& build) {
    const int64_t before = copies();
    check(what, build);
    EXPECT_EQ(copies(), before) << what << ": took the select copy";
  };
  const DType d = DType::Float32;
  other("cat of unequal sizes (a sum of pads)", [=] {
    return Tensor::cat_all({random_bits_tensor({2, 3}, d, 90), random_bits_tensor({4, 3}, d, 91)}, 0);
  });
  other("a condition read from data", [=] {
    std::vector<Tensor> ts = sources({1, 4}, d, 2, 92);
    Tensor m = random_bits_tensor({1, 4}, DType::Bool, 94).pad({{1, 0}, {0, 0}});
    return prim::where(m, ts[1].pad({{1, 0}, {0, 0}}), ts[0].pad({{0, 1}, {0, 0}}));
  });
  other("slots swapped (a WHERE chain selecting the wrong slot's source)", [=] {
    std::vector<Tensor> ts = sources({1, 4}, d, 2, 93);
    Tensor s0 = ts[0].pad({{0, 1}, {0, 0}}), s1 = ts[1].pad({{0, 1}, {0, 0}});  // both at slot 0
    Tensor m = Tensor::full({1, 1}, true, DType::Bool).pad({{1, 0}, {0, 0}});
    return prim::where(m, s1, s0);
  });
}

// Every element is written: the output's buffer is taken from the cache right after one of its
// size class was filled with a pattern no slot holds (the harness's runs reuse each other's
// buffers, whose bytes were already the right ones).
TEST(CpuSelectCopy, EveryElementWritten) {
  BackendSettings keep;
  const std::vector<Tensor> ts = sources({33, 17}, DType::Float32, 4, 300);
  set_backend(Backend::Ref);
  const std::vector<uint8_t> want = Tensor::stack_all(ts, 1).bytes();
  set_backend(Backend::Cpu);
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    { Tensor poison = random_bits_tensor({4, 33, 17}, DType::Float32, 400); }  // freed: its block cached
    const int64_t before = copies();
    EXPECT_EQ(Tensor::stack_all(ts, 1).bytes(), want) << threads << " threads";
    EXPECT_EQ(copies() - before, 1) << threads << " threads";
  }
}

// In a TinyJit replay the kernel copies each call's sources.
TEST(CpuSelectCopy, JitReplayCopiesEachCallsSources) {
  BackendSettings keep;
  set_backend(Backend::Cpu);
  TinyJit jit([](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{Tensor::stack_all({in[0], in[1]}, 1).realize()};
  });
  for (uint64_t call = 0; call < 4; ++call) {
    Tensor a = random_bits_tensor({3, 5}, DType::Float32, 100 + call), b = random_bits_tensor({3, 5}, DType::Float32, 200 + call);
    std::vector<uint8_t> got = jit({a, b})[0].bytes();
    set_backend(Backend::Ref);
    std::vector<uint8_t> want = Tensor::stack_all({a, b}, 1).bytes();
    set_backend(Backend::Cpu);
    EXPECT_EQ(got, want) << "call " << call;
  }
  EXPECT_TRUE(jit.capture().captured());
}

}  // namespace
}  // namespace maroon::test
