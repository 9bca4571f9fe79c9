// binary32 exp2, log2, sin: a stratified sample over every exponent (both signs), the hardest
// cases found by scanning (results within 2^-24..2^-30 ulp of a rounding boundary), exact cases
// and special values, all four modes, bit-exact against MPFR. tools/math-check covers all 2^32.
#include "math/internal.h"
#include "test_util.h"

namespace maroon::mathtest {
namespace {

constexpr int kPerBinade = 600;  // x 256 exponents x 2 signs = 307200 inputs per function

void sample32(Fn fn, uint64_t seed) {
  const uint64_t unresolved = math::detail::stats().unresolved;
  Comparator c(sf::kF32);
  Rng rng{seed};
  for (uint32_t e = 0; e < 256; ++e)
    for (uint32_t s = 0; s < 2; ++s)
      for (int i = 0; i < kPerBinade; ++i) {
        uint32_t m = static_cast<uint32_t>(rng.next()) & 0x7fffff;
        if (i == 0) m = 0;
        if (i == 1) m = 0x7fffff;
        if (i == 2) m = 1;
        c.check(fn, (s << 31) | (e << 23) | m);
      }
  EXPECT_EQ(c.mismatches(), 0u);
  // The double-double path always decided (no result came from an undecided approximation).
  EXPECT_EQ(math::detail::stats().unresolved, unresolved);
}

TEST(MathF32, Exp2Sample) { sample32(Fn::Exp2, 1); }
TEST(MathF32, Log2Sample) { sample32(Fn::Log2, 2); }
TEST(MathF32, SinSample) { sample32(Fn::Sin, 3); }

// Dense sweeps of the busiest regions.
TEST(MathF32, Exp2Dense) {
  Comparator c(sf::kF32);
  for (uint64_t x = 0x42f00000; x < 0x43200000; x += 61) c.check(Fn::Exp2, x);        // 120 .. 160
  for (uint64_t x = 0xc2f00000; x < 0xc3200000; x += 61) c.check(Fn::Exp2, x);        // -120 .. -160
  for (int k = -160; k <= 160; ++k) {  // integers: exact powers of two, subnormal, overflow
    c.check(Fn::Exp2, f32(float(k)));
    c.check(Fn::Exp2, f32(float(k)) + 1);
    c.check(Fn::Exp2, f32(float(k)) - 1);
  }
  EXPECT_EQ(c.mismatches(), 0u);
}

TEST(MathF32, SinDense) {
  Comparator c(sf::kF32);
  for (uint64_t x = 0x3f000000; x < 0x41000000; x += 97) c.check(Fn::Sin, x);          // 0.5 .. 8
  for (uint64_t x = 0x38000000; x < 0x3a000000; x += 997) c.check(Fn::Sin, x);         // the tiny edge
  for (int k = 1; k < 2000; ++k) {  // next to multiples of pi/2
    uint64_t b = f32(float(k * 1.5707963267948966));
    for (int d = -3; d <= 3; ++d) c.check(Fn::Sin, b + d);
  }
  EXPECT_EQ(c.mismatches(), 0u);
}

TEST(MathF32, HardCases) {
  Comparator c(sf::kF32);
  const uint32_t exp2_hard[] = {0x3fa5a5d7, 0x3fe69390, 0x3f9260bd, 0x3f800b8b, 0x3f89e147, 0xbfda5a29,
                                0xbf996c70, 0xbfed9f43, 0xbffff475, 0xbff61eb9, 0x3c02a9ad, 0x3c211299,
                                0x3c5cdaa2, 0x3c0a342c, 0x3c320601, 0x3c21dca2};
  const uint32_t log2_hard[] = {0x3fa07ab9, 0x3feddffd, 0x3f8cba39, 0x3ff07492, 0x3fff7307, 0x3fe485eb,
                                0x3f207ab9, 0x3f442160, 0x3f7e3274, 0x3f0d64de, 0x3f26a4a6, 0x5f114a90,
                                0x5f431c85, 0x5f6b8090, 0x5f174467, 0x5f25fc89, 0x00914a90, 0x00431c85,
                                0x006b8090, 0x00974467, 0x0056e57b, 0x6b431c85, 0x036b8090};
  const uint32_t sin_hard[] = {0x3d0650ea, 0x3d371d55, 0x3d33d97f, 0x3d568332, 0x3d46c7af, 0x3d25a8b4,
                               0x3fa7832a, 0x3fc90fdb, 0x3fa0fa4e, 0x3fc90fda, 0x3f86b3d2, 0x3fb53172,
                               0x450be628, 0x4507eba4, 0x451e714d, 0x4572d425, 0x45675c9a, 0x454947ab,
                               0x6c55da58, 0x6c141dd3, 0x6c358810, 0x6c602de6, 0x6c581d3e, 0x6c6262f3,
                               0x7f7fffff, 0x7f000000, 0x5e800000, 0x4b800000, 0x40490fdb, 0x40c90fdb};
  for (uint32_t x : exp2_hard) { c.check(Fn::Exp2, x); c.check(Fn::Exp2, x ^ 0x80000000u); }
  for (uint32_t x : log2_hard) c.check(Fn::Log2, x);
  for (uint32_t x : sin_hard) { c.check(Fn::Sin, x); c.check(Fn::Sin, x ^ 0x80000000u); }
  EXPECT_EQ(c.mismatches(), 0u);
}

TEST(MathF32, SpecialValues) {
  const uint64_t specials[] = {0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000,
                               0x7f800001, 0x7fbfffff, 0xff812345, 0x00000001, 0x80000001, 0x007fffff,
                               0x00800000, 0x7f7fffff, 0xff7fffff, 0x3f800000, 0xbf800000, 0x3f7fffff,
                               0x3f800001, 0x33800000, 0x33000000, 0xb3000000, 0x39800000, 0x39000000};
  Comparator c(sf::kF32);
  for (Fn fn : {Fn::Exp2, Fn::Log2, Fn::Sin})
    for (uint64_t x : specials) c.check(fn, x);
  EXPECT_EQ(c.mismatches(), 0u);
  const uint64_t nan = sf::canonical_nan(sf::kF32);
  for (Round r : kAllRounds) {
    EXPECT_EQ(math::exp2(sf::kF32, 0xff800000, r), 0u);            // 2^-inf = +0
    EXPECT_EQ(math::exp2(sf::kF32, 0x7f800000, r), 0x7f800000u);    // 2^inf = inf
    EXPECT_EQ(math::exp2(sf::kF32, 0x7f800123, r), nan);
    EXPECT_EQ(math::log2(sf::kF32, 0x80000000, r), 0xff800000u);    // log2(-0) = -inf
    EXPECT_EQ(math::log2(sf::kF32, 0x00000000, r), 0xff800000u);
    EXPECT_EQ(math::log2(sf::kF32, 0xbf800000, r), nan);            // log2(-1)
    EXPECT_EQ(math::log2(sf::kF32, 0xff800000, r), nan);
    EXPECT_EQ(math::log2(sf::kF32, 0x7f800000, r), 0x7f800000u);
    EXPECT_EQ(math::log2(sf::kF32, 0x3f800000, r), 0u);             // +0 in every mode
    EXPECT_EQ(math::log2(sf::kF32, 0x00000001, r), f32(-149.0f));   // exact
    EXPECT_EQ(math::sin(sf::kF32, 0x7f800000, r), nan);
    EXPECT_EQ(math::sin(sf::kF32, 0xff800000, r), nan);
    EXPECT_EQ(math::sin(sf::kF32, 0xffc00001, r), nan);
    EXPECT_EQ(math::sin(sf::kF32, 0x80000000, r), 0x80000000u);
    EXPECT_EQ(math::exp2(sf::kF32, f32(-149.0f), r), 1u);           // exact min subnormal
    EXPECT_EQ(math::exp2(sf::kF32, f32(127.0f), r), f32(0x1p127f));
  }
  // exp2(128) overflows: inf or max-finite by mode.
  EXPECT_EQ(math::exp2(sf::kF32, f32(128.0f), Round::NearestEven), 0x7f800000u);
  EXPECT_EQ(math::exp2(sf::kF32, f32(128.0f), Round::Up), 0x7f800000u);
  EXPECT_EQ(math::exp2(sf::kF32, f32(128.0f), Round::TowardZero), 0x7f7fffffu);
  EXPECT_EQ(math::exp2(sf::kF32, f32(128.0f), Round::Down), 0x7f7fffffu);
  // exp2(-150) is half the smallest subnormal: a tie, to even (0); up gives the subnormal.
  EXPECT_EQ(math::exp2(sf::kF32, f32(-150.0f), Round::NearestEven), 0u);
  EXPECT_EQ(math::exp2(sf::kF32, f32(-150.0f), Round::Up), 1u);
  // Tiny x: exp2(x) is just above 1, sin(x) just below x in magnitude.
  EXPECT_EQ(math::exp2(sf::kF32, 0x00000001, Round::Up), 0x3f800001u);
  EXPECT_EQ(math::exp2(sf::kF32, 0x00000001, Round::NearestEven), 0x3f800000u);
  EXPECT_EQ(math::exp2(sf::kF32, 0x80000001, Round::Down), 0x3f7fffffu);
  EXPECT_EQ(math::sin(sf::kF32, 0x33800000, Round::NearestEven), 0x33800000u);
  EXPECT_EQ(math::sin(sf::kF32, 0x33800000, Round::TowardZero), 0x337fffffu);
  EXPECT_EQ(math::sin(sf::kF32, 0xb3800000, Round::Up), 0xb37fffffu);
  EXPECT_EQ(math::sin(sf::kF32, 0xb3800000, Round::Down), 0xb3800000u);
}

}  // namespace
}  // namespace maroon::mathtest
