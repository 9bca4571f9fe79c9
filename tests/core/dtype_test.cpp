// tinygrad's promotion lattice and accumulator dtypes (../shared/reference/tinygrad.md §6).
#include <gtest/gtest.h>

#include "util.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

using enum DType;

TEST(DTypes, LeastUpperDtypeMatchesTinygrad) {
  EXPECT_EQ(least_upper_dtype(Int8, UInt8), Int16);
  EXPECT_EQ(least_upper_dtype(Int32, Float16), Float16);
  EXPECT_EQ(least_upper_dtype(Float16, BFloat16), Float32);
  EXPECT_EQ(least_upper_dtype(Int64, UInt64), WeakFloat);
  EXPECT_EQ(concrete(least_upper_dtype(Int64, UInt64)), Float32);
  EXPECT_EQ(least_upper_dtype(Int8, WeakInt), Int8);
  EXPECT_EQ(least_upper_dtype(UInt16, WeakInt), UInt16);
  EXPECT_EQ(least_upper_dtype(Int32, WeakFloat), WeakFloat);
  EXPECT_EQ(least_upper_dtype(Float16, WeakFloat), Float16);
  EXPECT_EQ(least_upper_dtype(Bool, WeakInt), WeakInt);
  EXPECT_EQ(least_upper_dtype(Bool, Bool), Bool);
  EXPECT_EQ(least_upper_dtype(UInt32, Int32), Int64);
  EXPECT_EQ(least_upper_dtype(UInt8, UInt16), UInt16);
  EXPECT_EQ(least_upper_dtype(Float64, Int8), Float64);
  EXPECT_EQ(least_upper_dtype(Bool, Float16), Float16);
}

TEST(DTypes, LatticeIsSymmetricAndIdempotent) {
  for (DType a : kConcreteDTypes) {
    EXPECT_EQ(least_upper_dtype(a, a), a);
    for (DType b : kConcreteDTypes) EXPECT_EQ(least_upper_dtype(a, b), least_upper_dtype(b, a));
  }
}

// least_upper_dtype answers from a table built once from the lattice walk: every pair, weak
// dtypes included, as the walk gave it (printed from the walk before the table replaced it).
TEST(DTypes, LeastUpperDtypeEveryPair) {
  const int want[15][15] = {
      {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14},
      {1, 1, 3, 3, 5, 5, 7, 7, 14, 9, 10, 11, 12, 1, 14},
      {2, 3, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 2, 14},
      {3, 3, 3, 3, 5, 5, 7, 7, 14, 9, 10, 11, 12, 3, 14},
      {4, 5, 4, 5, 4, 5, 6, 7, 8, 9, 10, 11, 12, 4, 14},
      {5, 5, 5, 5, 5, 5, 7, 7, 14, 9, 10, 11, 12, 5, 14},
      {6, 7, 6, 7, 6, 7, 6, 7, 8, 9, 10, 11, 12, 6, 14},
      {7, 7, 7, 7, 7, 7, 7, 7, 14, 9, 10, 11, 12, 7, 14},
      {8, 14, 8, 14, 8, 14, 8, 14, 8, 9, 10, 11, 12, 8, 14},
      {9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 11, 11, 12, 9, 9},
      {10, 10, 10, 10, 10, 10, 10, 10, 10, 11, 10, 11, 12, 10, 10},
      {11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 12, 11, 11},
      {12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12},
      {13, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14},
      {14, 14, 14, 14, 14, 14, 14, 14, 14, 9, 10, 11, 12, 14, 14}
  };
  for (int i = 0; i < 15; ++i)
    for (int j = 0; j < 15; ++j)
      EXPECT_EQ(static_cast<int>(least_upper_dtype(static_cast<DType>(i), static_cast<DType>(j))), want[i][j])
          << i << " " << j;
}

TEST(DTypes, SumAccumulators) {
  EXPECT_EQ(sum_acc_dtype(UInt8), UInt32);
  EXPECT_EQ(sum_acc_dtype(UInt64), UInt64);
  EXPECT_EQ(sum_acc_dtype(Int8), Int32);
  EXPECT_EQ(sum_acc_dtype(Bool), Int32);
  EXPECT_EQ(sum_acc_dtype(Int64), Int64);
  EXPECT_EQ(sum_acc_dtype(Float16), Float32);
  EXPECT_EQ(sum_acc_dtype(BFloat16), Float32);
  EXPECT_EQ(sum_acc_dtype(Float64), Float64);
}

TEST(DTypes, BinaryOpsPromoteAndScalarsAreWeak) {
  Tensor i8 = Tensor::full({2}, 1, Int8), u8 = Tensor::full({2}, 1, UInt8);
  EXPECT_EQ(prim::add(i8, u8).dtype(), Int16);
  EXPECT_EQ(prim::add(i8, 1.5).dtype(), Float32);
  EXPECT_EQ(prim::mul(Tensor::full({1}, 1.0, Float16), 2.5).dtype(), Float16);
  EXPECT_EQ(prim::add(Tensor::full({1}, true, Bool), 1).dtype(), Int32);
  EXPECT_EQ(prim::cmplt(i8, u8).dtype(), Bool);
  for (DType d : kConcreteDTypes) EXPECT_EQ(dtype_from_name(dtype_name(d)), d);
}

}  // namespace
}  // namespace maroon::test
