// Bad input raises an exception whose message names the op and the shapes; nothing crashes.
#include <gtest/gtest.h>

#include "../expect_error.h"
#include "util.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

Tensor f32(const Shape& s) { return Tensor::full(s, 1.0, DType::Float32); }

TEST(Errors, ShapesAndArgumentsAreNamed) {
  Tensor a = f32({3, 4});
  expect_error<ShapeError>([&] { a.reshape({5}); }, {"[reshape]", "(3,4)", "(5,)"});
  expect_error<ShapeError>([&] { a.reshape({-1, -1}); }, {"[reshape]", "-1"});
  expect_error<ShapeError>([&] { a.reshape({-1, 5}); }, {"[reshape]", "(3,4)"});
  expect_error<ShapeError>([&] { a.reshape({-2, 6}); }, {"[reshape]", "negative"});
  expect_error<ShapeError>([&] { prim::add(a, f32({5})); }, {"[add]", "(3,4)", "(5,)"});
  expect_error<ShapeError>([&] { prim::mulacc(a, a, f32({2, 4})); }, {"[mulacc]", "(2,4)"});
  expect_error<ShapeError>([&] { prim::where(prim::cmplt(a, a), a, f32({4, 3})); }, {"[where]", "(4,3)"});
  expect_error<ShapeError>([&] { a.permute({0, 0}); }, {"[permute]", "(0,0)", "(3,4)"});
  expect_error<ShapeError>([&] { a.permute({0}); }, {"[permute]", "(3,4)"});
  expect_error<ShapeError>([&] { a.permute({0, 2}); }, {"[permute]"});
  expect_error<ShapeError>([&] { a.pad({{0, 1}}); }, {"[pad]", "(3,4)"});
  expect_error<ShapeError>([&] { a.pad({{0, 1}, {-1, 0}}); }, {"[pad]", "(-1,0)"});
  expect_error<ShapeError>([&] { a.shrink({{0, 4}, {0, 4}}); }, {"[shrink]", "(3,4)"});
  expect_error<ShapeError>([&] { a.shrink({{2, 1}, {0, 4}}); }, {"[shrink]"});
  expect_error<ShapeError>([&] { a.expand({3, 5}); }, {"[expand]", "(3,4)", "(3,5)"});
  expect_error<ShapeError>([&] { a.expand({3, 4, 1}); }, {"[expand]"});
  expect_error<IndexError>([&] { a.flip({2}); }, {"[flip]", "axis 2", "(3,4)"});
  expect_error<ShapeError>([&] { a.flip({1, -1}); }, {"[flip]", "repeated"});
  expect_error<IndexError>([&] { a.reduce(ReduceOp::ADD, {-3}); }, {"[reduce]", "axis -3"});
  expect_error<ShapeError>([&] { Tensor::full({2, -1}, 0, DType::Int8); }, {"[full]", "(2,-1)"});
  std::vector<float> three(3);
  expect_error<ShapeError>([&] { Tensor::from_vector(three, {2, 2}); }, {"[from_bytes]", "(2,2)", "12 bytes"});
}

TEST(Errors, DtypesAreNamed) {
  Tensor f = f32({2});
  Tensor i = Tensor::full({2}, 1, DType::Int32);
  expect_error<DTypeError>([&] { prim::shl(f, f); }, {"[shl]", "float32", "integer"});
  expect_error<DTypeError>([&] { i.exp2(); }, {"[exp2]", "int32", "float"});
  expect_error<DTypeError>([&] { i.sqrt(); }, {"[sqrt]", "int32"});
  expect_error<DTypeError>([&] { prim::pow(i, i); }, {"[pow]", "int32"});
  expect_error<DTypeError>([&] { prim::bitwise_and(f, i); }, {"[and]", "float32"});
  expect_error<DTypeError>([&] { f.bitcast(DType::Int16); }, {"[bitcast]", "float32", "int16"});
  expect_error<DTypeError>([&] { prim::where(f, f, f); }, {"[where]", "bool", "float32"});
  expect_error<DTypeError>([&] { f.to_vector<double>(); }, {"[to_vector]", "float32"});
  expect_error<DTypeError>([&] { dtype_from_name("float8"); }, {"[dtype]", "float8"});
}

// Edge shapes work: zero-size tensors, scalars (rank 0), size-1 broadcasting.
TEST(Errors, EdgeShapesAreFine) {
  Tensor z = f32({0, 3});
  EXPECT_EQ(prim::add(z, f32({3})).shape(), (Shape{0, 3}));
  EXPECT_TRUE(prim::add(z, 1.0).bits().empty());
  EXPECT_EQ(z.reduce(ReduceOp::ADD, {0}).shape(), (Shape{1, 3}));
  EXPECT_EQ(z.reduce(ReduceOp::MAX, {0}).to_vector<float>(), std::vector<float>(3, -INFINITY));
  Tensor s = Tensor::full({}, 2.5);
  EXPECT_EQ(s.ndim(), 0);
  EXPECT_EQ(prim::mul(s, f32({2, 2})).to_vector<float>(), std::vector<float>(4, 2.5f));
  EXPECT_EQ(s.reshape({1, 1}).shape(), (Shape{1, 1}));
  EXPECT_EQ(f32({2, 1}).expand({2, 0}).numel(), 0);
}

}  // namespace
}  // namespace maroon::test
