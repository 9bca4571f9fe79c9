// The SIMD exp2 (src/cpu/fast_math.cpp) against src/math's scalar exp2, bit for bit, on every
// SIMD target this machine has and in every rounding mode: every special value and the edges of
// the kernel's domain, dense sweeps where its shortcuts switch, and random bit patterns. The
// whole 2^32 is maroon-exp2-exhaustive (tests/cpu/exp2_exhaustive.cpp; README, docs/math.md).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cpu/fast_math.h"
#include "cpu/kernel.h"
#include "math/internal.h"
#include "math/math.h"
#include "maroon/backend.h"

namespace maroon::cpu {
namespace {

uint32_t bits_of(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
float float_of(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

// The inputs: special values, neighbours of every place a decision changes, random patterns.
std::vector<uint32_t> cases() {
  std::vector<uint32_t> v = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u,
                             0xFFC00000u, 0x7F800001u, 0xFFBFFFFFu, 0x7FFFFFFFu, 0x00000001u,
                             0x80000001u, 0x007FFFFFu, 0x00800000u, 0x7F7FFFFFu, 0xFF7FFFFFu};
  auto around = [&](float x, int w) {
    uint32_t b = bits_of(x);
    for (int d = -w; d <= w; ++d) v.push_back(b + static_cast<uint32_t>(d));
  };
  for (int i = -160; i <= 160; ++i) around(static_cast<float>(i), 40);  // exact powers of two
  for (float e : {0x1p-26f, -0x1p-26f, 0x1p-27f, 0x1p20f, -0x1p20f, 128.0f, -130.0f, -150.0f, -149.0f,
                  -126.0f, -125.0f, 127.0f, 0.5f, -0.5f, 0x1p-8f, 0x1p-7f})
    around(e, 300);
  for (int j = -2000; j <= 2000; ++j) around(static_cast<float>(j) / 128.0f, 3);  // table points
  std::mt19937_64 rng(16);
  for (int i = 0; i < 200000; ++i) v.push_back(static_cast<uint32_t>(rng()));
  std::uniform_real_distribution<double> u(-160.0, 130.0);
  for (int i = 0; i < 200000; ++i) v.push_back(bits_of(static_cast<float>(u(rng))));
  return v;
}

// Runs the kernel over `in` (padded to whole vectors, as tiles are).
std::vector<uint32_t> run_kernel(MathFn fn, const std::vector<uint32_t>& in, Round r) {
  std::vector<uint32_t> a(in), out(in.size() + kTilePad, 0xDEADBEEFu);
  a.resize(in.size() + kTilePad, 0x7FC00000u);
  for (size_t i = 0; i < in.size(); i += kTile) {
    const int n = static_cast<int>(std::min<size_t>(kTile, in.size() - i));
    fn(a.data() + i, out.data() + i, n, r);
  }
  out.resize(in.size());
  return out;
}

TEST(FastMath, Exp2F32EqualsTheScalarFunctionOnEveryTargetAndMode) {
  const MathFn fn = fast_math(Op::EXP2, DType::Float32, DType::Float32);
  ASSERT_NE(fn, nullptr);
  const std::vector<uint32_t> in = cases();
  const std::string before = simd_target();
  for (const std::string& target : available_simd_targets()) {
    set_simd_target(target);
    for (Round r : kAllRounds) {
      const std::vector<uint32_t> got = run_kernel(fn, in, r);
      int bad = 0;
      for (size_t i = 0; i < in.size() && bad < 10; ++i) {
        const uint32_t want = static_cast<uint32_t>(math::exp2(sf::kF32, in[i], r));
        if (got[i] == want) continue;
        ++bad;
        ADD_FAILURE() << target << ", " << round_name(r) << ": exp2(" << float_of(in[i]) << " = 0x" << std::hex
                      << in[i] << ") gave 0x" << got[i] << ", the scalar function 0x" << want;
      }
    }
  }
  set_simd_target(before);
}

// The kernel really computes: on ordinary arguments almost no lane goes back to the scalar
// function (whose per-thread counters count each call), on every target.
TEST(FastMath, Exp2F32FinishesOrdinaryLanesItself) {
  const MathFn fn = fast_math(Op::EXP2, DType::Float32, DType::Float32);
  std::vector<uint32_t> in;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-100.0, 100.0);
  for (int i = 0; i < 1 << 16; ++i) in.push_back(bits_of(static_cast<float>(u(rng))));
  in.push_back(0xFF800000u);  // -inf: a shortcut of the kernel's own
  const std::string before = simd_target();
  for (const std::string& target : available_simd_targets()) {
    set_simd_target(target);
    math::detail::Stats& s = math::detail::stats();
    s = {};
    run_kernel(fn, in, Round::NearestEven);
    const uint64_t scalar_calls = s.fast + s.accurate + s.special + s.unresolved;
    EXPECT_LT(scalar_calls, in.size() / 1000) << target;
  }
  set_simd_target(before);
}

// The kernel's domain reaches src/math's exact cases and the edges of normal results: in
// round-to-nearest it finishes every integer in (-125, 127), zeros included (y = 2^x exactly, far from any
// midpoint) and the arguments just inside -125 and 127 (no result near a boundary there) itself,
// with no call to the scalar function, on every target; the first test checks their bits.
TEST(FastMath, Exp2F32FinishesIntegersAndDomainEdgesItself) {
  const MathFn fn = fast_math(Op::EXP2, DType::Float32, DType::Float32);
  std::vector<uint32_t> in;
  for (int i = -124; i <= 126; ++i) in.push_back(bits_of(static_cast<float>(i)));  // 0 included
  in.push_back(bits_of(-0.0f));
  for (uint32_t d = 1; d <= 64; ++d) {
    in.push_back(bits_of(-125.0f) - d);  // -125 + d * 2^-17
    in.push_back(bits_of(127.0f) - d);   // 127 - d * 2^-17
  }
  const std::string before = simd_target();
  for (const std::string& target : available_simd_targets()) {
    set_simd_target(target);
    math::detail::Stats& s = math::detail::stats();
    s = {};
    const uint64_t handed = exp2_scalar_lanes();
    const std::vector<uint32_t> got = run_kernel(fn, in, Round::NearestEven);
    EXPECT_EQ(s.fast + s.accurate + s.special + s.unresolved, 0u) << target;
    EXPECT_EQ(exp2_scalar_lanes() - handed, 0u) << target;  // math::exp2 counts no zero
    for (size_t i = 0; i < in.size(); ++i)
      EXPECT_EQ(got[i], static_cast<uint32_t>(math::exp2(sf::kF32, in[i], Round::NearestEven))) << target << " " << i;
  }
  set_simd_target(before);
}

// The binary32 pow kernel (src/cpu/fast_pow.cpp) against math::pow, bit for bit, on every
// target and in every rounding mode: the exponents it computes itself (2 and 3: every base of
// cases(), whose neighbours of the powers of two include exact cubes and midpoints, plus dense
// runs where x^3 lands on binary32 midpoints and subnormal results) and others it hands back.
TEST(FastMath, PowF32EqualsTheScalarFunctionOnEveryTargetAndMode) {
  const MathFn2 fn = fast_math2(Op::POW, DType::Float32, DType::Float32);
  ASSERT_NE(fn, nullptr);
  std::vector<uint32_t> xs = cases();
  xs.resize(xs.size() / 8);  // the special values and sweeps come first
  for (uint32_t m = 1; m < 4096; m += 2)  // odd m with m^3 a 25-bit number: ties at every scale
    for (float s : {1.0f, 0x1p-60f, 0x1p-45f, 0x1p40f}) xs.push_back(bits_of(static_cast<float>(m) * s));
  std::vector<uint32_t> a, b;
  for (float y : {2.0f, 3.0f, -2.0f, 0.5f, 1.0f, 2.5f})  // the others only where the lanes mix
    for (size_t i = 0; i < (y == 2.0f || y == 3.0f ? xs.size() : 3000); ++i) { a.push_back(xs[i]); b.push_back(bits_of(y)); }
  const std::string before = simd_target();
  for (Round r : kAllRounds) {
    std::vector<uint32_t> want(a.size());
    for (size_t i = 0; i < a.size(); ++i) want[i] = static_cast<uint32_t>(math::pow(sf::kF32, a[i], b[i], r));
    for (const std::string& target : available_simd_targets()) {
      set_simd_target(target);
      std::vector<uint32_t> pa(a), pb(b), out(a.size() + kTilePad);
      pa.resize(a.size() + kTilePad, 0);
      pb.resize(b.size() + kTilePad, 0);
      for (size_t i = 0; i < a.size(); i += kTile)
        fn(pa.data() + i, pb.data() + i, out.data() + i, static_cast<int>(std::min<size_t>(kTile, a.size() - i)), r);
      int bad = 0;
      for (size_t i = 0; i < a.size() && bad < 10; ++i) {
        if (out[i] == want[i]) continue;
        ++bad;
        ADD_FAILURE() << target << ", " << round_name(r) << ": pow(" << float_of(a[i]) << ", " << float_of(b[i])
                      << ") gave 0x" << std::hex << out[i] << ", the scalar function 0x" << want[i];
      }
    }
  }
  set_simd_target(before);
}

TEST(FastMath, OnlyFloat32Exp2HasAKernel) {
  EXPECT_EQ(fast_math(Op::EXP2, DType::Float64, DType::Float64), nullptr);
  EXPECT_EQ(fast_math(Op::EXP2, DType::Float16, DType::Float16), nullptr);
  EXPECT_EQ(fast_math(Op::LOG2, DType::Float32, DType::Float32), nullptr);
  EXPECT_EQ(fast_math(Op::ADD, DType::Float32, DType::Float32), nullptr);
  EXPECT_EQ(fast_math2(Op::POW, DType::Float64, DType::Float64), nullptr);
  EXPECT_EQ(fast_math2(Op::ADD, DType::Float32, DType::Float32), nullptr);
}

}  // namespace
}  // namespace maroon::cpu
