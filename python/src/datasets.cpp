// maroon.nn.datasets' reader: the C++ IDX loader (maroon::data::load_mnist, which checks shapes,
// dtypes, counts and labels) with its splits as numpy arrays; the Python side makes the Tensors.
#include "bind.h"
#include "maroon/datasets.h"

namespace maroon::py_bind {

namespace {
py::array_t<uint8_t> array_of(const std::vector<uint8_t>& bytes, std::vector<py::ssize_t> shape) {
  py::array_t<uint8_t> a(shape);
  std::copy(bytes.begin(), bytes.end(), a.mutable_data());
  return a;
}
}  // namespace

void bind_datasets(py::module_ m) {
  m.def("load_mnist", [](const std::string& dir) {
    data::Mnist d = data::load_mnist(dir);
    auto split = [](const data::Split& s) {
      return py::make_tuple(array_of(s.images, {s.n, 1, 28, 28}), array_of(s.labels, {s.n}));
    };
    return py::make_tuple(split(d.train), split(d.test));
  }, py::arg("dir"));
}

}  // namespace maroon::py_bind
