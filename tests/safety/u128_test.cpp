// The portable 128-bit integer (src/float/u128.h) against the compiler's unsigned __int128, op
// by op on random and edge values: the soft-float core, math and Lagoon use U128 where there is
// no native type (32-bit x86), and it must compute exactly the same bits.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "float/u128.h"

namespace maroon::test {
namespace {

#ifdef __SIZEOF_INT128__
using N = unsigned __int128;

N native(U128 x) { return N{x.hi} << 64 | x.lo; }
U128 portable(N x) { return U128::from_halves(static_cast<uint64_t>(x >> 64), static_cast<uint64_t>(x)); }

std::vector<N> values() {
  std::vector<N> v = {0, 1, 2, 3, ~N{0}, N{1} << 63, N{1} << 64, (N{1} << 64) - 1, N{1} << 127, ~N{0} >> 1,
                      N{0xffffffff}, N{0x100000000}, N{0xffffffffffffffff} * 0xffffffff};
  std::mt19937_64 rng(21);
  for (int i = 0; i < 400; ++i) {
    N x = N{rng()} << 64 | rng();
    int bits = static_cast<int>(rng() % 129);  // all magnitudes, so divisions take every path
    v.push_back(bits == 128 ? x : x & ((N{1} << bits) - 1));
  }
  return v;
}

TEST(U128, EveryOperationMatchesTheNativeType) {
  const std::vector<N> vs = values();
  for (N a : vs) {
    const U128 pa = portable(a);
    ASSERT_EQ(native(pa), a);
    EXPECT_EQ(native(~pa), ~a);
    EXPECT_EQ(native(-pa), -a);
    EXPECT_EQ(static_cast<uint64_t>(pa), static_cast<uint64_t>(a));
    EXPECT_EQ(static_cast<uint32_t>(pa), static_cast<uint32_t>(a));
    EXPECT_EQ(static_cast<bool>(pa), static_cast<bool>(a));
    for (int n = 0; n < 128; ++n) {
      ASSERT_EQ(native(pa << n), a << n) << n;
      ASSERT_EQ(native(pa >> n), a >> n) << n;
    }
    for (N b : vs) {
      const U128 pb = portable(b);
      ASSERT_EQ(native(pa + pb), a + b);
      ASSERT_EQ(native(pa - pb), a - b);
      ASSERT_EQ(native(pa * pb), a * b);
      ASSERT_EQ(native(pa & pb), a & b);
      ASSERT_EQ(native(pa | pb), a | b);
      ASSERT_EQ(native(pa ^ pb), a ^ b);
      ASSERT_EQ(pa == pb, a == b);
      ASSERT_EQ(pa < pb, a < b);
      ASSERT_EQ(pa >= pb, a >= b);
      if (b != 0) {
        ASSERT_EQ(native(pa / pb), a / b);
        ASSERT_EQ(native(pa % pb), a % b);
      }
    }
  }
}

TEST(U128, ConversionsFromIntegersMatch) {
  for (int64_t v : {int64_t{0}, int64_t{1}, int64_t{-1}, INT64_MIN, INT64_MAX, int64_t{-12345}})
    EXPECT_EQ(native(U128(v)), static_cast<N>(v)) << v;
  for (uint64_t v : {uint64_t{0}, UINT64_MAX, uint64_t{1} << 63}) EXPECT_EQ(native(U128(v)), N{v});
  EXPECT_EQ(native(U128(-3)), static_cast<N>(-3));
  EXPECT_EQ(native(U128(true)), N{1});
}
#endif

TEST(U128, WorksWithoutANativeType) {
  // The same checks as above hold by construction on 32-bit builds; a few exact facts anyway.
  U128 max = ~U128{};
  EXPECT_EQ(max + 1, U128{});
  EXPECT_EQ(U128::mul64(UINT64_MAX, UINT64_MAX), U128::from_halves(UINT64_MAX - 1, 1));
  EXPECT_EQ((U128(1) << 100) / (U128(1) << 37), U128(1) << 63);
  EXPECT_EQ(max % 10, U128(5));  // 2^128 - 1 = 340282366920938463463374607431768211455
  EXPECT_EQ(max / U128::from_halves(1, 0), U128(UINT64_MAX));
}

}  // namespace
}  // namespace maroon::test
