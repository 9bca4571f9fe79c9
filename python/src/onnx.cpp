// maroon.onnx: load(path) -> OnnxModel, whose run() takes numpy arrays or Tensors (a list in the
// model's input order, or a dict by name) and returns Tensors. Only converts arguments: loading,
// checking and running are the C++ API's (maroon/onnx.h), so Python and `maroon onnx run` give the
// same bits. Built without ONNX import (the wheel: libonnx is a shared library it must not need),
// the names exist and raise.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bind.h"
#ifdef MAROON_WITH_ONNX
#include "maroon/onnx.h"
#endif

namespace maroon::py_bind {

namespace {

#ifdef MAROON_WITH_ONNX
using ModelPtr = std::shared_ptr<onnx::Model>;

Tensor tensor_of(const py::handle& x) {
  if (py::isinstance<Tensor>(x)) return x.cast<Tensor>();
  if (py::isinstance<py::array>(x)) return from_numpy(x.cast<py::array>());
  throw py::type_error("[onnx] an input must be a numpy array or a maroon.Tensor, not " +
                       std::string(py::str(py::type::of(x).attr("__name__"))));
}

// The run itself without the GIL: a replayed run (maroon/onnx.h) computes every kernel inside
// run(), as realize() does, and other Python threads go on meanwhile (realize's binding too).
template <class In>
std::vector<Tensor> run_released(const onnx::Model& m, const In& in) {
  py::gil_scoped_release release;
  return m.run(in);
}

std::vector<Tensor> run(const onnx::Model& m, const py::object& inputs) {
  if (py::isinstance<py::dict>(inputs)) {
    std::map<std::string, Tensor> named;
    for (auto [k, v] : inputs.cast<py::dict>()) named.insert_or_assign(k.cast<std::string>(), tensor_of(v));
    return run_released(m, named);
  }
  std::vector<Tensor> list;
  if (py::isinstance<py::array>(inputs) || py::isinstance<Tensor>(inputs)) list.push_back(tensor_of(inputs));
  else
    for (const py::handle& v : inputs) list.push_back(tensor_of(v));
  return run_released(m, list);
}

py::list infos(const std::vector<onnx::ValueInfo>& vs) {
  py::list out;
  for (const auto& v : vs) {
    py::object shape = py::none();
    if (v.has_shape) {
      py::list dims;
      for (size_t i = 0; i < v.dims.size(); ++i)
        dims.append(v.dims[i] >= 0 ? py::object(py::int_(v.dims[i]))
                                   : v.dim_params[i].empty() ? py::object(py::none()) : py::object(py::str(v.dim_params[i])));
      shape = py::tuple(dims);
    }
    out.append(py::make_tuple(v.name, std::string(dtype_name(v.dtype)), shape));
  }
  return out;
}
#else
struct Absent {};
using ModelPtr = std::shared_ptr<Absent>;
[[noreturn]] void absent() {
  throw std::runtime_error("[onnx] this build of maroon has no ONNX import (build with libonnx-dev and "
                           "libprotobuf-dev, -DMAROON_ONNX=ON)");
}
#endif

}  // namespace

void bind_onnx(py::module_& m) {
#ifdef MAROON_WITH_ONNX
  py::class_<onnx::Model, ModelPtr>(m, "OnnxModel")
      .def("run", [](const onnx::Model& x, const py::object& inputs) { return run(x, inputs); }, py::arg("inputs"))
      .def("__call__", [](const onnx::Model& x, const py::object& inputs) { return run(x, inputs); }, py::arg("inputs"))
      .def_property_readonly("inputs", [](const onnx::Model& x) { return infos(x.inputs()); })
      .def_property_readonly("outputs", [](const onnx::Model& x) { return infos(x.outputs()); })
      .def_property_readonly("opset", &onnx::Model::opset)
      .def_property(
          "replay", [](const onnx::Model& x) { return x.replay(); },
          [](const onnx::Model& x, bool on) { x.set_replay(on); },
          "Whether repeated runs with one input signature replay the captured kernels (maroon/onnx.h)")
      .def("run_stats", [](const onnx::Model& x) {
        onnx::RunStats s = x.run_stats();
        py::dict d;
        d["plain"] = s.plain, d["captures"] = s.captures, d["replays"] = s.replays, d["refused"] = s.refused;
        return d;
      });
  m.def("onnx_load", [](const std::string& path) { return std::make_shared<onnx::Model>(onnx::load(path)); },
        py::arg("path"));
#else
  py::class_<Absent, ModelPtr>(m, "OnnxModel")
      .def("run", [](const Absent&, const py::object&) -> py::list { absent(); }, py::arg("inputs"))
      .def("__call__", [](const Absent&, const py::object&) -> py::list { absent(); }, py::arg("inputs"))
      .def_property_readonly("inputs", [](const Absent&) -> py::list { absent(); })
      .def_property_readonly("outputs", [](const Absent&) -> py::list { absent(); })
      .def_property_readonly("opset", [](const Absent&) -> int64_t { absent(); })
      .def_property(
          "replay", [](const Absent&) -> bool { absent(); }, [](const Absent&, bool) { absent(); },
          "Whether repeated runs with one input signature replay the captured kernels (maroon/onnx.h)")
      .def("run_stats", [](const Absent&) -> py::dict { absent(); });
  m.def("onnx_load", [](const std::string&) -> ModelPtr { absent(); }, py::arg("path"));
#endif
}

}  // namespace maroon::py_bind
