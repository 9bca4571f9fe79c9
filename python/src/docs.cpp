// The hook maroon/_docs uses to attach the docstrings kept in its tables to the compiled
// functions (see python/maroon/_docs/__init__.py): a built-in function's __doc__ and
// __text_signature__ are read from its PyMethodDef's ml_doc, which pybind11 itself rewrites
// when it adds an overload. Done once at import; no call goes through anything new.
#include <cstdlib>
#include <cstring>
#include <string>

#include "bind.h"

namespace maroon::py_bind {

void bind_docs(py::module_& m) {
  m.def("_set_builtin_doc", [](py::handle f, std::string text) {
    PyObject* fn = f.ptr();
    if (PyInstanceMethod_Check(fn)) fn = PyInstanceMethod_GET_FUNCTION(fn);
    PyMethodDef* def = nullptr;
    if (PyCFunction_Check(fn)) {
      def = reinterpret_cast<PyCFunctionObject*>(fn)->m_ml;
    } else if (Py_IS_TYPE(fn, &PyMethodDescr_Type)) {  // fast_methods.h's descriptors
      def = reinterpret_cast<PyMethodDescrObject*>(fn)->d_method;
      // A descriptor has no __self__ of its own: "$self" tells inspect to drop self from the
      // bound method's signature (x.sum), as it does for pybind11's bound methods.
      size_t open = text.find('(');
      if (open != std::string::npos && text.compare(open + 1, 4, "self") == 0) text.insert(open + 1, "$");
    } else {
      throw py::type_error("_set_builtin_doc: not a compiled function");
    }
    // ml_doc is malloc'ed (pybind11 strdup'ed its generated signature there and frees it with
    // the function; def_descriptor strdup's its own), so the replacement is too, the old freed.
    char* old = const_cast<char*>(def->ml_doc);
    def->ml_doc = strdup(text.c_str());
    std::free(old);
  });
  // A pybind11 class's __doc__ and its static properties cannot be assigned from Python (the
  // metaclass routes assignment to the property's setter): they are put in the type's dict.
  m.def("_set_type_attr", [](py::handle cls, const std::string& name, py::object value) {
    if (!PyType_Check(cls.ptr())) throw py::type_error("_set_type_attr: not a class");
    auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
    if (PyDict_SetItemString(type->tp_dict, name.c_str(), value.ptr()) != 0) throw py::error_already_set();
    PyType_Modified(type);
  });
}

}  // namespace maroon::py_bind
