// Shared by the binding sources: how Python values become C++ arguments. Everything here only
// converts; the computing is the C++ API's.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "maroon/maroon.h"
#include "tensor_caster.h"  // before any Tensor crosses the binding

namespace maroon::py_bind {

namespace py = pybind11;

// numpy in: one copy of the bytes (plus one contiguous copy only for a strided array).
Tensor from_numpy(const py::array& a);
// numpy out: one copy of the realized bytes into memory the array alone owns (never a view of
// the tensor's buffer, which the engine recycles and TinyJit replays rewrite).
py::array to_numpy(const Tensor& t);
// tinygrad's Tensor(data, dtype): lists and scalars take tinygrad's default dtypes.
Tensor from_python(const py::handle& data, std::optional<DType> dtype);

// A Python bool/int/float (or numpy scalar) as a weak Scalar; nullopt for anything else.
std::optional<Scalar> scalar_of(const py::handle& o);
Scalar scalar_arg(const py::handle& o, const char* op);
// A Tensor operand, or a list/array converted as Tensor(o) would; nullopt for scalars and others.
std::optional<Tensor> tensor_of(const py::handle& o);
// A Tensor or a weak scalar shaped against `like` (as tinygrad's ufix); TypeError otherwise.
Tensor operand(const py::handle& o, const Tensor& like, const char* op);
bool is_operand(const py::handle& o);
bool is_tensor(const py::handle& o);  // a maroon Tensor (or subclass)

// tinygrad's DTypeLike: a maroon DType, a name such as "float32", or None.
std::optional<DType> dtype_arg(const py::handle& o);
// tinygrad's `*shape` arguments: f(2, 3), f((2, 3)) or f([2, 3]). None entries stay -1.
Shape shape_args(const py::args& args, const char* op);
std::vector<int64_t> int_list(const py::handle& o, const char* op);  // int or sequence of ints
// axis=None|int|sequence (tinygrad's reductions).
Axis axis_arg(const py::handle& o);
py::tuple tuple_of(const std::vector<Tensor>& ts);
// Raises the built-in Python exception `type` (OverflowError, NotImplementedError, ...) where
// tinygrad raises that class and Maroon's C++ classes have no counterpart.
[[noreturn]] void raise_builtin(PyObject* type, const std::string& message);
// An unknown dtype name: tinygrad's getattr(dtypes, name) raises AttributeError, Maroon a
// DTypeError; this is both (registered in module.cpp).
struct DTypeNameError : DTypeError {
  using DTypeError::DTypeError;
};

// The binders, one per source file.
void bind_tensor_core(py::class_<Tensor>& t);
void bind_elementwise(py::class_<Tensor>& t);
void bind_movement(py::class_<Tensor>& t);
void bind_reduce(py::class_<Tensor>& t);
void bind_creation(py::class_<Tensor>& t);
void bind_layers(py::class_<Tensor>& t);
void bind_nn(py::module_& m);
void bind_datasets(py::module_ m);  // maroon._maroon.nn.datasets
void bind_infer(py::module_& m);
void bind_verify(py::module_& m);
void bind_onnx(py::module_& m);  // maroon.onnx (python/src/onnx.cpp)
void bind_dlpack(py::class_<Tensor>& t);
void bind_dist(py::module_& m);
void bind_jit(py::module_& m);  // maroon.JitCapture (src/jit.cpp)
void bind_docs(py::module_& m);  // the hook maroon/_docs attaches docstrings with

}  // namespace maroon::py_bind
