// maroon.infer and maroon.inference_digest: inference with an output digest (maroon/inference.h).
// Only converts arguments; the inputs, their conversion to floats and the digest are the C++
// API's, so Python, the CLI, C++ and C give the same bytes.
#include <pybind11/pybind11.h>

#include "bind.h"
#include "maroon/digest.h"
#include "maroon/inference.h"

namespace maroon::py_bind {

namespace {

struct PyResult {
  std::string digest, json, model;
  std::vector<int64_t> classes;
  std::vector<Tensor> outputs;
};

bool is_path(const py::handle& o) { return py::isinstance<py::str>(o) || py::hasattr(o, "__fspath__"); }
std::string path_of(const py::handle& o) { return py::module_::import("os").attr("fspath")(o).cast<std::string>(); }

std::shared_ptr<infer::Model> model_of(const py::handle& m) {
  if (py::isinstance<infer::Model>(m)) return m.cast<std::shared_ptr<infer::Model>>();
  if (is_path(m)) return std::make_shared<infer::Model>(infer::load_model(path_of(m)));
  throw py::type_error("[infer] model must be a path or a maroon.Model, not " +
                       std::string(py::str(py::type::of(m).attr("__name__"))));
}

infer::Inputs inputs_of(const py::handle& x, const std::optional<std::string>& format, int64_t start,
                        std::optional<int64_t> count) {
  int64_t c = count.value_or(-1);
  if (is_path(x)) return infer::load_inputs(path_of(x), infer::parse_format(format.value_or("auto")), start, c);
  if (format) throw py::value_error("[infer] format= applies to a file path, not to an array");
  if (py::isinstance<py::bytes>(x)) {
    std::string_view b = x.cast<py::bytes>();
    return infer::parse_inputs(b, infer::Format::Raw, "<bytes>", start, c);
  }
  if (py::isinstance<py::array>(x)) return infer::array_inputs(from_numpy(x.cast<py::array>()), start, c);
  throw py::type_error("[infer] input must be a path, raw pixel bytes or a numpy array");
}

}  // namespace

void bind_infer(py::module_& m) {
  py::class_<infer::Model, std::shared_ptr<infer::Model>>(m, "Model")
      .def_property_readonly("kind", [](const infer::Model& x) { return x.net->kind(); })
      .def_property_readonly("sha256", [](const infer::Model& x) { return x.file_sha256; });
  m.def("load_model", [](const py::object& path) { return model_of(path); }, py::arg("path"),
        "A Maroon weights file (.safetensors of the MNIST MLP or CNN) for maroon.infer.");
  py::class_<PyResult>(m, "InferenceResult")
      .def_readonly("digest", &PyResult::digest)
      .def_readonly("classes", &PyResult::classes)
      .def_readonly("outputs", &PyResult::outputs)
      .def_readonly("json", &PyResult::json)
      .def("__repr__", [](const PyResult& r) {
        return "InferenceResult(digest='" + r.digest + "', n=" + std::to_string(r.classes.size()) + ")";
      });
  m.def("infer", [](const py::object& model, const py::object& input, std::optional<std::string> format,
                    int64_t start, std::optional<int64_t> count) {
    std::shared_ptr<infer::Model> md = model_of(model);
    infer::Inputs in = inputs_of(input, format, start, count);
    infer::Result r = infer::run(*md->net, in.x);
    return PyResult{r.digest, infer::to_json(*md, in, r), md->net->kind(), r.classes, r.outputs};
  }, py::arg("model"), py::arg("input"), py::kw_only(), py::arg("format") = py::none(), py::arg("start") = 0,
     py::arg("count") = py::none(),
     "Runs a model (path or maroon.Model) on images: a file (idx/npy/raw, by name or format=), raw uint8 "
     "pixel bytes, or a numpy array (uint8 pixels or float32; read as numpy.save would write it). Returns "
     "digest, classes, outputs and the JSON document `maroon infer --json` prints.");
  m.def("inference_digest", [](const std::vector<Tensor>& ts) { return tensors_digest(kInferenceTag, ts); },
        py::arg("outputs"), "The inference digest of a list of output tensors (docs/spec-model.md).");
}

}  // namespace maroon::py_bind
