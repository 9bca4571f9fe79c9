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

// Protobuf says only that parsing failed; nesting past its recursion limit is one of the causes.
const std::string kNotAModel =
    "not a valid ONNX model (malformed or truncated protobuf, or messages nested deeper than " +
    std::to_string(kMaxMessageDepth) + " levels: subgraphs may nest " + std::to_string(kMaxSubgraphDepth) + " deep)";

// A graph input or output. A subgraph's may be declared without a type (`untyped` is set then;
// nothing is checked); the main graph's must be tensors.
ValueInfo value_info(const ::onnx::ValueInfoProto& v, const std::string& src, bool* untyped = nullptr) {
  ValueInfo vi;
  vi.name = v.name();
  const std::string where = src + ": graph value '" + v.name() + "'";
  const bool no_type = !v.has_type() || v.type().value_case() == ::onnx::TypeProto::VALUE_NOT_SET ||
                       (v.type().has_tensor_type() && v.type().tensor_type().elem_type() == 0);
  if (untyped && no_type) {
    *untyped = true;
    return vi;
  }
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
    default: break;  // GRAPH is converted by the graph loader; sparse tensors, type protos: refused by readers
  }
  return r;
}

// The names a node may read while its graph loads: its own graph's (`local`, growing node by
// node) and, through `outer`, those of the enclosing graphs as they stood at the node that holds
// this subgraph (ONNX's outer scope: only values defined before that node). A chain, not a copy,
// so sibling subgraphs cost nothing per outer name.
struct Names {
  const std::set<std::string>* local;
  const Names* outer;
  bool has(const std::string& n) const {
    for (const Names* s = this; s; s = s->outer)
      if (s->local->count(n)) return true;
    return false;
  }
};

struct Loader {
  std::string base_dir, src;
  int64_t opset;
};

std::shared_ptr<Graph> graph_from_proto(const ::onnx::GraphProto& gp, const Loader& L, const std::string& where,
                                        const Names* outer, int depth);

// Where each value is read for the last time (node index; inputs and subgraph captures count as
// reads, graph outputs are never dropped).
void compute_drops(Graph& g) {
  std::map<std::string, size_t> last;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (const std::string& in : g.nodes[i].inputs)
      if (!in.empty()) last[in] = i;
    for (const std::string& in : g.nodes[i].captures) last[in] = i;
    for (const std::string& out : g.nodes[i].outputs)  // an output nobody reads goes at once
      if (!out.empty()) last[out] = i;
  }
  for (const ValueInfo& v : g.outputs) last.erase(v.name);
  g.drops.assign(g.nodes.size(), {});
  for (const auto& [name, i] : last) g.drops[i].push_back(name);
}

// One node: its operator is known, every input is defined before it (here or in an outer scope),
// its subgraphs load (each checked the same way, one level deeper), and control-flow nodes agree
// with their subgraphs. Adds the node's outputs to `local`.
NodeDef load_node(const ::onnx::NodeProto& n, size_t index, const Loader& L, const std::string& where, Graph& g,
                  std::set<std::string>& local, const Names* outer, int depth) {
  NodeDef d;
  d.name = n.name().empty() ? "#" + std::to_string(index) : n.name();
  d.op = n.op_type();
  d.domain = n.domain();
  d.inputs.assign(n.input().begin(), n.input().end());
  d.outputs.assign(n.output().begin(), n.output().end());
  const std::string at = where + ": " + d.label();
  if (!d.domain.empty() && d.domain != "ai.onnx")
    throw OnnxError(at + ": operator domain '" + d.domain + "' is not supported (only the default ONNX domain)");
  if (!op_table().count(d.op))
    throw OnnxError(at + ": operator " + d.op + " is not supported (docs/onnx.md lists the supported operators)");
  const Names here{&local, outer};
  for (const std::string& in : d.inputs) {
    if (in.empty() || local.count(in)) continue;
    if (!outer || !outer->has(in))
      throw OnnxError(at + ": input '" + in + "' is not defined by an earlier node, an initializer or a graph input" +
                      (outer ? " (here or in an enclosing graph)" : ""));
    g.free.insert(in);
  }
  for (const auto& a : n.attribute()) {
    if (a.has_ref_attr_name()) throw OnnxError(at + ": attribute references are refused");
    if (a.type() != ::onnx::AttributeProto::GRAPH) {
      d.attrs[a.name()] = attr_from_proto(a, L.base_dir, at);
      continue;
    }
    const std::string sub_where = at + " attribute '" + a.name() + "'";
    if (depth + 1 > kMaxSubgraphDepth)
      throw OnnxError(sub_where + ": subgraphs nest deeper than " + std::to_string(kMaxSubgraphDepth) + " levels");
    Attr r;
    r.kind = Attr::Kind::Graph;
    r.type_name = "GRAPH";
    auto sub = graph_from_proto(a.g(), L, sub_where, &here, depth + 1);
    for (const std::string& name : sub->free) {
      d.captures.insert(name);
      if (!local.count(name)) g.free.insert(name);
    }
    r.g = std::move(sub);
    d.attrs[a.name()] = std::move(r);
  }
  try {
    check_control_node(OpCtx{d, L.opset, {}});
  } catch (const OnnxError& e) {
    throw OnnxError(where + ": " + e.what());
  }
  for (const std::string& out : d.outputs)
    if (!out.empty()) local.insert(out);
  return d;
}

// A GraphProto: the model's graph (outer == nullptr) or a subgraph `depth` levels down, whose
// inputs are its formal parameters (Loop's iteration number, condition and carried values; Scan's
// state and slices) and which may read its enclosing graphs' values by name.
std::shared_ptr<Graph> graph_from_proto(const ::onnx::GraphProto& gp, const Loader& L, const std::string& where,
                                        const Names* outer, int depth) {
  auto g = std::make_shared<Graph>();
  g->source = outer ? "" : L.src;
  g->name = gp.name();
  g->opset = L.opset;
  std::set<std::string> local;
  for (const auto& t : gp.initializer()) {
    if (t.name().empty()) throw OnnxError(where + ": an initializer has no name");
    g->initializers.insert_or_assign(t.name(), tensor_from_proto(t, L.base_dir, where + ": initializer '" + t.name() + "'"));
    local.insert(t.name());
  }
  if (gp.sparse_initializer_size() > 0) throw OnnxError(where + ": sparse initializers are refused");
  for (const auto& v : gp.input()) {
    // Before IR version 4 the main graph lists its initializers among the inputs: not required.
    if (!outer && g->initializers.count(v.name())) continue;
    bool untyped = false;
    g->inputs.push_back(value_info(v, where, outer ? &untyped : nullptr));
    if (untyped) g->untyped.insert(v.name());
    local.insert(v.name());
  }
  for (const auto& v : gp.output()) {
    bool untyped = false;
    g->outputs.push_back(value_info(v, where, outer ? &untyped : nullptr));
    if (untyped) g->untyped.insert(v.name());
  }
  for (int i = 0; i < gp.node_size(); ++i)
    g->nodes.push_back(load_node(gp.node(i), i, L, where, *g, local, outer, depth));
  for (const auto& v : g->outputs) {
    if (local.count(v.name)) continue;
    if (!outer || !outer->has(v.name)) throw OnnxError(where + ": graph output '" + v.name + "' is never computed");
    g->free.insert(v.name);  // a subgraph may return an outer value as it is
  }
  compute_drops(*g);
  return g;
}

Model from_proto(const ::onnx::ModelProto& m, const std::string& base_dir, const std::string& src) {
  Loader L{base_dir, src, 0};
  for (const auto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") L.opset = o.version();
  if (L.opset <= 0) throw OnnxError(src + ": the model imports no opset of the default ONNX domain");
  if (!m.has_graph()) throw OnnxError(src + ": the model has no graph");
  auto g = graph_from_proto(m.graph(), L, src, nullptr, 0);
  g->producer = m.producer_name() + (m.producer_version().empty() ? "" : " " + m.producer_version());
  return Model(g);
}

}  // namespace

std::string NodeDef::label() const { return "node '" + name + "' (" + op + ")"; }

Model load_bytes(std::string_view bytes, const std::string& base_dir, const std::string& name) {
  ::onnx::ModelProto m;
  if (!parse_message(m, bytes)) throw OnnxError(name + ": " + kNotAModel);
  return from_proto(m, base_dir, name);
}

Model load(const std::string& path) {
  // io's bounded open: a regular file within MAROON_MAX_FILE_BYTES (a FIFO or /dev/zero is
  // refused, never read for ever), under OnnxError like every other refusal here.
  int fd = -1;
  try {
    fd = io::BoundedFile(path, "[onnx] model").release();
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
    cin.SetRecursionLimit(kMaxMessageDepth);
    if (!m.ParseFromCodedStream(&cin) || !cin.ConsumedEntireMessage() || zin.GetErrno() != 0)
      throw OnnxError(path + ": " + kNotAModel);
  }
  std::string dir = std::filesystem::path(path).parent_path().string();
  return from_proto(m, dir.empty() ? "." : dir, path);
}

}  // namespace maroon::onnx
