// numel (core/view.h), inline since session 18: one pass that returns 0 at a zero dimension and
// throws only when the product of a shape without one does not fit in 64 bits (a zero after an
// overflowing prefix is still 0, as when the zero was searched for first).
#include <gtest/gtest.h>

#include <cstdint>

#include "core/view.h"
#include "maroon/error.h"

namespace maroon::test {
namespace {

TEST(Numel, ProductsZerosAndOverflow) {
  EXPECT_EQ(numel({}), 1);
  EXPECT_EQ(numel({7}), 7);
  EXPECT_EQ(numel({64, 1, 64}), 4096);
  EXPECT_EQ(numel({3, 0, 5}), 0);
  const int64_t big = int64_t{1} << 40;
  EXPECT_EQ(numel({big, 1 << 22}), big << 22);                 // 2^62 fits
  EXPECT_EQ(numel({big, big, 0}), 0);                           // wraps first, then a zero
  EXPECT_EQ(numel({0, big, big}), 0);
  EXPECT_THROW(numel({big, big}), ShapeError);                  // 2^80
  EXPECT_THROW(numel({big, big, 1}), ShapeError);
  EXPECT_THROW(numel({int64_t{1} << 32, int64_t{1} << 31}), ShapeError);  // 2^63: one past
  try {
    numel({big, big, 3});
    ADD_FAILURE() << "no error";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("[numel]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace maroon::test
