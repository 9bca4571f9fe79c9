// maroon.JitCapture: the C++ capture (maroon/jit.h) under maroon.TinyJit (python/maroon/jit.py).
#include "bind.h"
#include "maroon/jit.h"

namespace maroon::py_bind {

void bind_jit(py::module_& m) {
  py::class_<JitCapture>(m, "JitCapture")
      .def(py::init<>())
      .def("capture",
           [](JitCapture& j, const std::vector<Tensor>& inputs, const py::function& body) {
             // body() returns the step's output tensors as a list.
             return j.capture(inputs, [&] { return body().cast<std::vector<Tensor>>(); });
           },
           py::arg("inputs"), py::arg("body"))
      .def("replay", &JitCapture::replay, py::arg("inputs"))
      .def_property_readonly("captured", &JitCapture::captured)
      .def_property_readonly("schedules", &JitCapture::schedules)
      .def_property_readonly("kernels", &JitCapture::kernels)
      .def_property_readonly("host_reads_of_inputs", &JitCapture::host_reads_of_inputs)
      .def_property_readonly("first_host_read_of_inputs", &JitCapture::first_host_read_of_inputs);
}

}  // namespace maroon::py_bind
