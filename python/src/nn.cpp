// maroon::nn (layers, state dicts, safetensors) and maroon::optim, as tinygrad's nn, nn.state
// and nn.optim.
#include "bind.h"
#include "maroon/nn.h"
#include "maroon/optim.h"
#include "maroon/safetensors.h"
#include "maroon/transformer.h"

namespace maroon::py_bind {

namespace {

std::vector<int64_t> pair_of(const py::handle& o, const char* op) {
  auto v = int_list(o, op);
  return v.size() == 1 ? std::vector<int64_t>{v[0], v[0]} : v;
}

py::dict dict_of(const nn::StateDict& sd) {
  py::dict d;
  for (const auto& [k, v] : sd) d[py::str(k)] = v;
  return d;
}

nn::StateDict state_of(const py::dict& d) {
  nn::StateDict sd;
  for (auto [k, v] : d) sd.push_back({k.cast<std::string>(), v.cast<Tensor>()});
  return sd;
}

std::map<std::string, std::string> metadata_of(const py::object& m) {
  std::map<std::string, std::string> out;
  if (m.is_none()) return out;
  for (auto [k, v] : m.cast<py::dict>()) out[py::str(k)] = py::str(v);
  return out;
}

template <class Layer>
void def_state(py::class_<Layer, nn::Module>& c) {
  c.def("__call__", [](Layer& l, const Tensor& x) { return l(x); }, py::arg("x"));
}

void bind_layers_nn(py::module_& nnm) {
  py::class_<nn::Module>(nnm, "Module")
      .def("parameters", &nn::Module::parameters)
      .def("state_dict", [](const nn::Module& mod) { return dict_of(mod.state_dict()); });
  py::class_<nn::Linear, nn::Module> lin(nnm, "Linear");
  lin.def(py::init<int64_t, int64_t, bool>(), py::arg("in_features"), py::arg("out_features"), py::arg("bias") = true)
      .def_readwrite("weight", &nn::Linear::weight)
      .def_readwrite("bias", &nn::Linear::bias);
  def_state(lin);
  py::class_<nn::Conv2d, nn::Module> conv(nnm, "Conv2d");
  conv.def(py::init([](int64_t cin, int64_t cout, const py::object& k, const py::object& stride, const py::object& padding,
                       const py::object& dilation, int64_t groups, bool bias) {
             if (py::isinstance<py::str>(padding)) throw ShapeError("[Conv2d] string padding is not supported");
             return nn::Conv2d(cin, cout, pair_of(k, "Conv2d"), int_list(stride, "Conv2d"), int_list(padding, "Conv2d"),
                               int_list(dilation, "Conv2d"), groups, bias);
           }),
           py::arg("in_channels"), py::arg("out_channels"), py::arg("kernel_size"), py::arg("stride") = 1,
           py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("groups") = 1, py::arg("bias") = true)
      .def_readwrite("weight", &nn::Conv2d::weight)
      .def_readwrite("bias", &nn::Conv2d::bias)
      .def_readonly("kernel_size", &nn::Conv2d::kernel_size)
      .def_readonly("groups", &nn::Conv2d::groups);
  def_state(conv);
  py::class_<nn::BatchNorm, nn::Module> bn(nnm, "BatchNorm");
  bn.def(py::init<int64_t, double, bool, bool, double>(), py::arg("sz"), py::arg("eps") = 1e-5, py::arg("affine") = true,
         py::arg("track_running_stats") = true, py::arg("momentum") = 0.1)
      .def_readwrite("weight", &nn::BatchNorm::weight)
      .def_readwrite("bias", &nn::BatchNorm::bias)
      .def_readwrite("running_mean", &nn::BatchNorm::running_mean)
      .def_readwrite("running_var", &nn::BatchNorm::running_var)
      .def_readwrite("num_batches_tracked", &nn::BatchNorm::num_batches_tracked)
      .def_readonly("eps", &nn::BatchNorm::eps)
      .def_readonly("momentum", &nn::BatchNorm::momentum);
  def_state(bn);
  nnm.attr("BatchNorm2d") = nnm.attr("BatchNorm");
  py::class_<nn::LayerNorm, nn::Module> ln(nnm, "LayerNorm");
  ln.def(py::init([](const py::object& shape, double eps, bool affine) {
           return nn::LayerNorm(int_list(shape, "LayerNorm"), eps, affine);
         }),
         py::arg("normalized_shape"), py::arg("eps") = 1e-5, py::arg("elementwise_affine") = true)
      .def_readwrite("weight", &nn::LayerNorm::weight)
      .def_readwrite("bias", &nn::LayerNorm::bias)
      .def_readonly("eps", &nn::LayerNorm::eps);
  def_state(ln);
  py::class_<nn::GroupNorm, nn::Module> gn(nnm, "GroupNorm");
  gn.def(py::init<int64_t, int64_t, double, bool>(), py::arg("num_groups"), py::arg("num_channels"), py::arg("eps") = 1e-5,
         py::arg("affine") = true)
      .def_readwrite("weight", &nn::GroupNorm::weight)
      .def_readwrite("bias", &nn::GroupNorm::bias)
      .def_readonly("eps", &nn::GroupNorm::eps);
  def_state(gn);
  py::class_<nn::Embedding, nn::Module> emb(nnm, "Embedding");
  emb.def(py::init<int64_t, int64_t>(), py::arg("vocab_size"), py::arg("embed_size"))
      .def_readwrite("weight", &nn::Embedding::weight)
      .def_readonly("vocab_size", &nn::Embedding::vocab_size)
      .def_readonly("embed_size", &nn::Embedding::embed_size);
  def_state(emb);
  py::class_<nn::RMSNorm, nn::Module> rms(nnm, "RMSNorm");
  rms.def(py::init<int64_t, double, bool>(), py::arg("dim"), py::arg("eps") = 1e-6, py::arg("elementwise_affine") = true)
      .def_readwrite("weight", &nn::RMSNorm::weight)
      .def_readonly("eps", &nn::RMSNorm::eps);
  def_state(rms);
  nnm.def("precompute_freqs_cis", &nn::precompute_freqs_cis, py::arg("dim"), py::arg("end"), py::arg("theta") = 10000.0);
  nnm.def("apply_rope", &nn::apply_rope, py::arg("x"), py::arg("freqs_cis"));
}

void bind_state(py::module_ st) {
  // The module walk (tinygrad's get_state_dict over objects) is in maroon/nn/state.py; these
  // are the C++ pieces it calls.
  st.def("load_state_dict", [](const py::dict& into, const py::dict& from, bool strict) {
    std::map<std::string, Tensor> f;
    for (auto [k, v] : from) f.emplace(k.cast<std::string>(), v.cast<Tensor>());
    return nn::load_state_dict(state_of(into), f, strict);
  }, py::arg("into"), py::arg("state_dict"), py::arg("strict") = true);
  // checksum=True adds the SHA-256 of the data to the metadata; safe_load verifies it.
  st.def("safe_save", [](const py::dict& tensors, const std::string& path, const py::object& metadata, bool checksum) {
    nn::safe_save(state_of(tensors), path, metadata_of(metadata), checksum);
  }, py::arg("tensors"), py::arg("fn"), py::arg("metadata") = py::none(), py::kw_only(), py::arg("checksum") = false);
  st.def("safe_save_bytes", [](const py::dict& tensors, const py::object& metadata, bool checksum) {
    return py::bytes(nn::safe_save_bytes(state_of(tensors), metadata_of(metadata), checksum));
  }, py::arg("tensors"), py::arg("metadata") = py::none(), py::kw_only(), py::arg("checksum") = false);
  st.def("safe_load", [](const std::string& path) { return dict_of(nn::safe_load(path)); }, py::arg("fn"));
  st.def("safe_load_bytes", [](const py::bytes& b) {
    std::string_view v = b;
    return dict_of(nn::safe_load_bytes(v));
  }, py::arg("data"));
  st.def("safe_load_metadata", &nn::safe_load_metadata, py::arg("fn"));
}

void bind_optim(py::module_ om) {
  py::class_<optim::Optimizer>(om, "Optimizer")
      .def("zero_grad", &optim::Optimizer::zero_grad)
      .def("step", &optim::Optimizer::step)
      .def_property_readonly("params", &optim::Optimizer::params)
      .def_readwrite("lr", &optim::Optimizer::lr);
  py::class_<optim::LARS, optim::Optimizer>(om, "LARS")
      .def(py::init<std::vector<Tensor>, double, double, double, bool, bool, bool, double>(), py::arg("params"),
           py::arg("lr") = 0.001, py::arg("momentum") = 0.9, py::arg("weight_decay") = 1e-4, py::arg("nesterov") = false,
           py::arg("classic") = true, py::arg("pre_wd") = true, py::arg("tcoef") = 0.001)
      .def_readonly("b", &optim::LARS::b);
  py::class_<optim::SGD, optim::LARS>(om, "SGD")
      .def(py::init<std::vector<Tensor>, double, double, double, bool, bool>(), py::arg("params"), py::arg("lr") = 0.001,
           py::arg("momentum") = 0.0, py::arg("weight_decay") = 0.0, py::arg("nesterov") = false, py::arg("classic") = false);
  py::class_<optim::LAMB, optim::Optimizer>(om, "LAMB")
      .def(py::init<std::vector<Tensor>, double, double, double, double, double, bool>(), py::arg("params"),
           py::arg("lr") = 0.001, py::arg("b1") = 0.9, py::arg("b2") = 0.999, py::arg("eps") = 1e-6,
           py::arg("weight_decay") = 0.0, py::arg("adam") = false)
      .def_readonly("m", &optim::LAMB::m)
      .def_readonly("v", &optim::LAMB::v)
      .def_readonly("b1_t", &optim::LAMB::b1_t)
      .def_readonly("b2_t", &optim::LAMB::b2_t);
  py::class_<optim::Adam, optim::LAMB>(om, "Adam")
      .def(py::init<std::vector<Tensor>, double, double, double, double>(), py::arg("params"), py::arg("lr") = 0.001,
           py::arg("b1") = 0.9, py::arg("b2") = 0.999, py::arg("eps") = 1e-8);
  py::class_<optim::AdamW, optim::LAMB>(om, "AdamW")
      .def(py::init<std::vector<Tensor>, double, double, double, double, double>(), py::arg("params"),
           py::arg("lr") = 0.001, py::arg("b1") = 0.9, py::arg("b2") = 0.999, py::arg("eps") = 1e-8,
           py::arg("weight_decay") = 0.01);
}

}  // namespace

void bind_nn(py::module_& m) {
  py::module_ nnm = m.def_submodule("nn", "tinygrad's nn layers");
  bind_layers_nn(nnm);
  bind_state(nnm.def_submodule("state", "state dicts and safetensors"));
  bind_optim(nnm.def_submodule("optim", "tinygrad's optimizers"));
  bind_datasets(nnm.def_submodule("datasets", "the IDX datasets' reader"));
}

}  // namespace maroon::py_bind
