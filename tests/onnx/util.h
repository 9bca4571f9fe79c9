// Building ONNX models in tests with protobuf's API (ONNX's generated classes).
#pragma once
#include <onnx/onnx_pb.h>

#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

namespace maroon::onnx_test {

inline void set_type(::onnx::ValueInfoProto* v, const std::string& name, int elem, const std::vector<std::string>& dims) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  for (const std::string& d : dims) {
    auto* dim = tt->mutable_shape()->add_dim();
    if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0]))) dim->set_dim_value(std::stoll(d));
    else dim->set_dim_param(d);
  }
}

// n floats in [-2, 2) from a linear congruential generator: the same values on every machine,
// for models' weights and inputs.
inline std::vector<float> lcg_floats(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (float& f : v) {
    seed = seed * 1664525u + 1013904223u;
    f = static_cast<float>(seed >> 8) / 4194304.0f - 2.0f;
  }
  return v;
}

inline ::onnx::NodeProto* add_node(::onnx::GraphProto* g, const std::string& op, std::vector<std::string> in,
                            std::vector<std::string> out, const std::string& name = "") {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name.empty() ? op + "_" + std::to_string(g->node_size()) : name);
  for (auto& s : in) n->add_input(s);
  for (auto& s : out) n->add_output(s);
  return n;
}

inline ::onnx::TensorProto* add_raw_floats(::onnx::GraphProto* g, const std::string& name, const std::vector<float>& v,
                                    std::vector<int64_t> dims) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(::onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4));
  return t;
}

inline void set_attr(::onnx::NodeProto* n, const std::string& name, std::vector<int64_t> ints) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INTS);
  for (int64_t i : ints) a->add_ints(i);
}

inline void set_attr(::onnx::NodeProto* n, const std::string& name, int64_t i) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(i);
}

// A GRAPH attribute `name` on `n` (If's branches, Loop's and Scan's body), its graph named `name`.
inline ::onnx::GraphProto* add_graph_attr(::onnx::NodeProto* n, const std::string& name) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(name);
  return a->mutable_g();
}

}  // namespace maroon::onnx_test
