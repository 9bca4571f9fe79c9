// Python values to C++ arguments and back. numpy arrays cross as bytes (one copy each way);
// Python scalars become weak Scalars, as tinygrad's literals are.
#include <array>
#include <climits>
#include <cstring>
#include <memory>

#include "bind.h"
#include "maroon/read.h"

namespace maroon::py_bind {

namespace {

// numpy, imported once and kept for the life of the interpreter.
const py::module_& np() {
  static auto* m = new py::module_(py::module_::import("numpy"));
  return *m;
}

py::dtype make_numpy_dtype(DType d) {
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
    case DType::Float32: return py::dtype("float32");
    case DType::Float64: return py::dtype("float64");
    default: throw DTypeError("[numpy] no numpy dtype for " + std::string(dtype_name(d)));
  }
}

// Each numpy dtype parsed from its name once (py::dtype("float32") parses the string on every
// call) and kept for the life of the interpreter, as np() is. Called with the GIL held.
const py::dtype& numpy_dtype(DType d) {
  static std::array<py::dtype*, static_cast<size_t>(DType::WeakFloat) + 1> made{};
  py::dtype*& m = made[static_cast<size_t>(d)];
  if (!m) m = new py::dtype(make_numpy_dtype(d));  // throws for a dtype numpy lacks
  return *m;
}

DType dtype_of_numpy(const py::dtype& dt) {
  const char k = dt.kind();
  const auto n = dt.itemsize();
  if (k == 'b') return DType::Bool;
  if (k == 'f' && (n == 2 || n == 4 || n == 8)) return n == 2 ? DType::Float16 : n == 4 ? DType::Float32 : DType::Float64;
  if (k == 'i') return n == 1 ? DType::Int8 : n == 2 ? DType::Int16 : n == 4 ? DType::Int32 : DType::Int64;
  if (k == 'u') return n == 1 ? DType::UInt8 : n == 2 ? DType::UInt16 : n == 4 ? DType::UInt32 : DType::UInt64;
  throw DTypeError("[Tensor] unsupported numpy dtype " + std::string(py::str(static_cast<const py::object&>(dt))));
}

int64_t int_value(const py::handle& o, const char* op) {
  py::object idx = py::reinterpret_steal<py::object>(PyNumber_Index(o.ptr()));
  if (!idx) {
    PyErr_Clear();
    throw DTypeError(std::string("[") + op + "] expected an int, got " + std::string(py::str(py::type::of(o).attr("__name__"))));
  }
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(idx.ptr(), &overflow);
  if (overflow > 0) {
    // Up to 2**64-1: the bits of a uint64 constant (it wraps to the tensor's dtype like a literal).
    unsigned long long u = PyLong_AsUnsignedLongLong(idx.ptr());
    if (PyErr_Occurred()) {
      PyErr_Clear();
      throw ShapeError(std::string("[") + op + "] integer " + std::string(py::str(o)) + " does not fit in 64 bits");
    }
    return static_cast<int64_t>(u);
  }
  if (overflow < 0) throw ShapeError(std::string("[") + op + "] integer " + std::string(py::str(o)) + " does not fit in 64 bits");
  return v;
}

}  // namespace

Tensor from_numpy(const py::array& in) {
  DType src = dtype_of_numpy(in.dtype());
  py::array a = py::array::ensure(in, py::array::c_style);  // copies only a strided array
  if (!a) throw py::error_already_set();
  Shape shape(a.shape(), a.shape() + a.ndim());
  return Tensor::from_bytes(a.data(), static_cast<size_t>(a.nbytes()), shape, src);
}

namespace {

// A C-contiguous numpy array of `shape`, uninitialized, from numpy's C API with the dims on the
// stack: py::array(dt, shape) copies the shape into two vectors and computes the strides into a
// third (three heap blocks a call, ~10% of .numpy() on a small array); numpy computes C strides
// itself when given none.
py::array empty_array(const py::dtype& dt, const Shape& shape) {
  constexpr size_t kMaxRank = 8;
  if (shape.size() > kMaxRank) return py::array(dt, std::vector<py::ssize_t>(shape.begin(), shape.end()));
  Py_intptr_t dims[kMaxRank];
  for (size_t i = 0; i < shape.size(); ++i) dims[i] = static_cast<Py_intptr_t>(shape[i]);
  auto& api = py::detail::npy_api::get();
  PyObject* a = api.PyArray_NewFromDescr_(api.PyArray_Type_, dt.inc_ref().ptr(),  // the call steals it
                                          static_cast<int>(shape.size()), dims, nullptr, nullptr, 0, nullptr);
  if (!a) throw py::error_already_set();
  return py::reinterpret_steal<py::array>(a);
}

}  // namespace

py::array to_numpy(const Tensor& t) {
  // bfloat16 has no numpy dtype: it leaves as float32 (exact).
  // A handle of its own on the node: another Python thread may assign() to `t` while the graph
  // runs without the GIL.
  Tensor x(t.dtype() == DType::BFloat16 ? t.cast(DType::Float32).node() : t.node());
  {
    py::gil_scoped_release release;  // other Python threads run while this graph does
    x.realize();
  }
  const py::dtype& dt = numpy_dtype(x.dtype());
  size_t nbytes = 0;  // checked: a huge expand's size must not wrap into a small array
  if (__builtin_mul_overflow(static_cast<size_t>(x.numel()), itemsize(x.dtype()), &nbytes))
    throw MemoryError("[read] " + std::to_string(x.numel()) + " elements of " + std::string(dtype_name(x.dtype())) +
                      " need more bytes than this machine can address");
  // A copy, never a view of the tensor's buffer: Maroon recycles buffers (core/buffer.cpp) and
  // TinyJit's replays write them again, which a view would see. One copy at memory speed: a
  // large array's memory comes from the engine's buffer cache (pages already touched; numpy's
  // fresh pages cost a fault each, ~3x the copy itself here), a small one from numpy.
  py::array a;
  if (nbytes >= (size_t{1} << 20)) {
    std::vector<py::ssize_t> shape(x.shape().begin(), x.shape().end());
    auto* mem = new std::shared_ptr<uint8_t>(cached_bytes(nbytes));
    py::capsule owner(mem, [](void* p) { delete static_cast<std::shared_ptr<uint8_t>*>(p); });
    a = py::array(dt, shape, mem->get(), owner);
  } else {
    a = empty_array(dt, x.shape());
  }
  copy_bytes_to(x, a.mutable_data(), nbytes);
  return a;
}

Tensor from_python(const py::handle& data, std::optional<DType> dtype) {
  auto finish = [&](Tensor t) { return dtype && *dtype != t.dtype() ? t.cast(*dtype) : t; };
  if (py::isinstance<Tensor>(data)) return finish(data.cast<Tensor>());
  if (data.is_none()) return Tensor::zeros({0}, dtype.value_or(DType::Float32));
  if (py::isinstance<py::bytes>(data)) {
    std::string s = data.cast<std::string>();
    return finish(Tensor::from_bytes(s.data(), s.size(), {static_cast<int64_t>(s.size())}, DType::UInt8));
  }
  if (py::isinstance<py::array>(data)) return finish(from_numpy(data.cast<py::array>()));
  if (auto s = scalar_of(data)) {
    if (dtype) return Tensor::full({}, *s, *dtype);
    return Tensor::full({}, *s, concrete(s->weak_dtype()));
  }
  if (!py::isinstance<py::list>(data) && !py::isinstance<py::tuple>(data))
    throw DTypeError("[Tensor] cannot make a Tensor from " + std::string(py::str(py::type::of(data).attr("__name__"))));
  // Nested Python lists: numpy reads them as bool, int64 or float64; the engine then casts to
  // tinygrad's default (int32, float32) or the requested dtype, so each value rounds once.
  py::array a = np().attr("asarray")(data);
  char k = a.dtype().kind();
  if (k != 'b' && k != 'i' && k != 'u' && k != 'f')
    throw DTypeError("[Tensor] nested lists must hold only bools, ints and floats");
  Tensor t = from_numpy(a);
  if (dtype) return t.cast(*dtype);
  if (k == 'f') return t.cast(DType::Float32);
  if (k == 'i' || k == 'u') return t.cast(DType::Int32);
  return t;
}

namespace {

// numpy's scalar base classes, looked up once (a module attribute per operand cost ~1 us).
struct NumpyScalars {
  py::object bool_, integer, floating;
};
const NumpyScalars& numpy_scalars() {
  static auto* s = new NumpyScalars{np().attr("bool_"), np().attr("integer"), np().attr("floating")};
  return *s;
}

}  // namespace

// The Tensor class object, for an exact type test without pybind11's registry lookup.
bool is_tensor(const py::handle& o) {
  static PyObject* type = py::type::of<Tensor>().ptr();
  return reinterpret_cast<PyObject*>(Py_TYPE(o.ptr())) == type || py::isinstance<Tensor>(o);
}

std::optional<Scalar> scalar_of(const py::handle& o) {
  PyObject* p = o.ptr();
  // Python's own float and int first (exact types: the usual literals); no numpy type is either.
  if (PyFloat_CheckExact(p)) return Scalar(PyFloat_AS_DOUBLE(p));
  if (PyLong_CheckExact(p)) return Scalar(int_value(o, "Tensor"));
  if (is_tensor(o)) return std::nullopt;
  const NumpyScalars& np_s = numpy_scalars();
  if (PyBool_Check(p) || py::isinstance(o, np_s.bool_)) return Scalar(o.cast<bool>());
  if (PyLong_Check(p) || py::isinstance(o, np_s.integer)) return Scalar(int_value(o, "Tensor"));
  if (PyFloat_Check(p) || py::isinstance(o, np_s.floating)) return Scalar(o.cast<double>());
  return std::nullopt;
}

Scalar scalar_arg(const py::handle& o, const char* op) {
  if (auto s = scalar_of(o)) return *s;
  throw DTypeError(std::string("[") + op + "] expected a bool, int or float, got " +
                   std::string(py::str(py::type::of(o).attr("__name__"))));
}

std::optional<Tensor> tensor_of(const py::handle& o) {
  if (is_tensor(o)) return o.cast<Tensor>();
  if (py::isinstance<py::list>(o) || py::isinstance<py::tuple>(o) || py::isinstance<py::array>(o))
    return from_python(o, std::nullopt);
  return std::nullopt;
}

bool is_operand(const py::handle& o) {
  return is_tensor(o) || py::isinstance<py::list>(o) || py::isinstance<py::tuple>(o) ||
         py::isinstance<py::array>(o) || scalar_of(o).has_value();
}

Tensor operand(const py::handle& o, const Tensor& like, const char* op) {
  if (auto t = tensor_of(o)) return *t;
  return like.scalar_operand(scalar_arg(o, op));
}

std::optional<DType> dtype_arg(const py::handle& o) {
  if (o.is_none()) return std::nullopt;
  if (py::isinstance<DType>(o)) return o.cast<DType>();
  if (py::isinstance<py::str>(o)) {
    std::string name = o.cast<std::string>();
    try {
      return dtype_from_name(name);
    } catch (const Error&) {
      throw DTypeNameError("[dtype] unknown dtype '" + name + "'");
    }
  }
  if (py::isinstance<py::dtype>(o) || py::isinstance<py::type>(o)) {
    if (o.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type)) return DType::Float32;
    if (o.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type)) return DType::Int32;
    if (o.ptr() == reinterpret_cast<PyObject*>(&PyBool_Type)) return DType::Bool;
    return dtype_of_numpy(py::dtype::from_args(py::reinterpret_borrow<py::object>(o)));
  }
  throw DTypeError("[dtype] expected a dtype (dtypes.float32 or a name), got " +
                   std::string(py::str(py::type::of(o).attr("__name__"))));
}

std::vector<int64_t> int_list(const py::handle& o, const char* op) {
  std::vector<int64_t> out;
  if (py::isinstance<py::list>(o) || py::isinstance<py::tuple>(o)) {
    for (auto v : py::reinterpret_borrow<py::sequence>(o)) out.push_back(int_value(v, op));
  } else {
    out.push_back(int_value(o, op));
  }
  return out;
}

Shape shape_args(const py::args& args, const char* op) {
  py::sequence seq = args;
  const bool nested = args.size() >= 1 && (py::isinstance<py::list>(args[0]) || py::isinstance<py::tuple>(args[0]));
  if (nested && args.size() > 1)  // f((2, 3), 4): tinygrad's argfix calls it a bad argument (ValueError)
    throw ShapeError(std::string("[") + op + "] bad shape arguments " + py::str(static_cast<py::object>(args)).cast<std::string>());
  if (nested) seq = py::reinterpret_borrow<py::sequence>(args[0]);
  Shape s;
  for (auto v : seq) s.push_back(v.is_none() ? INT64_MIN : int_value(v, op));
  return s;
}

Axis axis_arg(const py::handle& o) {
  if (o.is_none()) return Axis();
  return Axis(int_list(o, "axis"));
}

py::tuple tuple_of(const std::vector<Tensor>& ts) { return py::cast(ts); }

void raise_builtin(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}

}  // namespace maroon::py_bind
