// pow: C99 special cases, exact cases (including exact midpoints), and samples in every mode,
// bit-exact against MPFR, for binary32, binary16 and bfloat16.
#include <cmath>

#include "test_util.h"

namespace maroon::mathtest {
namespace {

uint64_t to(sf::Format f, double v) { return sf::convert(sf::kF64, f, f64(v), Round::NearestEven); }

void pow_samples(sf::Format f, int n, uint64_t seed) {
  Comparator c(f);
  Rng rng{seed};
  const uint64_t mask = f.bits == 64 ? ~uint64_t{0} : (uint64_t{1} << f.bits) - 1;
  auto uni = [&](double lo, double hi) { return lo + (hi - lo) * double(rng.next() >> 11) * 0x1p-53; };
  for (int i = 0; i < n; ++i) {
    uint64_t x, y;
    switch (i % 6) {
      case 0: x = rng.next() & mask; y = rng.next() & mask; break;                       // anything
      case 1: x = to(f, uni(0, 10)); y = to(f, uni(-20, 20)); break;                      // moderate
      case 2: x = to(f, double(rng.next() % 64) / 4 * ((rng.next() & 1) ? -1 : 1));      // exact-ish
              y = to(f, double(int(rng.next() % 80) - 40) / 8); break;
      case 3: x = to(f, 1.0 + uni(-1e-3, 1e-3)); y = rng.next() & mask; break;            // near 1
      case 4: x = to(f, double(rng.next() % 1000) / double(1 << (rng.next() % 12)));
              y = to(f, double(int(rng.next() % 33) - 16) / double(1 << (rng.next() % 6))); break;
      default: x = rng.next() & mask; y = to(f, double(int(rng.next() % 200) - 100)); break;  // integer y
    }
    c.check(Fn::Pow, x, y);
  }
  EXPECT_EQ(c.mismatches(), 0u);
}

TEST(MathPow, F32Samples) { pow_samples(sf::kF32, 120000, 11); }
TEST(MathPow, F16Samples) { pow_samples(sf::kF16, 60000, 12); }
TEST(MathPow, BF16Samples) { pow_samples(sf::kBF16, 60000, 13); }

TEST(MathPow, F32ExactCases) {
  Comparator c(sf::kF32);
  const float cases[][2] = {
      {2, 10}, {9, 0.5f}, {0.25f, 1.5f}, {-2, 3}, {-2, -3}, {4, -0.5f}, {16, 0.25f}, {81, 0.75f},
      {3, 20}, {10, 10}, {5, 11}, {0.5f, 149}, {0.5f, 150}, {0.5f, 151}, {2, -149}, {2, -150},
      {2, 127}, {2, 128}, {-2, 127}, {-2, 128}, {4097, 2}, {4095, 2}, {1.5f, 2}, {-1.5f, 3},
      {1.000244140625f, 2}, {1.000244140625f, 3}, {0.999755859375f, 2}, {6561, 0.25f}, {6561, 0.125f},
      {1679616, 0.25f}, {0x1p-100f, 0.5f}, {0x1p-100f, 1.25f}, {0x1p-100f, -1.5f}, {8, 1.0f / 3},
      {3, 0.5f}, {2, 0.5f}, {1024, 0.1f}, {0x1p120f, 1.0625f}, {49, -0.5f}, {25, 1.5f}, {-8, 2},
      {-0.5f, -149}, {-0.5f, -127}, {65536, 8}, {65536, 7.9375f}, {7, 12}, {7, 13}, {3, 40}, {3, 80},
  };
  for (auto& p : cases) c.check(Fn::Pow, f32(p[0]), f32(p[1]));
  EXPECT_EQ(c.mismatches(), 0u);
  // A few by hand.
  EXPECT_EQ(math::pow(sf::kF32, f32(2.0f), f32(10.0f), Round::NearestEven), f32(1024.0f));
  EXPECT_EQ(math::pow(sf::kF32, f32(9.0f), f32(0.5f), Round::Down), f32(3.0f));
  EXPECT_EQ(math::pow(sf::kF32, f32(0.25f), f32(1.5f), Round::Up), f32(0.125f));
  EXPECT_EQ(math::pow(sf::kF32, f32(-2.0f), f32(3.0f), Round::TowardZero), f32(-8.0f));
  // 4097^2 = 2^24 + 2^13 + 1 lies exactly halfway between two floats.
  EXPECT_EQ(math::pow(sf::kF32, f32(4097.0f), f32(2.0f), Round::NearestEven), f32(16785408.0f));
  EXPECT_EQ(math::pow(sf::kF32, f32(4097.0f), f32(2.0f), Round::Up), f32(16785410.0f));
}

TEST(MathPow, F32SpecialCases) {
  const sf::Format f = sf::kF32;
  const uint64_t nan = sf::canonical_nan(f), snan = 0x7f800001, qnan = 0xffc00000;
  const uint64_t pinf = 0x7f800000, ninf = 0xff800000, pz = 0, nz = 0x80000000;
  const uint64_t one = f32(1.0f);
  for (Round r : kAllRounds) {
    auto p = [&](uint64_t x, uint64_t y) { return math::pow(f, x, y, r); };
    for (uint64_t x : {qnan, snan, pinf, ninf, pz, nz, f32(-3.5f), f32(2.0f)}) {
      EXPECT_EQ(p(x, pz), one);  // pow(x, +-0) = 1, even for NaN
      EXPECT_EQ(p(x, nz), one);
    }
    for (uint64_t y : {qnan, snan, pinf, ninf, f32(-3.5f), f32(7.0f)}) EXPECT_EQ(p(one, y), one);
    EXPECT_EQ(p(f32(-1.0f), pinf), one);
    EXPECT_EQ(p(f32(-1.0f), ninf), one);
    EXPECT_EQ(p(qnan, f32(2.0f)), nan);
    EXPECT_EQ(p(f32(2.0f), snan), nan);
    EXPECT_EQ(p(f32(-2.0f), f32(0.5f)), nan);     // negative base, non-integer exponent
    EXPECT_EQ(p(f32(-1.0f), f32(1.5f)), nan);
    EXPECT_EQ(p(ninf, f32(0.5f)), pinf);          // but -inf is not finite: +inf
    EXPECT_EQ(p(f32(-2.0f), f32(3.0f)), f32(-8.0f));  // odd integer keeps the sign
    EXPECT_EQ(p(f32(-2.0f), f32(2.0f)), f32(4.0f));
    EXPECT_EQ(p(pz, f32(-3.0f)), pinf);           // +-0, odd negative: +-inf
    EXPECT_EQ(p(nz, f32(-3.0f)), ninf);
    EXPECT_EQ(p(nz, f32(-2.0f)), pinf);           // +-0, other negative: +inf
    EXPECT_EQ(p(nz, f32(-0.5f)), pinf);
    EXPECT_EQ(p(nz, ninf), pinf);
    EXPECT_EQ(p(pz, f32(3.0f)), pz);              // +-0, odd positive: +-0
    EXPECT_EQ(p(nz, f32(3.0f)), nz);
    EXPECT_EQ(p(nz, f32(2.0f)), pz);              // +-0, other positive: +0
    EXPECT_EQ(p(nz, f32(0.5f)), pz);
    EXPECT_EQ(p(nz, pinf), pz);
    EXPECT_EQ(p(f32(0.5f), ninf), pinf);          // |x| < 1
    EXPECT_EQ(p(f32(-0.5f), pinf), pz);
    EXPECT_EQ(p(f32(2.0f), ninf), pz);            // |x| > 1
    EXPECT_EQ(p(f32(-2.0f), pinf), pinf);
    EXPECT_EQ(p(ninf, f32(-3.0f)), nz);           // -inf: odd negative -0, odd positive -inf
    EXPECT_EQ(p(ninf, f32(-2.0f)), pz);
    EXPECT_EQ(p(ninf, f32(3.0f)), ninf);
    EXPECT_EQ(p(ninf, f32(2.0f)), pinf);
    EXPECT_EQ(p(pinf, f32(-0.5f)), pz);
    EXPECT_EQ(p(pinf, f32(0.5f)), pinf);
    EXPECT_EQ(p(pinf, pinf), pinf);
    EXPECT_EQ(p(pinf, ninf), pz);
  }
  // And all of them against MPFR (which implements C99's pow special cases).
  const uint64_t vals[] = {qnan, snan, pinf, ninf, pz, nz, one, f32(-1.0f), f32(0.5f), f32(-0.5f),
                           f32(2.0f), f32(-2.0f), f32(3.0f), f32(-3.0f), f32(0.25f), f32(-7.5f), 1,
                           0x80000001, 0x7f7fffff, 0xff7fffff};
  Comparator c(f);
  for (uint64_t x : vals)
    for (uint64_t y : vals) c.check(Fn::Pow, x, y);
  EXPECT_EQ(c.mismatches(), 0u);
}

TEST(MathPow, SmallFormatExactCases) {
  for (sf::Format f : {sf::kF16, sf::kBF16}) {
    Comparator c(f);
    const double cases[][2] = {{2, 10}, {9, 0.5}, {0.25, 1.5}, {-2, 3}, {3, 7}, {65, 2}, {257, 2},
                               {0.5, 24}, {0.5, 25}, {0.5, 26}, {2, 15}, {2, 16}, {2, 127}, {2, 128},
                               {0.5, 133}, {0.5, 134}, {-3, 5}, {33, 2}, {17, 2}};
    for (auto& p : cases) c.check(Fn::Pow, to(f, p[0]), to(f, p[1]));
    EXPECT_EQ(c.mismatches(), 0u);
  }
}

}  // namespace
}  // namespace maroon::mathtest
