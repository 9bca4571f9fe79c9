// The soft-float core built with the portable 128-bit integer (MAROON_PORTABLE_U128, as on
// 32-bit x86) against this machine's IEEE hardware: +, *, /, fma and sqrt of random float32 and
// float64 operands (normal, subnormal, special) in all four rounding modes give the same bits
// (NaNs compared as NaNs: the core's are canonical). Linked with its own copy of src/float.
#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <cstring>
#include <random>

#include "float/softfloat.h"

namespace maroon::test {
namespace {

static_assert(std::is_same_v<u128, U128>, "this test must build the core with MAROON_PORTABLE_U128");

template <class T, class B>
B bits_of(T x) {
  B b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
template <class T, class B>
T from_bits(B b) {
  T x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

// Random operands across the exponent range, with specials and subnormals.
template <class B>
B operand(std::mt19937_64& rng, int exp_bits, int man_bits) {
  switch (rng() % 8) {
    case 0: return static_cast<B>(rng() & ((B{1} << man_bits) - 1));                       // subnormal or zero
    case 1: return static_cast<B>((((B{1} << exp_bits) - 1) << man_bits) | (rng() % 3));   // inf or NaN
    default: return static_cast<B>(rng());
  }
}

template <class T, class B>
void check(sf::Format f, int exp_bits, int man_bits) {
  const Round modes[] = {Round::NearestEven, Round::TowardZero, Round::Up, Round::Down};
  const int hw[] = {FE_TONEAREST, FE_TOWARDZERO, FE_UPWARD, FE_DOWNWARD};
  std::mt19937_64 rng(sizeof(T));
  auto same = [](B a, T want) { return std::isnan(want) ? std::isnan(from_bits<T>(a)) : a == bits_of<T, B>(want); };
  for (int m = 0; m < 4; ++m) {
    for (int i = 0; i < 20000; ++i) {
      B a = operand<B>(rng, exp_bits, man_bits), b = operand<B>(rng, exp_bits, man_bits),
        c = operand<B>(rng, exp_bits, man_bits);
      volatile T x = from_bits<T>(a), y = from_bits<T>(b), z = from_bits<T>(c);
      std::fesetround(hw[m]);
      T sum = x + y, prod = x * y, quo = x / y, fused = std::fma(x, y, z), root = std::sqrt(x);
      std::fesetround(FE_TONEAREST);
      ASSERT_TRUE(same(static_cast<B>(sf::add(f, a, b, modes[m])), sum)) << a << " + " << b << " mode " << m;
      ASSERT_TRUE(same(static_cast<B>(sf::mul(f, a, b, modes[m])), prod)) << a << " * " << b << " mode " << m;
      ASSERT_TRUE(same(static_cast<B>(sf::div(f, a, b, modes[m])), quo)) << a << " / " << b << " mode " << m;
      ASSERT_TRUE(same(static_cast<B>(sf::fma(f, a, b, c, modes[m])), fused)) << "fma mode " << m;
      ASSERT_TRUE(same(static_cast<B>(sf::sqrt(f, a, modes[m])), root)) << "sqrt " << a << " mode " << m;
    }
  }
}

TEST(PortableU128, SoftFloatMatchesTheHardwareFloat32) { check<float, uint32_t>(sf::kF32, 8, 23); }
TEST(PortableU128, SoftFloatMatchesTheHardwareFloat64) { check<double, uint64_t>(sf::kF64, 11, 52); }

}  // namespace
}  // namespace maroon::test
