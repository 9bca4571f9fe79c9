// Bindings for maroon::nn (layers) and maroon::optim (optimizers), as tinygrad's nn and nn.optim.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "maroon/nn.h"
#include "maroon/optim.h"

namespace py = pybind11;
using namespace maroon;

void bind_nn(py::module_& m) {
  py::module_ nn = m.def_submodule("nn", "tinygrad's nn layers");
  py::class_<nn::Module>(nn, "Module")
      .def("parameters", &nn::Module::parameters)
      .def("state_dict", [](const nn::Module& mod) {
        py::dict d;
        for (auto& [k, v] : mod.state_dict()) d[py::str(k)] = v;
        return d;
      });
  py::class_<nn::Linear, nn::Module>(nn, "Linear")
      .def(py::init<int64_t, int64_t, bool>(), py::arg("in_features"), py::arg("out_features"),
           py::arg("bias") = true)
      .def("__call__", &nn::Linear::operator())
      .def_readwrite("weight", &nn::Linear::weight)
      .def_readwrite("bias", &nn::Linear::bias);
  py::class_<nn::Conv2d, nn::Module>(nn, "Conv2d")
      .def(py::init([](int64_t cin, int64_t cout, py::object k, int64_t stride, int64_t padding, int64_t dilation,
                       int64_t groups, bool bias) {
             std::vector<int64_t> ks = py::isinstance<py::int_>(k) ? std::vector<int64_t>{k.cast<int64_t>(), k.cast<int64_t>()}
                                                                    : k.cast<std::vector<int64_t>>();
             return nn::Conv2d(cin, cout, ks, {stride}, {padding}, {dilation}, groups, bias);
           }),
           py::arg("in_channels"), py::arg("out_channels"), py::arg("kernel_size"), py::arg("stride") = 1,
           py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("groups") = 1, py::arg("bias") = true)
      .def("__call__", &nn::Conv2d::operator())
      .def_readwrite("weight", &nn::Conv2d::weight)
      .def_readwrite("bias", &nn::Conv2d::bias);
  py::class_<nn::BatchNorm, nn::Module>(nn, "BatchNorm")
      .def(py::init<int64_t, double, bool, bool, double>(), py::arg("sz"), py::arg("eps") = 1e-5,
           py::arg("affine") = true, py::arg("track_running_stats") = true, py::arg("momentum") = 0.1)
      .def("__call__", &nn::BatchNorm::operator())
      .def_readwrite("weight", &nn::BatchNorm::weight)
      .def_readwrite("bias", &nn::BatchNorm::bias)
      .def_readwrite("running_mean", &nn::BatchNorm::running_mean)
      .def_readwrite("running_var", &nn::BatchNorm::running_var);
  nn.attr("BatchNorm2d") = nn.attr("BatchNorm");
  py::class_<nn::LayerNorm, nn::Module>(nn, "LayerNorm")
      .def(py::init([](py::object shape, double eps, bool affine) {
             Shape s = py::isinstance<py::int_>(shape) ? Shape{shape.cast<int64_t>()} : shape.cast<Shape>();
             return nn::LayerNorm(s, eps, affine);
           }),
           py::arg("normalized_shape"), py::arg("eps") = 1e-5, py::arg("elementwise_affine") = true)
      .def("__call__", &nn::LayerNorm::operator())
      .def_readwrite("weight", &nn::LayerNorm::weight)
      .def_readwrite("bias", &nn::LayerNorm::bias);
  py::class_<nn::Embedding, nn::Module>(nn, "Embedding")
      .def(py::init<int64_t, int64_t>(), py::arg("vocab_size"), py::arg("embed_size"))
      .def("__call__", &nn::Embedding::operator())
      .def_readwrite("weight", &nn::Embedding::weight);

  py::module_ optim = nn.def_submodule("optim", "tinygrad's optimizers");
  py::class_<optim::Optimizer>(optim, "Optimizer")
      .def("zero_grad", &optim::Optimizer::zero_grad)
      .def("step", &optim::Optimizer::step)
      .def_readwrite("lr", &optim::Optimizer::lr);
  py::class_<optim::SGD, optim::Optimizer>(optim, "SGD")
      .def(py::init<std::vector<Tensor>, double, double, double, bool, bool>(), py::arg("params"),
           py::arg("lr") = 0.001, py::arg("momentum") = 0.0, py::arg("weight_decay") = 0.0,
           py::arg("nesterov") = false, py::arg("classic") = false);
  py::class_<optim::Adam, optim::Optimizer>(optim, "Adam")
      .def(py::init<std::vector<Tensor>, double, double, double, double>(), py::arg("params"),
           py::arg("lr") = 0.001, py::arg("b1") = 0.9, py::arg("b2") = 0.999, py::arg("eps") = 1e-8);
}
