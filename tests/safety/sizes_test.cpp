// Checked sizes (issue 21): every shape, stride, element count and byte size that does not fit
// in 64 bits is a ShapeError naming the op and the values; a buffer over the allocation cap is a
// MemoryError naming the op and the shape; NaN or infinite arguments that set a size are errors.
#include <cmath>
#include <limits>

#include "core/checked.h"
#include "core/view.h"
#include "maroon/backend.h"
#include "maroon/maroon.h"
#include "util.h"

namespace maroon::test {
namespace {

constexpr int64_t k32 = int64_t{1} << 32, k40 = int64_t{1} << 40, k62 = int64_t{1} << 62;

TEST(Sizes, CheckedArithmeticFollowsNumpysRule) {
  EXPECT_TRUE(checked::fits({k40, k40 >> 18}));  // 2^62 elements of one byte
  EXPECT_FALSE(checked::fits({k40, k40 >> 18}, 2));
  EXPECT_FALSE(checked::fits({k32, k32}));
  EXPECT_FALSE(checked::fits({0, k40, k40}));  // a zero does not excuse the other dimensions
  EXPECT_FALSE(checked::fits({3, -1}));
  EXPECT_TRUE(checked::fits({0, k40}));
  int64_t r;
  EXPECT_FALSE(checked::mul(k32, k32, r));
  EXPECT_FALSE(checked::add(INT64_MAX, 1, r));
  EXPECT_TRUE(checked::mul(-k32, k32 / 2, r));
  EXPECT_EQ(r, INT64_MIN);
  expect_error<ShapeError>([] { mul_or_throw("pad", "offset change", k62, 4); },
                           {"[pad]", "offset change", "4611686018427387904*4"});
}

TEST(Sizes, ShapesThatDoNotFitAreShapeErrors) {
  Tensor one = Tensor::ones({1, 1});
  // ones(1,1).expand(2**32, 2**32).sum() returned 0.0: numel wrapped to zero.
  expect_error<ShapeError>([&] { one.expand({k32, k32}); }, {"[expand]", "(4294967296,4294967296)", "float32"});
  expect_error<ShapeError>([&] { Tensor::ones({2}).pad({{k62, k62}}); },
                           {"[pad]", "((4611686018427387904,4611686018427387904))", "(2,)"});
  expect_error<ShapeError>([&] { Tensor::full({0, k40, k40}, 0, DType::UInt8); }, {"[full]", "(0,1099511627776,1099511627776)"});
  expect_error<ShapeError>([&] { Tensor::zeros({k32, k32}); }, {"(4294967296,4294967296)"});
  expect_error<ShapeError>([&] { Tensor::from_bytes(nullptr, 0, {0, k40, k40}, DType::Float32); }, {"[from_bytes]"});
  expect_error<ShapeError>([&] { Tensor::ones({4}).reshape({k32, k32, 0}); }, {"[reshape]"});
  expect_error<ShapeError>([&] { Tensor::ones({0}).reshape({k32, k32, 0}); }, {"[reshape]", "(4294967296,4294967296,0)"});
  expect_error<ShapeError>([&] { Tensor::rand({k32, k32}); }, {"(4294967296,4294967296)"});
  // A huge but representable view is fine; only what does not fit is refused.
  Tensor big = Tensor::ones({1}, DType::UInt8).expand({k62});
  EXPECT_EQ(big.numel(), k62);
  EXPECT_EQ(big.nbytes(), k62);
}

TEST(Sizes, ViewOffsetsThatRunOutOfBitsAreShapeErrors) {
  // Padding by 2^61 and keeping only padding moves the view's offset by -2^61 each time: the
  // fifth time it would leave int64.
  ShapeTracker t = ShapeTracker::contiguous({2});
  expect_error<ShapeError>([&] {
    for (int i = 0; i < 8; ++i) t = t.pad({{int64_t{1} << 61, 0}}).shrink({{0, 2}});
  }, {"[pad]", "view offset"});
}

TEST(Sizes, ArangeAndLinspaceRefuseSizesTheyCannotHave) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  expect_error<ShapeError>([&] { Tensor::arange(0.0, nan, 1.0); }, {"[arange]", "finite", "nan"});
  expect_error<ShapeError>([&] { Tensor::arange(0.0, inf, 1.0); }, {"[arange]", "inf"});
  expect_error<ShapeError>([&] { Tensor::arange(0.0, 1.0, nan); }, {"[arange]", "nan"});
  expect_error<ShapeError>([&] { Tensor::arange(0.0, 1.0, 1e-300); }, {"[arange]", "more than fit in 64 bits"});
  expect_error<ShapeError>([&] { Tensor::arange(Scalar(0), Scalar(k62), Scalar(1)); }, {"[arange]", "(4611686018427387904,)", "int64"});
  expect_error<ShapeError>([&] { Tensor::linspace(0, 1, k62); }, {"[linspace]", "(4611686018427387904,)"});
  // Integer arange at the bottom of int64: start - step leaves int64 and wraps back (it was
  // signed overflow). The count is tinygrad's, ceil((stop - start) / step) in doubles, exact here.
  Tensor a = Tensor::arange(Scalar(INT64_MIN), Scalar(INT64_MIN + 3 * 4096), Scalar(4096));
  EXPECT_EQ(a.to_vector<int64_t>(), (std::vector<int64_t>{INT64_MIN, INT64_MIN + 4096, INT64_MIN + 8192}));
}

TEST(Sizes, BuffersOverTheCapAreMemoryErrorsNamingTheOp) {
  Tensor t = Tensor::full({1 << 20}, 1, DType::Int32) + 1;  // a constant needs 1 element; the sum 4 MiB
  {
    ScopedEnv cap("MAROON_MAX_ALLOC_BYTES", std::to_string(1 << 20));
    expect_error<MemoryError>([&] { t.realize(); }, {"[add]", "4194304 bytes", "int32", "(1048576,)", "MAROON_MAX_ALLOC_BYTES"});
    // Reading a huge view holds every element: refused before any allocation.
    expect_error<MemoryError>([] { Tensor::ones({1}).expand({k40}).bits(); }, {"[read]", "(1099511627776,)"});
  }
  // The failed realize left the graph consistent: with the cap lifted it computes.
  std::vector<int32_t> v = t.to_vector<int32_t>();
  ASSERT_EQ(v.size(), size_t{1} << 20);
  EXPECT_EQ(v, std::vector<int32_t>(size_t{1} << 20, 2));
}

TEST(Sizes, SixteenBitIntegerMultiplyWraps) {
  // UBSan found uint16 * uint16 promoted to int (65535 * 65535 overflows int) in the CPU kernel.
  for (Backend b : {Backend::Cpu, Backend::Ref}) {
    Backend old = backend();
    set_backend(b);
    Tensor x = Tensor::from_vector<uint16_t>({65535, 65535, 40000}, {3});
    Tensor y = Tensor::from_vector<uint16_t>({65535, 2, 40000}, {3});
    EXPECT_EQ((x * y).to_vector<uint16_t>(), (std::vector<uint16_t>{1, 65534, static_cast<uint16_t>(40000u * 40000u)}));
    Tensor s = Tensor::from_vector<int16_t>({-32768, 32767}, {2});
    EXPECT_EQ((s * s).to_vector<int16_t>(), (std::vector<int16_t>{0, 1}));
    set_backend(old);
  }
}

}  // namespace
}  // namespace maroon::test
