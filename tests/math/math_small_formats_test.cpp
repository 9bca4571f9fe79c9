// Every binary16 and bfloat16 input of exp2, log2 and sin, in every rounding mode, bit-exact
// against MPFR (rounded directly to the 16-bit format, not through binary32).
#include "test_util.h"

namespace maroon::mathtest {
namespace {

void exhaustive16(Fn fn, sf::Format f) {
  Comparator c(f);
  for (uint64_t x = 0; x < 65536; ++x) c.check(fn, x);
  EXPECT_EQ(c.mismatches(), 0u);
  EXPECT_EQ(c.checked(), 65536u * 4);
}

TEST(MathF16, Exp2AllInputsAllModes) { exhaustive16(Fn::Exp2, sf::kF16); }
TEST(MathF16, Log2AllInputsAllModes) { exhaustive16(Fn::Log2, sf::kF16); }
TEST(MathF16, SinAllInputsAllModes) { exhaustive16(Fn::Sin, sf::kF16); }
TEST(MathBF16, Exp2AllInputsAllModes) { exhaustive16(Fn::Exp2, sf::kBF16); }
TEST(MathBF16, Log2AllInputsAllModes) { exhaustive16(Fn::Log2, sf::kBF16); }
TEST(MathBF16, SinAllInputsAllModes) { exhaustive16(Fn::Sin, sf::kBF16); }

// Spot checks that do not depend on MPFR.
TEST(MathF16, KnownValues) {
  const sf::Format f = sf::kF16;
  EXPECT_EQ(math::exp2(f, 0x4000 /*2*/, Round::NearestEven), 0x4400u);          // 4
  EXPECT_EQ(math::exp2(f, 0xce00 /*-24*/, Round::Down), 0x0001u);               // min subnormal, exact
  EXPECT_EQ(math::exp2(f, 0xce40 /*-25*/, Round::NearestEven), 0x0000u);        // half of it: tie to even 0
  EXPECT_EQ(math::exp2(f, 0xce40, Round::Up), 0x0001u);
  EXPECT_EQ(math::exp2(f, 0x4c00 /*16*/, Round::NearestEven), 0x7c00u);         // 2^16 overflows
  EXPECT_EQ(math::exp2(f, 0x4c00, Round::TowardZero), 0x7bffu);
  EXPECT_EQ(math::log2(f, 0x4400 /*4*/, Round::Down), 0x4000u);                 // exactly 2
  EXPECT_EQ(math::log2(f, 0x3c00 /*1*/, Round::Down), 0x0000u);                 // +0 in every mode
  EXPECT_EQ(math::sin(f, 0x8000, Round::Up), 0x8000u);                          // sin(-0) = -0
  EXPECT_EQ(math::sin(f, 0x0001, Round::NearestEven), 0x0001u);                 // tiny: sin x rounds to x
  EXPECT_EQ(math::sin(f, 0x0001, Round::TowardZero), 0x0000u);                  // ... but is below x
  EXPECT_EQ(math::sin(f, 0x8001, Round::Up), 0x8000u);                          // -0 toward zero from below
}

}  // namespace
}  // namespace maroon::mathtest
