// A padded view times 1 written as rows and borders (cpu/pad_copy.cpp): the kernel's bits as the
// reference executor computes them (NaN payloads made canonical, signed zeros, subnormals and
// infinities kept, +0 borders), float32 and float64, on every SIMD target and 1-3 threads, each
// CPU run checked to have taken the path; borders on the last axis only, on several, on the
// first axis, a 1-axis pad, a permuted input (strided rows), a shrink (negative pad), an empty
// input; and kernels that look alike but are not a pad times 1 must not take it.
#include <gtest/gtest.h>

#include "harness.h"
#include "cpu/pad_copy.h"
#include "maroon/jit.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

void check_pad(const std::string& what, const std::function<Tensor()>& build) {
  check_path(what, build, [] { return cpu::pad_copies(); }, "take the pad copy");
}

Tensor times_one(const Tensor& x) { return x.mul(Tensor::full({}, 1.0, x.dtype())); }

TEST(CpuPadCopy, SameBitsAsTheReference) {
  for (DType d : {DType::Float32, DType::Float64}) {
    const std::string dn(dtype_name(d));
    auto pad = [&](const std::string& what, Shape s, Pairs p, uint64_t seed) {
      check_pad(dn + " " + what, [=] { return times_one(random_bits_tensor(s, d, seed).pad(p)); });
    };
    pad("conv2d (1,1)", {2, 3, 5, 7}, {{0, 0}, {0, 0}, {1, 1}, {1, 1}}, 1);
    pad("conv2d uneven", {3, 2, 4, 6}, {{0, 0}, {0, 0}, {2, 0}, {0, 3}}, 2);
    pad("many images", {9, 5, 3, 4}, {{0, 0}, {0, 0}, {1, 1}, {1, 1}}, 3);
    pad("conv1d", {2, 3, 9}, {{0, 0}, {0, 0}, {2, 1}}, 4);
    pad("first axis", {2, 3, 4}, {{1, 2}, {0, 0}, {0, 1}}, 5);
    pad("rows only", {2, 3, 4, 5}, {{0, 0}, {0, 0}, {1, 2}, {0, 0}}, 6);
    pad("one axis", {37}, {{3, 5}}, 7);
    pad("empty input", {2, 0, 3}, {{0, 0}, {1, 1}, {1, 1}}, 8);
    check_pad(dn + " shrink then pad", [=] {
      return times_one(random_bits_tensor({4, 6, 8}, d, 9).shrink({{0, 4}, {1, 6}, {0, 5}}).pad({{0, 0}, {0, 2}, {2, 0}}));
    });
    check_pad(dn + " permuted", [=] {
      return times_one(random_bits_tensor({2, 5, 4, 3}, d, 10).permute({0, 1, 3, 2}).pad({{0, 0}, {0, 0}, {1, 1}, {1, 1}}));
    });
  }
}

// Image planes (three or more axes, the last contiguous) are written a row at a time: borders of
// one, two and more elements, rows of every length around a vector's, pads on the plane's rows
// only or its columns only, planes without a valid row, NaN payloads and the other specials.
TEST(CpuPadCopy, PlanesRowByRow) {
  for (DType d : {DType::Float32, DType::Float64}) {
    const std::string dn(dtype_name(d));
    auto plane = [&](const std::string& what, Shape s, Pairs p, uint64_t seed) {
      check_path(dn + " " + what, [=] { return times_one(random_bits_tensor(s, d, seed).pad(p)); },
                 [] { return cpu::pad_plane_copies(); }, "write planes row by row");
    };
    plane("3x3 conv's", {3, 4, 6, 8}, {{0, 0}, {0, 0}, {1, 1}, {1, 1}}, 40);
    plane("wide borders", {2, 3, 5, 17}, {{0, 0}, {0, 0}, {2, 3}, {3, 2}}, 41);
    plane("columns only", {2, 2, 4, 33}, {{0, 0}, {0, 0}, {0, 0}, {2, 1}}, 42);
    plane("rows only", {5, 3, 16}, {{0, 0}, {1, 2}, {0, 0}}, 43);
    check_path(dn + " shrink then pad", [=] {
      return times_one(random_bits_tensor({2, 2, 5, 8}, d, 44).shrink({{0, 2}, {0, 2}, {1, 5}, {1, 6}}).pad({{0, 0}, {0, 0}, {1, 1}, {2, 0}}));
    }, [] { return cpu::pad_plane_copies(); }, "write planes row by row");
  }
}

// Alike but not a pad times 1: times 2, times -1, an unpadded view, float16, a second op.
TEST(CpuPadCopy, OtherKernelsDoNotTakeIt) {
  const Pairs p{{0, 0}, {1, 1}, {1, 1}};
  const std::vector<std::pair<std::string, std::function<Tensor()>>> cases = {
      {"times 2", [&] { return random_bits_tensor({2, 3, 4}, DType::Float32, 20).pad(p).mul(Tensor::full({}, 2.0, DType::Float32)); }},
      {"times -1", [&] { return random_bits_tensor({2, 3, 4}, DType::Float32, 21).pad(p).mul(Tensor::full({}, -1.0, DType::Float32)); }},
      {"no pad", [&] { return times_one(random_bits_tensor({2, 3, 4}, DType::Float32, 22).permute({2, 0, 1})); }},
      {"float16", [&] { return times_one(random_bits_tensor({2, 3, 4}, DType::Float16, 23).pad(p)); }},
      {"plus one", [&] { return prim::add(times_one(random_bits_tensor({2, 3, 4}, DType::Float32, 24).pad(p)), 1.0); }},
  };
  for (const auto& [what, build] : cases) {
    const int64_t before = cpu::pad_copies();
    check(what, build);
    EXPECT_EQ(cpu::pad_copies(), before) << what << " took the pad copy";
  }
}

// A kernel, so JIT replays run it on each call's input.
TEST(CpuPadCopy, JitReplayPadsEachCallsInput) {
  BackendSettings keep;
  set_backend(Backend::Cpu);
  const Pairs p{{0, 0}, {0, 0}, {1, 1}, {1, 1}};
  TinyJit jit([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{times_one(in[0].pad(p)).realize()}; });
  for (uint64_t call = 0; call < 4; ++call) {
    Tensor x = random_bits_tensor({2, 3, 4, 5}, DType::Float32, 30 + call);
    const int64_t before = cpu::pad_copies();
    std::vector<uint8_t> got = jit({x})[0].bytes();
    EXPECT_EQ(cpu::pad_copies() - before, 1) << "call " << call;
    set_backend(Backend::Ref);
    EXPECT_EQ(got, times_one(x.pad(p)).bytes()) << "call " << call;
    set_backend(Backend::Cpu);
  }
  EXPECT_TRUE(jit.capture().captured());
}

}  // namespace
}  // namespace maroon::test
