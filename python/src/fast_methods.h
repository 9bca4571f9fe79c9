// CPython method descriptors for the Tensor methods Python calls most often (the binary
// operators, sum(), item()): pybind11's dispatcher spends two heap blocks a call (its argument
// vectors) plus an overload walk and keyword handling, ~0.2-0.4 us of a ~3.5 us small op. A
// descriptor is how CPython's own types define methods; it runs the same C++ as the pybind11
// binding did, and errors reach Python through pybind11's exception translators as before.
#pragma once
#include <cxxabi.h>

#include "bind.h"

namespace maroon::py_bind {

// The Python error for the C++ exception being handled, through pybind11's registered
// translators (so ShapeError etc. keep their Python classes); returns nullptr.
PyObject* translate_current_exception();

// f()'s result, or nullptr with the Python error set for whatever it threw.
template <class F>
PyObject* call_guarded(F&& f) {
  try {
    return f();
  } catch (py::error_already_set& e) {
    e.restore();
    return nullptr;
  } catch (abi::__forced_unwind&) {  // thread cancellation must unwind on, as in pybind11
    throw;
  } catch (...) {
    return translate_current_exception();
  }
}

// Puts a method descriptor named `name` running `f` (with METH_* `flags`) on t, documented with
// `doc` (pybind11's signature line first: maroon/_docs and tools/python/gen_stubs.py read it).
// The PyMethodDef lives as long as the type, as CPython's static ones do.
void def_descriptor(py::class_<Tensor>& t, const char* name, PyCFunction f, int flags, const std::string& doc);

// Replaces t.<name>, bound by pybind11 already, with a METH_FASTCALL|METH_KEYWORDS descriptor:
// `fast(self)` for a call without arguments, pybind11's function (kept, with its __doc__) for
// every other call, so arguments, defaults, keywords and their errors stay exactly pybind11's.
void def_fast_noargs(py::class_<Tensor>& t, const char* name, PyObject* (*fast)(PyObject* self));

}  // namespace maroon::py_bind
