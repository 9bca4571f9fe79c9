// ModelProto -> Graph: parsed by Debian's libonnx_proto/libprotobuf (not a hand-written reader),
// then converted once to plain C++ (graph.h) and checked: the default domain's opset, every node's
// operator and domain, every value defined before it is used (ONNX requires topological order),
// initializers converted to tensors. Everything a run will need is refused here, at load, if it
// cannot work, naming the node and its operator.
#include <filesystem>
#include <set>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include "io/files.h"
#include "onnx/graph.h"
#include "onnx/proto.h"

namespace maroon::onnx {

namespace {

ValueInfo value_info(const ::onnx::ValueInfoProto& v, const std::string& src) {
  ValueInfo vi;
  vi.name = v.name();
  const std::string where = src + ": graph value '" + v.name() + "'";
  if (!v.type().has_tensor_type())
    throw OnnxError(where + ": only tensor values are supported (sequences, maps and optionals are refused)");
  const auto& tt = v.type().tensor_type();
  vi.dtype = dtype_from_onnx(tt.elem_type(), where);
  vi.has_shape = tt.has_shape();
  for (const auto& d : tt.shape().dim()) {
    vi.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
    vi.dim_params.push_back(d.has_dim_param() ? d.dim_param() : "");
    if (d.has_dim_value() && d.dim_value() < 0) throw OnnxError(where + ": negative dimension");
  }
  return vi;
}

Attr attr_from_proto(const ::onnx::AttributeProto& a, const std::string& src, const std::string& where) {
  using A = ::onnx::AttributeProto;
  Attr r;
  r.type_name = A::AttributeType_IsValid(a.type()) ? A::AttributeType_Name(a.type()) : std::to_string(a.type());
  switch (a.type()) {
    case A::FLOAT: r.kind = Attr::Kind::Float; r.f = a.f(); break;
    case A::INT: r.kind = Attr::Kind::Int; r.i = a.i(); break;
    case A::STRING: r.kind = Attr::Kind::String; r.s = a.s(); break;
    case A::TENSOR:
      r.kind = Attr::Kind::Tensor;
      r.t = tensor_from_proto(a.t(), src, where + " attribute '" + a.name() + "'");
      break;
    case A::FLOATS: r.kind = Attr::Kind::Floats; r.floats.assign(a.floats().begin(), a.floats().end()); break;
    case A::INTS: r.kind = Attr::Kind::Ints; r.ints.assign(a.ints().begin(), a.ints().end()); break;
    case A::STRINGS: r.kind = Attr::Kind::Strings; r.strings.assign(a.strings().begin(), a.strings().end()); break;
    default: break;  // graphs, sparse tensors, type protos: an operator that reads one refuses it
  }
  return r;
}

NodeDef node_from_proto(const ::onnx::NodeProto& n, size_t index, const std::string& base_dir,
                        const std::string& src) {
  NodeDef d;
  d.name = n.name().empty() ? "#" + std::to_string(index) : n.name();
  d.op = n.op_type();
  d.domain = n.domain();
  d.inputs.assign(n.input().begin(), n.input().end());
  d.outputs.assign(n.output().begin(), n.output().end());
  for (const auto& a : n.attribute()) {
    if (a.has_ref_attr_name()) throw OnnxError(src + ": " + d.label() + ": attribute references are refused");
    d.attrs[a.name()] = attr_from_proto(a, base_dir, src + ": " + d.label());
  }
  return d;
}

// Every node's operator is known, and every value is defined before a node reads it.
void check_graph(const Graph& g) {
  std::set<std::string> defined;
  for (const auto& [name, t] : g.initializers) defined.insert(name);
  for (const auto& v : g.inputs) defined.insert(v.name);
  const OpTable& ops = op_table();
  for (const NodeDef& n : g.nodes) {
    if (!n.domain.empty() && n.domain != "ai.onnx")
      throw OnnxError(g.source + ": " + n.label() + ": operator domain '" + n.domain +
                      "' is not supported (only the default ONNX domain)");
    if (!ops.count(n.op))
      throw OnnxError(g.source + ": " + n.label() + ": operator " + n.op +
                      " is not supported (docs/onnx.md lists the supported operators)");
    for (const std::string& in : n.inputs)
      if (!in.empty() && !defined.count(in))
        throw OnnxError(g.source + ": " + n.label() + ": input '" + in +
                        "' is not defined by an earlier node, an initializer or a graph input");
    for (const std::string& out : n.outputs)
      if (!out.empty()) defined.insert(out);
  }
  for (const auto& v : g.outputs)
    if (!defined.count(v.name)) throw OnnxError(g.source + ": graph output '" + v.name + "' is never computed");
}

Model from_proto(const ::onnx::ModelProto& m, const std::string& base_dir, const std::string& src) {
  auto g = std::make_shared<Graph>();
  g->source = src;
  g->producer = m.producer_name() + (m.producer_version().empty() ? "" : " " + m.producer_version());
  for (const auto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") g->opset = o.version();
  if (g->opset <= 0) throw OnnxError(src + ": the model imports no opset of the default ONNX domain");
  if (!m.has_graph()) throw OnnxError(src + ": the model has no graph");
  const auto& gp = m.graph();
  for (const auto& t : gp.initializer()) {
    if (t.name().empty()) throw OnnxError(src + ": an initializer has no name");
    g->initializers.insert_or_assign(t.name(), tensor_from_proto(t, base_dir, src + ": initializer '" + t.name() + "'"));
  }
  if (gp.sparse_initializer_size() > 0) throw OnnxError(src + ": sparse initializers are refused");
  // Before IR version 4 initializers are listed among the inputs too: those are not required.
  for (const auto& v : gp.input())
    if (!g->initializers.count(v.name())) g->inputs.push_back(value_info(v, src));
  for (const auto& v : gp.output()) g->outputs.push_back(value_info(v, src));
  for (int i = 0; i < gp.node_size(); ++i) g->nodes.push_back(node_from_proto(gp.node(i), i, base_dir, src));
  check_graph(*g);
  return Model(g);
}

}  // namespace

std::string NodeDef::label() const { return "node '" + name + "' (" + op + ")"; }

Model load_bytes(std::string_view bytes, const std::string& base_dir, const std::string& name) {
  ::onnx::ModelProto m;
  if (!parse_message(m, bytes)) throw OnnxError(name + ": not a valid ONNX model (malformed or truncated protobuf)");
  return from_proto(m, base_dir, name);
}

Model load(const std::string& path) {
  // io's bounded open: a regular file within MAROON_MAX_FILE_BYTES (a FIFO or /dev/zero is
  // refused, never read for ever), under OnnxError like every other refusal here.
  int fd = -1;
  uint64_t size = 0;
  try {
    fd = io::open_bounded(path, "[onnx] model", io::max_file_bytes(), &size);
  } catch (const FormatError& e) {
    throw OnnxError(e.what());
  }
  // Parsed straight from the file: its bytes are not held a second time beside the parsed
  // message (initializers are copied once more, into their tensors).
  ::onnx::ModelProto m;
  {
    google::protobuf::io::FileInputStream zin(fd);
    zin.SetCloseOnDelete(true);
    google::protobuf::io::CodedInputStream cin(&zin);
    cin.SetTotalBytesLimit(INT32_MAX);
    if (!m.ParseFromCodedStream(&cin) || !cin.ConsumedEntireMessage() || zin.GetErrno() != 0)
      throw OnnxError(path + ": not a valid ONNX model (malformed or truncated protobuf)");
  }
  std::string dir = std::filesystem::path(path).parent_path().string();
  return from_proto(m, dir.empty() ? "." : dir, path);
}

}  // namespace maroon::onnx
