// Reductions, scans and sorting, with tinygrad's axis=None|int|tuple and keepdim arguments.
#include "bind.h"
#include "fast_methods.h"

namespace maroon::py_bind {

namespace {

// tinygrad's _inverse: the order-reversing map cummin runs cummax on.
Tensor inverse(const Tensor& x) {
  if (x.is_floating_point()) return x.neg();
  return is_int(x.dtype()) ? x.bitwise_not() : x.logical_not();
}

// tinygrad reads a 0-d tensor's axis as a 1-d one's: only 0 and -1 exist.
void check_0d_axis(const Tensor& x, int64_t axis, const char* op) {
  if (x.ndim() == 0 && axis != 0 && axis != -1)
    throw IndexError(std::string("[") + op + "] dim " + std::to_string(axis) + " is out of range [-1, 0]");
}

// x.sum() without arguments, the common call (a loss, a small op): no pybind11 dispatch.
PyObject* sum_all(PyObject* self) {
  return call_guarded([&] {
    const Tensor& x = py::handle(self).cast<const Tensor&>();
    return py::cast(x.sum(axis_arg(py::none()), false, std::nullopt)).release().ptr();
  });
}

}  // namespace

void bind_reduce(py::class_<Tensor>& t) {
  auto ax = py::arg("axis") = py::none();
  auto kd = py::arg("keepdim") = false;
  t.def("sum", [](const Tensor& x, const py::object& a, bool k, const py::object& d) { return x.sum(axis_arg(a), k, dtype_arg(d)); },
        ax, kd, py::arg("dtype") = py::none());
  def_fast_noargs(t, "sum", &sum_all);
  t.def("prod", [](const Tensor& x, const py::object& a, bool k, const py::object& d) { return x.prod(axis_arg(a), k, dtype_arg(d)); },
        ax, kd, py::arg("dtype") = py::none());
#define MAROON_REDUCE(name) \
  t.def(#name, [](const Tensor& x, const py::object& a, bool k) { return x.name(axis_arg(a), k); }, ax, kd);
  MAROON_REDUCE(max) MAROON_REDUCE(min) MAROON_REDUCE(mean) MAROON_REDUCE(any) MAROON_REDUCE(all) MAROON_REDUCE(logsumexp)
#undef MAROON_REDUCE
  auto corr = py::arg("correction") = 1.0;
  t.def("var", [](const Tensor& x, const py::object& a, bool k, double c) { return x.var(axis_arg(a), k, c); }, ax, kd, corr);
  t.def("std", [](const Tensor& x, const py::object& a, bool k, double c) { return x.std(axis_arg(a), k, c); }, ax, kd, corr);
  t.def("var_mean", [](const Tensor& x, const py::object& a, bool k, double c) { return x.var_mean(axis_arg(a), k, c); }, ax, kd, corr);
  t.def("std_mean", [](const Tensor& x, const py::object& a, bool k, double c) { return x.std_mean(axis_arg(a), k, c); }, ax, kd, corr);
  t.def("argmax", [](const Tensor& x, std::optional<int64_t> a, bool k) { return x.argmax(a, k); }, ax, kd);
  t.def("argmin", [](const Tensor& x, std::optional<int64_t> a, bool k) { return x.argmin(a, k); }, ax, kd);

  t.def("softmax", [](const Tensor& x, int64_t a, const py::object& d) { return x.softmax(a, dtype_arg(d)); },
        py::arg("axis") = -1, py::arg("dtype") = py::none());
  t.def("log_softmax", [](const Tensor& x, int64_t a, const py::object& d) { return x.log_softmax(a, dtype_arg(d)); },
        py::arg("axis") = -1, py::arg("dtype") = py::none());
  t.def("softmin", [](const Tensor& x, int64_t a, const py::object& d) {
    auto dt = dtype_arg(d);
    return (dt ? x.cast(*dt) : x).softmin(a);
  }, py::arg("axis") = -1, py::arg("dtype") = py::none());

  t.def("cumsum", &Tensor::cumsum, py::arg("axis") = 0);
  t.def("cumprod", &Tensor::cumprod, py::arg("axis"));
  t.def("cummax", [](const Tensor& x, int64_t a) {
    check_0d_axis(x, a, "cummax");
    return std::pair{x.cummax(a), x.cummax_indices(a)};
  }, py::arg("axis") = 0);
  t.def("cummin", [](const Tensor& x, int64_t a) {
    check_0d_axis(x, a, "cummin");
    return std::pair{x.cummin(a), inverse(x).cummax_indices(a)};
  }, py::arg("axis") = 0);
  t.def("logcumsumexp", &Tensor::logcumsumexp, py::arg("axis") = 0);
  t.def("sort", &Tensor::sort, py::arg("dim") = -1, py::arg("descending") = false);
  t.def("argsort", &Tensor::argsort, py::arg("dim") = -1, py::arg("descending") = false);
  // Sorted results are also a valid answer for sorted_=False.
  t.def("topk", [](const Tensor& x, int64_t k, int64_t dim, bool largest, bool) { return x.topk(k, dim, largest); }, py::arg("k"), py::arg("dim") = -1, py::arg("largest") = true, py::arg("sorted_") = true);
  t.def("normalize", &Tensor::normalize, py::arg("p") = 2.0, py::arg("dim") = 1, py::arg("eps") = 1e-12);
}

}  // namespace maroon::py_bind
