#include "fast_methods.h"

#include <array>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

namespace maroon::py_bind {

PyObject* translate_current_exception() {
  auto& local = py::detail::get_local_internals().registered_exception_translators;
  if (py::detail::apply_exception_translators(local)) return nullptr;
  auto& global = py::detail::get_internals().registered_exception_translators;
  if (py::detail::apply_exception_translators(global)) return nullptr;
  PyErr_SetString(PyExc_SystemError, "Exception escaped from default exception translator!");
  return nullptr;
}

void def_descriptor(py::class_<Tensor>& t, const char* name, PyCFunction f, int flags, const std::string& doc) {
  static std::deque<PyMethodDef> defs;
  defs.push_back({strdup(name), f, flags, strdup(doc.c_str())});
  PyObject* d = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(t.ptr()), &defs.back());
  if (!d) throw py::error_already_set();
  t.attr(name) = py::reinterpret_steal<py::object>(d);
}

namespace {

// One slot per method given to def_fast_noargs: its fast path and pybind11's function.
struct FastNoargs {
  PyObject* (*fast)(PyObject*);
  PyObject* full;  // a strong reference, kept for the life of the process
};
constexpr int kMaxFast = 8;
FastNoargs g_fast[kMaxFast];
int g_fast_count = 0;

template <int I>
PyObject* fast_or_full(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (nargs == 0 && (!kwnames || PyTuple_GET_SIZE(kwnames) == 0)) return g_fast[I].fast(self);
  // pybind11's function with self first: the unbound call Tensor.name(self, *args, **kwargs).
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  std::vector<PyObject*> all(static_cast<size_t>(1 + nargs + nkw));
  all[0] = self;
  for (Py_ssize_t i = 0; i < nargs + nkw; ++i) all[static_cast<size_t>(1 + i)] = args[i];
  return PyObject_Vectorcall(g_fast[I].full, all.data(), static_cast<size_t>(1 + nargs), kwnames);
}

// PyCFunction is how a PyMethodDef stores every calling convention (CPython's own cast,
// through void (*)(void) so that the compiler knows the type change is meant).
template <int... I>
std::array<PyCFunction, sizeof...(I)> fast_slots(std::integer_sequence<int, I...>) {
  return {reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&fast_or_full<I>))...};
}

}  // namespace

void def_fast_noargs(py::class_<Tensor>& t, const char* name, PyObject* (*fast)(PyObject* self)) {
  static const auto slots = fast_slots(std::make_integer_sequence<int, kMaxFast>{});
  if (g_fast_count == kMaxFast) throw std::logic_error("def_fast_noargs: raise kMaxFast");
  py::object full = t.attr(name);  // the class attribute: pybind11's function itself
  std::string doc = py::str(full.attr("__doc__"));
  g_fast[g_fast_count] = {fast, full.release().ptr()};
  def_descriptor(t, name, slots[static_cast<size_t>(g_fast_count++)], METH_FASTCALL | METH_KEYWORDS, doc);
}

}  // namespace maroon::py_bind
