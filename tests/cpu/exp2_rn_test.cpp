// AVX-512's round-to-nearest exp2 (src/cpu/exp2_lanes-inl.h, Exp2Rn16: degree-3 polynomial,
// acceptance window of 2^15 double ulps, on registers in the accumulator kernel and the row
// softmax) against src/math's scalar exp2, bit for bit, through every kernel that uses it, on
// every SIMD target this machine has; and that the path ran on AVX-512 (exp2_rn_calls) and on no
// other target, its scalar fallback included. maroon-exp2-exhaustive checks all 2^32 inputs.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cpu/fast_math.h"
#include "cpu/fastops.h"
#include "cpu/kernel.h"
#include "harness.h"
#include "math/math.h"
#include "maroon/backend.h"

namespace maroon::test {
namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Special values, the neighbours of every point where the kernel's decisions change (its domain's
// edges -125 and 127, the clamp below -150, zero, the table points j/128, integers), arguments
// like softmax's and GELU's, random bits.
std::vector<uint32_t> inputs() {
  std::vector<uint32_t> v = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u,
                             0x7F800001u, 0xFFBFFFFFu, 0x00000001u, 0x80000001u, 0x007FFFFFu, 0x807FFFFFu};
  auto around = [&](float x, int w) {
    const uint32_t b = bits_of(x);
    for (int d = -w; d <= w; ++d) v.push_back(b + static_cast<uint32_t>(d));
  };
  for (int i = -160; i <= 160; ++i) around(static_cast<float>(i), 20);
  for (float e : {-151.0f, -150.0f, -149.0f, -125.0f, 125.0f, 127.0f, 128.0f, 0x1p-26f, -0x1p-26f, 0x1p-100f,
                  -0x1p-100f, 0x1p-8f, -0x1p-8f})
    around(e, 300);
  for (int j = -4000; j <= 4000; ++j) around(static_cast<float>(j) / 128.0f, 2);
  std::mt19937_64 rng(21);
  for (int i = 0; i < 100000; ++i) v.push_back(static_cast<uint32_t>(rng()));
  std::uniform_real_distribution<double> u(-160.0, 130.0), s(-24.0, 0.0);
  for (int i = 0; i < 200000; ++i) v.push_back(bits_of(static_cast<float>(u(rng))));
  for (int i = 0; i < 200000; ++i) v.push_back(bits_of(static_cast<float>(s(rng))));
  return v;
}

// The tile kernel in round-to-nearest, the chain kernel's and the accumulator kernel's EXP2
// step, over `in` in tiles (with the tiles' slack).
std::vector<uint32_t> run(int path, const std::vector<uint32_t>& in) {
  std::vector<uint32_t> a(in), out(in.size() + cpu::kTilePad, 0xDEADBEEFu);
  a.resize(in.size() + cpu::kTilePad, 0x7FC00000u);
  const cpu::MathFn fn = cpu::fast_math(Op::EXP2, DType::Float32, DType::Float32);
  const cpu::ChainFn chain = cpu::fast_chain(DType::Float32);
  const cpu::ChainStep step{cpu::ChainOp::Exp2, nullptr};
  const cpu::AccFn acc = cpu::fast_acc(DType::Float32);
  const cpu::AccStep steps[] = {{cpu::AccOp::LoadV, 0, 0}, {cpu::AccOp::Exp2, 0, -1}};
  for (size_t i = 0; i < in.size(); i += cpu::kTile) {
    const int n = static_cast<int>(std::min<size_t>(cpu::kTile, in.size() - i));
    const void* leaf = a.data() + i;
    if (path == 0) fn(a.data() + i, out.data() + i, n, Round::NearestEven);
    else if (path == 1) chain(a.data() + i, &step, 1, out.data() + i, n);
    else acc(steps, 2, &leaf, nullptr, out.data() + i, n);
  }
  out.resize(in.size());
  return out;
}

TEST(Exp2Rn, EveryKernelEqualsTheScalarFunctionAndTheAvx512PathRuns) {
  const std::vector<uint32_t> in = inputs();
  std::vector<uint32_t> want(in.size());
  for (size_t i = 0; i < in.size(); ++i) want[i] = static_cast<uint32_t>(math::exp2(sf::kF32, in[i], Round::NearestEven));
  const std::string before = simd_target();
  const char* names[] = {"tile", "chain", "acc"};
  int avx512 = 0;
  for (const std::string& target : available_simd_targets()) {
    set_simd_target(target);
    for (int path = 0; path < 3; ++path) {
      const uint64_t calls = cpu::exp2_rn_calls(), fallback = cpu::exp2_scalar_lanes();
      const std::vector<uint32_t> got = run(path, in);
      int bad = 0;
      for (size_t i = 0; i < in.size() && bad < 10; ++i) {
        if (got[i] == want[i]) continue;
        ++bad;
        ADD_FAILURE() << target << " " << names[path] << ": exp2 of 0x" << std::hex << in[i] << " gave 0x" << got[i]
                      << ", the scalar function 0x" << want[i];
      }
      if (target == "avx512") {
        ++avx512;
        EXPECT_GT(cpu::exp2_rn_calls(), calls) << names[path] << ": the AVX-512 path did not run";
        // Its fallback ran too (NaNs, -150 <= x <= -125, x >= 127, lanes near a midpoint) ...
        EXPECT_GT(cpu::exp2_scalar_lanes(), fallback) << names[path];
        // ... but for few lanes: about 2^-13 of ordinary ones (in[] has ~10% of specials).
        EXPECT_LT(cpu::exp2_scalar_lanes() - fallback, in.size() / 8) << names[path];
      } else {
        EXPECT_EQ(cpu::exp2_rn_calls(), calls) << target << " " << names[path];
      }
    }
  }
  set_simd_target(before);
  std::printf("exp2 rn: %zu inputs x 3 kernels, AVX-512 checked %d times\n", in.size(), avx512);
}

// Spans whose length is not a whole number of vectors, with a lane that must go to the scalar
// function (a subnormal result) at every position up to the last one below n: each is finished,
// and nothing past n is asked of the scalar function (the slack holds NaNs).
TEST(Exp2Rn, SpanTailsFinishTheirLastLanes) {
  const cpu::MathFn fn = cpu::fast_math(Op::EXP2, DType::Float32, DType::Float32);
  const uint32_t ordinary = bits_of(-3.25f), slow = bits_of(-140.5f);
  const std::string before = simd_target();
  for (const std::string& target : available_simd_targets()) {
    set_simd_target(target);
    for (int n = 1; n <= 40; ++n)
      for (int at = 0; at < n; ++at) {
        std::vector<uint32_t> a(n + cpu::kTilePad, 0x7FC00000u), out(n + cpu::kTilePad, 0xDEADBEEFu);
        for (int i = 0; i < n; ++i) a[i] = i == at ? slow : ordinary;
        const uint64_t fallback = cpu::exp2_scalar_lanes();
        fn(a.data(), out.data(), n, Round::NearestEven);
        for (int i = 0; i < n; ++i)
          ASSERT_EQ(out[i], static_cast<uint32_t>(math::exp2(sf::kF32, a[i], Round::NearestEven)))
              << target << " n " << n << " lane " << i << " (the slow one at " << at << ")";
        if (target == "avx512") {
          EXPECT_EQ(cpu::exp2_scalar_lanes() - fallback, 1u) << "n " << n << " slow lane at " << at;
        }
      }
  }
  set_simd_target(before);
}

// Ordinary arguments (no NaN, none at the domain's edges) are finished on registers: fewer than
// one lane in 2000 goes to the scalar function on AVX-512 (the window's rate is about 2^-13).
TEST(Exp2Rn, OrdinaryLanesRarelyFallBack) {
  std::vector<uint32_t> in;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-120.0, 120.0);
  for (int i = 0; i < 1 << 18; ++i) in.push_back(bits_of(static_cast<float>(u(rng))));
  const std::string before = simd_target();
  for (const std::string& target : available_simd_targets()) {
    if (target != "avx512") continue;
    set_simd_target(target);
    for (int path = 0; path < 3; ++path) {
      const uint64_t fallback = cpu::exp2_scalar_lanes();
      run(path, in);
      EXPECT_LT(cpu::exp2_scalar_lanes() - fallback, in.size() / 2000) << path;
    }
  }
  set_simd_target(before);
}

// The row softmax (rows of 64: every exp2 on registers; of 100: a tail through Exp2Span) and a
// GELU (the accumulator kernel's EXP2 step inside erf) against the reference executor on every
// target and 1-3 threads, and on AVX-512 with one thread that the new path ran.
TEST(Exp2Rn, SoftmaxAndGeluEqualTheReference) {
  int checked = 0;
  auto on_avx512 = [&](const std::string& what, const std::function<Tensor()>& build) {
    uint64_t before = cpu::exp2_rn_calls();
    check(what, build, [&](const std::string& target, int threads) {
      const uint64_t now = cpu::exp2_rn_calls();
      if (target == "avx512" && threads == 1) {
        ++checked;
        EXPECT_GT(now, before) << what << ": the AVX-512 exp2 did not run";
      }
      before = now;
    });
  };
  for (const Shape& s : {Shape{4, 9, 64}, Shape{3, 5, 100}, Shape{37, 7}}) {
    on_avx512("softmax near one " + shape_str(s), [&] {
      return near_one_tensor(DType::Float32, s, 2100, true).softmax(-1);
    });
    on_avx512("softmax scaled " + shape_str(s), [&] {
      Tensor x = near_one_tensor(DType::Float32, s, 2101) * 40.0;
      return x.realize().softmax(-1);
    });
    on_avx512("softmax random bits " + shape_str(s), [&] { return random_bits_tensor(s, DType::Float32, 2102).softmax(-1); });
  }
  on_avx512("gelu", [&] { return (near_one_tensor(DType::Float32, {33, 65}, 2103, true) * 12.0).gelu("none"); });
  const std::vector<std::string> t = available_simd_targets();
  if (std::find(t.begin(), t.end(), "avx512") != t.end()) {
    EXPECT_EQ(checked, 10);
  }
}

}  // namespace
}  // namespace maroon::test
