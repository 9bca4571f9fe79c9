// The `_maroon` extension: pybind11 bindings over the C++ API, with no second implementation in
// Python. Maroon's exceptions arrive as the built-in exceptions Python and tinygrad users expect:
// ShapeError and FormatError as ValueError (and RuntimeError), DTypeError as TypeError, IndexError
// as IndexError, MemoryError (a buffer over MAROON_MAX_ALLOC_BYTES) as MemoryError; all five are
// also maroon.Error, a RuntimeError.
#include "bind.h"
#include "maroon/backend.h"
#include "maroon/counters.h"
#include "maroon/interrupt.h"
#include "maroon/settings.h"
#include "maroon/version.h"

namespace py = pybind11;
using namespace maroon;

namespace {

// Polled by realize() between kernels (core/interrupt.h): runs Python's signal handlers, so
// Ctrl-C raises KeyboardInterrupt out of a long computation (the GIL is released meanwhile).
void check_python_signals() {
  if (!Py_IsInitialized()) return;
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
}

// MAROON_DEBUG >= 2's kernel lines go through Python's print, so they land where the program's
// own output does (a redirected sys.stdout, a notebook); the GIL is released during realize.
void print_kernel_line(const std::string& line) {
  if (!Py_IsInitialized()) return;
  py::gil_scoped_acquire gil;
  try {
    py::print(line);
  } catch (py::error_already_set&) {  // a closed sys.stdout must not fail the computation
  }
}

}  // namespace

PYBIND11_MODULE(_maroon, m) {
  m.doc() = "Maroon: a deterministic tensor engine (tinygrad's Tensor API, same bits everywhere)";
  m.attr("__version__") = MAROON_VERSION;  // the VERSION file, through CMake

  // Translators run newest first, so the base class goes first. Each class is also the built-in
  // exception tinygrad raises for the same mistake, so code written for tinygrad catches it:
  // a shape mistake is a RuntimeError there (and a ValueError for Python users), a bad index an
  // IndexError, a dtype mistake a TypeError. `maroon.Error` is the base of all of them.
  auto& error = py::register_exception<Error>(m, "Error", PyExc_RuntimeError);
  auto bases = [&](PyObject* builtin) { return py::make_tuple(error, py::handle(builtin)); };
  py::register_exception<ShapeError>(m, "ShapeError", bases(PyExc_ValueError));
  py::register_exception<FormatError>(m, "FormatError", bases(PyExc_ValueError));
  auto& dtype_error = py::register_exception<DTypeError>(m, "DTypeError", bases(PyExc_TypeError));
  py::register_exception<py_bind::DTypeNameError>(m, "DTypeNameError",
                                                  py::make_tuple(dtype_error, py::handle(PyExc_AttributeError)));
  py::register_exception<IndexError>(m, "IndexError", bases(PyExc_IndexError));
  py::register_exception<MemoryError>(m, "MemoryError", bases(PyExc_MemoryError));
  set_interrupt_check(&check_python_signals);

  py::enum_<DType> dt(m, "DType");
  for (DType d : kConcreteDTypes) dt.value(std::string(dtype_name(d)).c_str(), d);
  dt.def_property_readonly("itemsize", [](DType d) { return itemsize(d); });
  dt.def_property_readonly("bitsize", [](DType d) { return bitwidth(d); });
  dt.def("is_float", [](DType d) { return is_float(d); });
  dt.def("is_int", [](DType d) { return is_int(d); });
  dt.def("is_unsigned", [](DType d) { return is_unsigned(d); });
  // Replaces enum_'s own __repr__/__str__ (a plain def would add an overload behind them). They
  // print tinygrad's spelling (its repr names the last alias of each dtype: dtypes.int, not
  // dtypes.int32), so programs print what they print on tinygrad; every alias is an attribute.
  auto name = [](DType d) {
    switch (d) {
      case DType::Int8: return std::string("dtypes.char");
      case DType::UInt8: return std::string("dtypes.uchar");
      case DType::Int16: return std::string("dtypes.short");
      case DType::UInt16: return std::string("dtypes.ushort");
      case DType::Int32: return std::string("dtypes.int");
      case DType::UInt32: return std::string("dtypes.uint");
      case DType::Int64: return std::string("dtypes.long");
      case DType::UInt64: return std::string("dtypes.ulong");
      case DType::Float16: return std::string("dtypes.half");
      case DType::Float32: return std::string("dtypes.float");
      case DType::Float64: return std::string("dtypes.double");
      default: return "dtypes." + std::string(dtype_name(d));  // bool, bfloat16
    }
  };
  dt.attr("__repr__") = py::cpp_function(name, py::is_method(dt));
  dt.attr("__str__") = py::cpp_function(name, py::is_method(dt));
  m.def("least_upper_dtype", [](DType a, DType b) { return concrete(least_upper_dtype(a, b)); });
  m.def("sum_acc_dtype", &sum_acc_dtype);

  py::class_<Tensor> t(m, "Tensor");
  py_bind::bind_tensor_core(t);
  py_bind::bind_elementwise(t);
  py_bind::bind_movement(t);
  py_bind::bind_reduce(t);
  py_bind::bind_creation(t);
  py_bind::bind_layers(t);
  py_bind::bind_nn(m);
  py_bind::bind_infer(m);
  py_bind::bind_verify(m);
  py_bind::bind_onnx(m);
  py_bind::bind_dlpack(t);
  py_bind::bind_dist(m);
  py_bind::bind_jit(m);
  py_bind::bind_docs(m);  // last: it documents what the others bound

  m.def("set_backend", py::overload_cast<const std::string&>(&set_backend), py::arg("name"));
  m.def("backend", &backend_name);
  // Whether matmul/dot/linear/conv2d without an explicit fused= use fused multiply-adds (this
  // thread; off by default). Each choice has its own exact bits.
  m.def("set_fused", &set_current_fused, py::arg("on"));
  m.def("fused", &current_fused);
  m.def("available_simd_targets", &available_simd_targets);
  m.def("set_num_threads", &set_num_threads, py::arg("n"));
  m.def("num_threads", &num_threads);
  // Every MAROON_* setting (maroon/settings.def): the table, and reading and setting by name.
  m.def("settings", [] {
    py::list out;
    for (const SettingInfo& s : all_settings())
      out.append(py::dict(py::arg("name") = std::string(s.name), py::arg("default") = std::string(s.default_value),
                          py::arg("values") = std::string(s.values), py::arg("doc") = std::string(s.doc),
                          py::arg("value") = get_setting(s.name)));
    return out;
  });
  m.def("get_setting", [](const std::string& name) { return get_setting(name); }, py::arg("name"));
  m.def("set_setting", [](const std::string& name, const std::string& value) { set_setting(name, value); },
        py::arg("name"), py::arg("value"));
  m.def("simd_target", &simd_target);
  // The engine's counters (maroon/counters.h), read by maroon.GlobalCounters.
  m.def("counters", [] {
    Counters c = counters();
    return py::dict(py::arg("kernel_count") = c.kernel_count, py::arg("global_ops") = c.global_ops,
                    py::arg("global_mem") = c.global_mem, py::arg("time_sum_s") = c.time_sum_s,
                    py::arg("mem_used") = c.mem_used);
  });
  m.def("reset_counters", &reset_counters);
  set_kernel_log_sink(&print_kernel_line);
  m.def("set_simd_target", &set_simd_target, py::arg("name"));
}
