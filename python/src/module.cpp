// Python bindings (pybind11) over the C++ API: no second implementation in Python. Python's
// conventions are mapped here: scalars are weak, numpy arrays come in and go out as one copy of
// the bytes, and Maroon's exceptions become ValueError, TypeError and IndexError.
#include <pybind11/numpy.h>
#include <pybind11/operators.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>

#include "maroon/backend.h"
#include "maroon/maroon.h"

namespace py = pybind11;
using namespace maroon;

namespace {

// The numpy dtype holding a Maroon dtype's elements (bfloat16 has none: it leaves as float32).
py::dtype numpy_dtype(DType d) {
  switch (d) {
    case DType::Bool: return py::dtype("bool");
    case DType::Int8: return py::dtype("int8");
    case DType::UInt8: return py::dtype("uint8");
    case DType::Int16: return py::dtype("int16");
    case DType::UInt16: return py::dtype("uint16");
    case DType::Int32: return py::dtype("int32");
    case DType::UInt32: return py::dtype("uint32");
    case DType::Int64: return py::dtype("int64");
    case DType::UInt64: return py::dtype("uint64");
    case DType::Float16: return py::dtype("float16");
    case DType::BFloat16: case DType::Float32: return py::dtype("float32");
    case DType::Float64: return py::dtype("float64");
    default: throw DTypeError("[numpy] no numpy dtype for " + std::string(dtype_name(d)));
  }
}

DType dtype_of_numpy(const py::dtype& dt) {
  const std::string k(1, dt.kind());
  const int64_t n = static_cast<int64_t>(dt.itemsize());
  if (k == "b") return DType::Bool;
  if (k == "f") return n == 2 ? DType::Float16 : n == 4 ? DType::Float32 : DType::Float64;
  if (k == "i") return n == 1 ? DType::Int8 : n == 2 ? DType::Int16 : n == 4 ? DType::Int32 : DType::Int64;
  if (k == "u") return n == 1 ? DType::UInt8 : n == 2 ? DType::UInt16 : n == 4 ? DType::UInt32 : DType::UInt64;
  throw DTypeError("[Tensor] unsupported numpy dtype " + py::str(static_cast<const py::object&>(dt)).cast<std::string>());
}

Tensor from_numpy(py::array a, std::optional<DType> dtype) {
  a = py::array::ensure(a, py::array::c_style);  // one contiguous copy only when needed
  DType src = dtype_of_numpy(a.dtype());
  Shape shape(a.shape(), a.shape() + a.ndim());
  Tensor t = Tensor::from_bytes(a.data(), static_cast<size_t>(a.nbytes()), shape, src);
  return dtype && *dtype != src ? t.cast(*dtype) : t;
}

py::array to_numpy(const Tensor& t) {
  Tensor x = t.dtype() == DType::BFloat16 ? t.cast(DType::Float32) : t;
  std::vector<uint8_t> bytes = x.bytes();
  std::vector<py::ssize_t> shape(x.shape().begin(), x.shape().end());
  py::array out(numpy_dtype(x.dtype()), shape);
  if (!bytes.empty()) std::memcpy(out.mutable_data(), bytes.data(), bytes.size());
  return out;
}

// A Python operand: a Tensor, or a scalar that stays weak (Python int/float/bool).
using Operand = py::object;
Tensor as_tensor(const Operand& o, const Tensor& like) {
  if (py::isinstance<Tensor>(o)) return o.cast<Tensor>();
  Scalar s = py::isinstance<py::bool_>(o) ? Scalar(o.cast<bool>())
           : py::isinstance<py::int_>(o)  ? Scalar(o.cast<int64_t>())
           : py::isinstance<py::float_>(o) ? Scalar(o.cast<double>())
                                            : throw DTypeError("[Tensor] unsupported operand " +
                                                               std::string(py::str(py::type::of(o))));
  DType d = concrete(least_upper_dtype(like.dtype(), s.weak_dtype()));
  return Tensor::full({}, s, d);
}

}  // namespace

void bind_nn(py::module_& m);  // nn.cpp

PYBIND11_MODULE(_maroon, m) {
  m.doc() = "Maroon: a deterministic tensor engine (tinygrad's Tensor API, same bits everywhere)";

  // Translators run newest first, so the base class goes first.
  py::register_exception<Error>(m, "Error", PyExc_ValueError);
  py::register_exception<ShapeError>(m, "ShapeError", PyExc_ValueError);
  py::register_exception<DTypeError>(m, "DTypeError", PyExc_TypeError);
  py::register_exception<IndexError>(m, "IndexError", PyExc_IndexError);

  py::enum_<DType> dt(m, "DType");
  for (DType d : kConcreteDTypes) dt.value(std::string(dtype_name(d)).c_str(), d);
  dt.def_property_readonly("itemsize", [](DType d) { return itemsize(d); });
  dt.def("__repr__", [](DType d) { return "dtypes." + std::string(dtype_name(d)); });

  py::class_<Tensor> t(m, "Tensor");
  // Tensor(list | numpy array | scalar | Tensor, dtype=None). Python floats default to float32
  // and ints to int32, as in tinygrad.
  t.def(py::init([](py::object data, std::optional<DType> dtype) {
          if (py::isinstance<Tensor>(data)) {
            Tensor x = data.cast<Tensor>();
            return dtype ? x.cast(*dtype) : x;
          }
          py::module_ np = py::module_::import("numpy");
          py::array a = np.attr("asarray")(data);
          if (!py::isinstance(data, np.attr("ndarray"))) {
            std::string k(1, a.dtype().kind());
            if (k == "f" && a.dtype().itemsize() == 8) a = a.attr("astype")("float32");
            if (k == "i" && a.dtype().itemsize() == 8) a = a.attr("astype")("int32");
          }
          return from_numpy(a, dtype);
        }),
        py::arg("data"), py::arg("dtype") = py::none());
  t.def("tolist", [](const Tensor& x) { return to_numpy(x).attr("tolist")(); });
  t.def_property_readonly("shape", [](const Tensor& x) { return py::tuple(py::cast(x.shape())); });
  t.def_property_readonly("dtype", &Tensor::dtype);
  t.def_property_readonly("ndim", &Tensor::ndim);
  t.def("numel", &Tensor::numel);
  t.def("numpy", &to_numpy);
  t.def("realize", [](Tensor& x) { x.realize(); return x; });
  t.def("item", &Tensor::item);
  t.def_property_readonly("grad", &Tensor::grad);
  t.def("backward", [](Tensor& x) { x.backward(); return x; });
  t.def("cast", &Tensor::cast);
  t.def("bitcast", &Tensor::bitcast);
  t.def("reshape", [](const Tensor& x, py::args shape) {
    Shape s;
    if (shape.size() == 1 && py::isinstance<py::sequence>(shape[0])) s = shape[0].cast<Shape>();
    else for (auto v : shape) s.push_back(v.cast<int64_t>());
    return x.reshape(s);
  });
  t.def("permute", [](const Tensor& x, py::args order) {
    std::vector<int64_t> o;
    if (order.size() == 1 && py::isinstance<py::sequence>(order[0])) o = order[0].cast<std::vector<int64_t>>();
    else for (auto v : order) o.push_back(v.cast<int64_t>());
    return x.permute(o);
  });
  t.def("transpose", &Tensor::transpose, py::arg("dim0") = 1, py::arg("dim1") = 0);
  t.def("matmul", [](const Tensor& a, const Tensor& b) { return a.matmul(b); });
  // Every method without arguments, as tinygrad names it.
#define MAROON_UNARY(name) t.def(#name, [](const Tensor& x) { return x.name(); });
  MAROON_UNARY(exp2) MAROON_UNARY(log2) MAROON_UNARY(sin) MAROON_UNARY(sqrt) MAROON_UNARY(reciprocal)
  MAROON_UNARY(trunc) MAROON_UNARY(detach) MAROON_UNARY(contiguous) MAROON_UNARY(contiguous_backward)
  MAROON_UNARY(clone) MAROON_UNARY(neg) MAROON_UNARY(logical_not) MAROON_UNARY(bitwise_not) MAROON_UNARY(exp)
  MAROON_UNARY(log) MAROON_UNARY(log10) MAROON_UNARY(rsqrt) MAROON_UNARY(cos) MAROON_UNARY(tan)
  MAROON_UNARY(square) MAROON_UNARY(sign) MAROON_UNARY(abs) MAROON_UNARY(floor) MAROON_UNARY(ceil)
  MAROON_UNARY(round) MAROON_UNARY(relu) MAROON_UNARY(relu6) MAROON_UNARY(sigmoid) MAROON_UNARY(logsigmoid)
  MAROON_UNARY(tanh) MAROON_UNARY(quick_gelu) MAROON_UNARY(swish) MAROON_UNARY(silu) MAROON_UNARY(hardswish)
  MAROON_UNARY(mish) MAROON_UNARY(softsign) MAROON_UNARY(erf) MAROON_UNARY(sinh) MAROON_UNARY(cosh)
  MAROON_UNARY(atanh) MAROON_UNARY(asinh) MAROON_UNARY(acosh) MAROON_UNARY(isnan) MAROON_UNARY(isfinite)
  MAROON_UNARY(asin) MAROON_UNARY(acos) MAROON_UNARY(atan)
#undef MAROON_UNARY
  t.def("__invert__", [](const Tensor& x) { return x.bitwise_not(); });
  t.def("__abs__", [](const Tensor& x) { return x.abs(); });
  auto axis_of = [](py::object axis) -> Axis {
    if (axis.is_none()) return Axis();
    if (py::isinstance<py::int_>(axis)) return Axis(axis.cast<int64_t>());
    return Axis(axis.cast<std::vector<int64_t>>());
  };
  t.def("sum", [axis_of](const Tensor& x, py::object axis, bool keepdim) { return x.sum(axis_of(axis), keepdim); },
        py::arg("axis") = py::none(), py::arg("keepdim") = false);
  t.def("max", [axis_of](const Tensor& x, py::object axis, bool keepdim) { return x.max(axis_of(axis), keepdim); },
        py::arg("axis") = py::none(), py::arg("keepdim") = false);
  t.def("mean", [axis_of](const Tensor& x, py::object axis, bool keepdim) { return x.mean(axis_of(axis), keepdim); },
        py::arg("axis") = py::none(), py::arg("keepdim") = false);
  t.def("min", [axis_of](const Tensor& x, py::object axis, bool keepdim) { return x.min(axis_of(axis), keepdim); },
        py::arg("axis") = py::none(), py::arg("keepdim") = false);
  t.def("var", [axis_of](const Tensor& x, py::object axis, bool keepdim, double c) { return x.var(axis_of(axis), keepdim, c); },
        py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("correction") = 1.0);
  t.def("std", [axis_of](const Tensor& x, py::object axis, bool keepdim, double c) { return x.std(axis_of(axis), keepdim, c); },
        py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("correction") = 1.0);
  t.def("argmax", [](const Tensor& x, std::optional<int64_t> axis, bool keepdim) { return x.argmax(axis, keepdim); },
        py::arg("axis") = py::none(), py::arg("keepdim") = false);
  t.def("expand", [](const Tensor& x, py::args shape) {
    Shape s;
    if (shape.size() == 1 && py::isinstance<py::sequence>(shape[0])) s = shape[0].cast<Shape>();
    else for (auto v : shape) s.push_back(v.cast<int64_t>());
    return x.expand(s);
  });
  t.def("flatten", [](const Tensor& x, int64_t a, int64_t b) { return x.flatten(a, b); },
        py::arg("start_dim") = 0, py::arg("end_dim") = -1);
  t.def("unsqueeze", &Tensor::unsqueeze);
  t.def("squeeze", [](const Tensor& x, std::optional<int64_t> d) { return x.squeeze(d); }, py::arg("dim") = py::none());
  t.def("pow", [](const Tensor& a, const Operand& b) { return a.pow(as_tensor(b, a)); });
  t.def("maximum", [](const Tensor& a, const Operand& b) { return a.maximum(as_tensor(b, a)); });
  t.def("minimum", [](const Tensor& a, const Operand& b) { return a.minimum(as_tensor(b, a)); });
  t.def("where", [](const Tensor& c, const Operand& x, const Operand& y) {
    Tensor tx = py::isinstance<Tensor>(x) ? x.cast<Tensor>() : py::isinstance<Tensor>(y) ? as_tensor(x, y.cast<Tensor>())
                                                                                         : as_tensor(x, c.cast(DType::Float32));
    return c.where(tx, as_tensor(y, tx));
  });
  t.def("one_hot", &Tensor::one_hot);
  t.def("gather", &Tensor::gather, py::arg("dim"), py::arg("index"));
  t.def("linear", [](const Tensor& x, const Tensor& w, std::optional<Tensor> b) { return x.linear(w, b); },
        py::arg("weight"), py::arg("bias") = py::none());
  t.def("conv2d",
        [](const Tensor& x, const Tensor& w, std::optional<Tensor> b, int64_t groups, std::vector<int64_t> stride,
           std::vector<int64_t> dilation, std::vector<int64_t> padding) {
          return x.conv2d(w, b, groups, stride, dilation, padding);
        },
        py::arg("weight"), py::arg("bias") = py::none(), py::arg("groups") = 1, py::arg("stride") = std::vector<int64_t>{1},
        py::arg("dilation") = std::vector<int64_t>{1}, py::arg("padding") = std::vector<int64_t>{0});
  t.def("max_pool2d", [](const Tensor& x, std::vector<int64_t> k, std::vector<int64_t> s) { return x.max_pool2d(k, s); },
        py::arg("kernel_size") = std::vector<int64_t>{2, 2}, py::arg("stride") = std::vector<int64_t>{});
  t.def("sparse_categorical_crossentropy",
        [](const Tensor& x, const Tensor& y, int64_t ignore, double ls) { return x.sparse_categorical_crossentropy(y, ignore, ls); },
        py::arg("Y"), py::arg("ignore_index") = -1, py::arg("label_smoothing") = 0.0);
  t.def("__eq__", [](const Tensor& a, const Operand& b) { return a.eq(as_tensor(b, a)); });
  t.def("__pow__", [](const Tensor& a, const Operand& b) { return a.pow(as_tensor(b, a)); });
  t.def_static("manual_seed", &Tensor::manual_seed, py::arg("seed") = 0);
  auto shape_of = [](py::args shape) {
    Shape s;
    if (shape.size() == 1 && py::isinstance<py::sequence>(shape[0])) s = shape[0].cast<Shape>();
    else for (auto v : shape) s.push_back(v.cast<int64_t>());
    return s;
  };
  t.def_static("zeros", [shape_of](py::args shape, DType dtype) { return Tensor::zeros(shape_of(shape), dtype); },
               py::kw_only(), py::arg("dtype") = DType::Float32);
  t.def_static("ones", [shape_of](py::args shape, DType dtype) { return Tensor::ones(shape_of(shape), dtype); },
               py::kw_only(), py::arg("dtype") = DType::Float32);
  t.def_static("rand", [shape_of](py::args shape, DType dtype) { return Tensor::rand(shape_of(shape), dtype); },
               py::kw_only(), py::arg("dtype") = DType::Float32);
  t.def_static("randn", [shape_of](py::args shape, DType dtype) { return Tensor::randn(shape_of(shape), dtype); },
               py::kw_only(), py::arg("dtype") = DType::Float32);
  t.def_static("arange", [](int64_t stop) { return Tensor::arange(stop); });
  t.def_static("cat", [](const std::vector<Tensor>& ts, int64_t dim) { return Tensor::cat_all(ts, dim); },
               py::arg("tensors"), py::arg("dim") = 0);
  t.def_static("stack", [](const std::vector<Tensor>& ts, int64_t dim) { return Tensor::stack_all(ts, dim); },
               py::arg("tensors"), py::arg("dim") = 0);
  t.def("softmax", [](const Tensor& x, int64_t axis) { return x.softmax(axis); }, py::arg("axis") = -1);
  t.def("log_softmax", [](const Tensor& x, int64_t axis) { return x.log_softmax(axis); }, py::arg("axis") = -1);

  // Operators: Python scalars on either side stay weak (int8 * 300 stays int8).
  t.def("__add__", [](const Tensor& a, const Operand& b) { return add(a, as_tensor(b, a)); });
  t.def("__radd__", [](const Tensor& a, const Operand& b) { return add(as_tensor(b, a), a); });
  t.def("__mul__", [](const Tensor& a, const Operand& b) { return mul(a, as_tensor(b, a)); });
  t.def("__rmul__", [](const Tensor& a, const Operand& b) { return mul(as_tensor(b, a), a); });
  t.def("__sub__", [](const Tensor& a, const Operand& b) { return a.sub(as_tensor(b, a)); });
  t.def("__rsub__", [](const Tensor& a, const Operand& b) { return as_tensor(b, a).sub(a); });
  t.def("__truediv__", [](const Tensor& a, const Operand& b) { return a.div(as_tensor(b, a)); });
  t.def("__rtruediv__", [](const Tensor& a, const Operand& b) { return as_tensor(b, a).div(a); });
  t.def("__neg__", &Tensor::neg);
  t.def("__matmul__", [](const Tensor& a, const Tensor& b) { return a.matmul(b); });
  t.def("__lt__", [](const Tensor& a, const Operand& b) { return cmplt(a, as_tensor(b, a)); });
  t.def("__gt__", [](const Tensor& a, const Operand& b) { return cmplt(as_tensor(b, a), a); });
  t.def("__repr__", [](const Tensor& x) {
    return "<Tensor shape=" + shape_str(x.shape()) + " dtype=dtypes." + std::string(dtype_name(x.dtype())) + ">";
  });

  // tinygrad's Tensor.training (a class attribute there, a global switch here).
  t.def_property_static("training", [](py::object) { return Tensor::training(); },
                        [](py::object, bool on) { Tensor::set_training(on); });

  bind_nn(m);

  m.def("set_backend", [](const std::string& b) {
    if (b != "ref" && b != "cpu") throw Error("[set_backend] unknown backend '" + b + "' (ref, cpu)");
    set_backend(b == "ref" ? Backend::Ref : Backend::Cpu);
  });
  m.def("available_simd_targets", &available_simd_targets);
  m.def("set_num_threads", &set_num_threads);
  m.def("num_threads", &num_threads);
  m.def("simd_target", &simd_target);
  m.def("set_simd_target", &set_simd_target);
}
