// The loaded graph, free of protobuf types: the loader (load.cpp) converts each NodeProto's
// attributes once, so operators (ops_*.cpp) read plain C++ values and never see protobuf.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "maroon/onnx.h"
#include "maroon/tensor.h"

namespace maroon::onnx {

struct Graph;

struct Attr {
  enum class Kind { Float, Int, String, Tensor, Floats, Ints, Strings, Graph, Other } kind = Kind::Other;
  double f = 0;
  int64_t i = 0;
  std::string s;
  std::vector<double> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::optional<maroon::Tensor> t;
  std::shared_ptr<const Graph> g;  // a GRAPH attribute: If's branches, Loop's and Scan's body
  std::string type_name;  // for messages: "GRAPH", "SPARSE_TENSOR", ...
};

struct NodeDef {
  std::string name, op, domain;
  std::vector<std::string> inputs, outputs;  // "" marks an omitted optional input or output
  std::map<std::string, Attr> attrs;
  // The outer-scope names this node's subgraphs read (their free names): the node is their last
  // reader for the drop in run_graph, as it is of its inputs.
  std::set<std::string> captures;
  // "node 'conv1' (Conv)": how every message names the node.
  std::string label() const;
};

struct Graph {
  std::string source;  // the file name, for messages ("" in a subgraph: its node names it)
  std::string name;    // GraphProto.name
  std::string producer;
  int64_t opset = 0;
  std::vector<NodeDef> nodes;
  std::map<std::string, Tensor> initializers;
  std::vector<ValueInfo> inputs, outputs;
  // Subgraph inputs and outputs declared without a type (ONNX allows it): not checked.
  std::set<std::string> untyped;
  // The names this graph reads from enclosing graphs (a subgraph's outer-scope values).
  std::set<std::string> free;
  // drops[i]: the values node i reads last (graph outputs never): run_graph erases them after
  // the node, so no handle of ours keeps an intermediate alive.
  std::vector<std::vector<std::string>> drops;
};

// Subgraphs nest at most this deep (an If in a Loop body is depth 2): loading and running recurse
// once per level, so a hostile model must not choose the depth.
constexpr int kMaxSubgraphDepth = 32;
// Protobuf's parser recursion limit (messages nested): enough for kMaxSubgraphDepth levels of
// subgraphs (three messages each: GraphProto, NodeProto, AttributeProto) and the type and tensor
// messages inside the deepest one, so that depth errors past it are protobuf's refusal to parse.
constexpr int kMaxMessageDepth = 3 * kMaxSubgraphDepth + 16;
// A Loop or Scan runs at most this many iterations (a trip count or condition that never ends
// it is refused, not run for ever).
constexpr int64_t kMaxIterations = INT64_C(1) << 20;

// The values a running graph reads by name: its own (initializers, inputs, node outputs) and,
// through `outer`, those of the graphs it is nested in (ONNX's outer scope).
struct Scope {
  std::map<std::string, Tensor> values;
  const Scope* outer = nullptr;
  const Tensor* find(const std::string& name) const;
};

// What an operator sees: its node, the model's opset, and its inputs (nullopt where omitted).
struct OpCtx {
  const NodeDef& node;
  int64_t opset;
  std::vector<std::optional<Tensor>> in;
  const Scope* scope = nullptr;  // the running graph's values, the outer scope of subgraphs

  size_t count() const { return in.size(); }
  bool has(size_t i) const { return i < in.size() && in[i].has_value(); }
  const Tensor& input(size_t i) const;
  // An integer input's values on the host (realizes it: shapes, axes, pads, starts). This is how
  // Shape->Gather->Concat->Reshape chains fold: they compute on small host-sized tensors.
  std::vector<int64_t> ints(size_t i) const;
  double scalar(size_t i) const;  // a one-element input's value

  bool has_attr(const std::string& n) const { return node.attrs.count(n) != 0; }
  int64_t attr_i(const std::string& n, int64_t def) const;
  double attr_f(const std::string& n, double def) const;
  std::string attr_s(const std::string& n, const std::string& def) const;
  std::vector<int64_t> attr_ints(const std::string& n, std::vector<int64_t> def = {}) const;
  std::vector<double> attr_floats(const std::string& n) const;
  const Attr* attr(const std::string& n) const;
  // A GRAPH attribute (required).
  const Graph& graph_attr(const std::string& n) const;
  // Runs `g` (a subgraph of this node) with `inputs` bound to its inputs in order, the running
  // graph's values as its outer scope; checks inputs and outputs against g's declared types.
  // `when` ("iteration 3") goes into messages.
  std::vector<Tensor> run_subgraph(const Graph& g, const std::vector<Tensor>& inputs,
                                   const std::string& when = "") const;
  // Throws OnnxError "<file>: node 'x' (Op): msg".
  [[noreturn]] void fail(const std::string& msg) const;
  // An axis attribute or input resolved against `rank` (negative counts from the end).
  int64_t axis(int64_t a, int64_t rank) const;
};

using OpFn = std::function<std::vector<Tensor>(const OpCtx&)>;
using OpTable = std::map<std::string, OpFn>;

// Each ops_*.cpp adds its operators (called from ops.cpp; explicit calls, since a static archive
// would drop self-registering objects nothing refers to).
void add_elementwise_ops(OpTable& t);
void add_nn_ops(OpTable& t);
void add_pool_ops(OpTable& t);
void add_shape_ops(OpTable& t);
void add_index_ops(OpTable& t);
void add_reduce_ops(OpTable& t);
void add_scatter_ops(OpTable& t);
void add_loss_ops(OpTable& t);
void add_misc_ops(OpTable& t);
void add_resize_ops(OpTable& t);
void add_rnn_ops(OpTable& t);
void add_sequence_ops(OpTable& t);
void add_unpool_ops(OpTable& t);
void add_window_ops(OpTable& t);
void add_quantize_ops(OpTable& t);
void add_nms_ops(OpTable& t);
void add_unique_ops(OpTable& t);
void add_gridsample_ops(OpTable& t);
void add_det_ops(OpTable& t);
void add_qlinear_ops(OpTable& t);
void add_roialign_ops(OpTable& t);
void add_control_ops(OpTable& t);
void add_dft_ops(OpTable& t);
// Load-time checks of If, Loop and Scan (arity of the node against its subgraphs, required
// attributes): throws through c.fail. Returns without a check for any other operator.
void check_control_node(const OpCtx& c);

// Index values checked against [-n, n) on the host (realizes them) and made non-negative, as
// int64: ONNX calls an index out of range an error, and an adversarial model must not read a
// silent zero (ops_index.cpp).
Tensor checked_indices(const OpCtx& c, const Tensor& idx, int64_t n);
// The row-major strides of `s`, and the product of s[from, to).
std::vector<int64_t> strides_of(const Shape& s);
int64_t prod(const Shape& s, size_t from = 0, size_t to = SIZE_MAX);
const OpTable& op_table();

// ONNX's TensorProto.DataType numbering <-> Maroon's dtypes. Throws for STRING, COMPLEX and
// anything Maroon has no dtype for, naming the type.
DType dtype_from_onnx(int32_t elem_type, const std::string& where);

}  // namespace maroon::onnx
