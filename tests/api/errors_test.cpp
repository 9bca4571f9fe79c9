// Bad input throws maroon::ShapeError / DTypeError / IndexError naming the op and the shapes.
#include "util.h"

namespace maroon {
namespace {

template <class E, class F>
void expect_error(F f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one mentioning '" << needle << "'";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Errors, NameTheOpAndShapes) {
  Tensor a = Tensor::ones({3, 4}), b = Tensor::ones({5, 6});
  expect_error<ShapeError>([&] { a.reshape({5}); }, "[reshape] cannot reshape (3,4) to (5,)");
  expect_error<ShapeError>([&] { a.matmul(b); }, "[dot] cannot dot (3,4) and (5,6)");
  expect_error<ShapeError>([&] { a + b; }, "(3,4) and (5,6) cannot be broadcast");
  expect_error<ShapeError>([&] { a.cat({b}, 0); }, "[cat]");
  expect_error<ShapeError>([&] { Tensor::ones({1, 2, 5, 5}).conv2d(Tensor::ones({3, 3, 3, 3})); }, "[conv2d]");
  expect_error<ShapeError>([&] { a.gather(0, Tensor::zeros({3}, DType::Int32)); }, "[gather]");
  expect_error<ShapeError>([&] { Tensor::ones({2, 2}).max_pool2d({3, 3}); }, "[pool]");
  expect_error<IndexError>([&] { a[7]; }, "[getitem] index 7 is out of bounds");
  expect_error<IndexError>([&] { a.sum(2); }, "[sum] dim 2 is out of range");
  expect_error<IndexError>([&] { a[{Index(0), Index(0), Index(0)}]; }, "too many indices");
  expect_error<DTypeError>([&] { a.one_hot(3); }, "[one_hot]");
  expect_error<DTypeError>([&] { Tensor::ones({2}, DType::Int32).pow(-1); }, "[pow] base needs to be float");
  expect_error<ShapeError>([&] { a.split(std::vector<int64_t>{1, 1}, 0); }, "[split]");
  expect_error<ShapeError>([&] { a.sparse_categorical_crossentropy(Tensor::zeros({3}, DType::Int32), -1, 2.0); },
                           "label_smoothing");
  expect_error<ShapeError>([&] { a.assign(b); }, "[assign] cannot assign shape (5,6) to (3,4)");
  expect_error<ShapeError>([&] { Tensor::einsum("ij,jk->ik", {a}); }, "[einsum]");
  expect_error<ShapeError>([&] { a.pad({{3, 1}, {0, 0}}, "reflect"); }, "[pad] reflect padding (3, 1)");
  expect_error<ShapeError>([&] { a.pad({{1, 1}, {0, 0}}, "wrap"); }, "[pad] mode 'wrap'");
  // Degenerate windows and groups, found by fuzzing the Python bindings (they used to divide by
  // zero or ask for a vector of negative size).
  Tensor img = Tensor::ones({1, 2, 6, 6});
  expect_error<ShapeError>([&] { img.max_pool2d({0, 2}); }, "[pool] kernel, stride and dilation must be positive");
  expect_error<ShapeError>([&] { img.avg_pool2d({2, 2}, {0}); }, "[pool] kernel, stride and dilation must be positive");
  expect_error<ShapeError>([&] { img.max_pool2d({2, 2}, {}, {0}); }, "must be positive");
  expect_error<ShapeError>([&] { Tensor::ones({4}).max_pool2d({2, 2}); }, "[max_pool2d] input (4,) has fewer axes than the 2");
  expect_error<ShapeError>([&] { Tensor::ones({1, 2, 0, 6}).max_pool2d({1, 1}); }, "[pool]");
  expect_error<ShapeError>([&] { img.conv2d(Tensor::ones({2, 2, 3, 3}), std::nullopt, 0); }, "[conv2d] groups must be positive");
  // Checks the Python binding used to make, now C++'s (one message for each mistake).
  Tensor w = Tensor::ones({2, 2, 3, 3});
  expect_error<ShapeError>([&] { img.conv_transpose2d(w, std::nullopt, 0); }, "[conv_transpose2d] groups must be positive");
  expect_error<ShapeError>([&] { img.conv_transpose2d(w, std::nullopt, 1, {0}); }, "[conv_transpose2d] stride and dilation");
  expect_error<ShapeError>([&] { Tensor::ones({}).max_unpool2d(Tensor::ones({2}, DType::Int32)); },
                           "[max_unpool2d] input () has fewer axes");
  expect_error<ShapeError>([&] { img.max_unpool2d(img.cast(DType::Int32), {2, 2}, {}, {1}, {0}, Shape{3}); },
                           "[max_unpool2d] output_size (3,) has fewer axes");
  expect_error<ShapeError>([&] { img.div(img, "ceil"); }, "[div] rounding_mode='ceil' must be");
  expect_error<ShapeError>([&] { reduction_from_name("avg"); }, "[reduction] reduction='avg'");
}

}  // namespace
}  // namespace maroon
