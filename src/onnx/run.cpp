// Running a loaded graph: bind the inputs (checking dtype, rank and dimensions, binding symbolic
// dimensions), then build each node's Tensor expression in the file's (topological) order. Any
// maroon::Error an operator raises is rethrown naming the node and its operator.
#include <set>

#include "onnx/graph.h"
#include "onnx/replay.h"

namespace maroon::onnx {

// ---- OpCtx ----
void OpCtx::fail(const std::string& msg) const { throw OnnxError(node.label() + ": " + msg); }

const Tensor& OpCtx::input(size_t i) const {
  if (!has(i)) fail("input " + std::to_string(i) + " is required");
  return *in[i];
}

std::vector<int64_t> OpCtx::ints(size_t i) const {
  const Tensor& t = input(i);
  if (!is_int(t.dtype())) fail("input " + std::to_string(i) + " must be an integer tensor, got " + std::string(dtype_name(t.dtype())));
  if (t.ndim() > 1) fail("input " + std::to_string(i) + " must be 1-D, got " + shape_str(t.shape()));
  std::vector<int64_t> out = t.cast(DType::Int64).to_vector<int64_t>();
  return out;
}

double OpCtx::scalar(size_t i) const {
  const Tensor& t = input(i);
  if (t.numel() != 1) fail("input " + std::to_string(i) + " must hold one element, got " + shape_str(t.shape()));
  return t.tolist()[0];
}

const Attr* OpCtx::attr(const std::string& n) const {
  auto it = node.attrs.find(n);
  return it == node.attrs.end() ? nullptr : &it->second;
}

const Graph& OpCtx::graph_attr(const std::string& n) const {
  const Attr* a = attr(n);
  if (!a) fail("attribute '" + n + "' (a GRAPH) is required");
  if (a->kind != Attr::Kind::Graph) fail("attribute '" + n + "' must be GRAPH, got " + a->type_name);
  return *a->g;
}

const Tensor* Scope::find(const std::string& name) const {
  for (const Scope* s = this; s; s = s->outer) {
    auto it = s->values.find(name);
    if (it != s->values.end()) return &it->second;
  }
  return nullptr;
}

namespace {
const Attr* typed(const OpCtx& c, const std::string& n, Attr::Kind k, const char* want) {
  const Attr* a = c.attr(n);
  if (a && a->kind != k) c.fail("attribute '" + n + "' must be " + want + ", got " + a->type_name);
  return a;
}
}  // namespace

int64_t OpCtx::attr_i(const std::string& n, int64_t def) const {
  const Attr* a = typed(*this, n, Attr::Kind::Int, "INT");
  return a ? a->i : def;
}
double OpCtx::attr_f(const std::string& n, double def) const {
  const Attr* a = typed(*this, n, Attr::Kind::Float, "FLOAT");
  return a ? a->f : def;
}
std::string OpCtx::attr_s(const std::string& n, const std::string& def) const {
  const Attr* a = typed(*this, n, Attr::Kind::String, "STRING");
  return a ? a->s : def;
}
std::vector<int64_t> OpCtx::attr_ints(const std::string& n, std::vector<int64_t> def) const {
  const Attr* a = typed(*this, n, Attr::Kind::Ints, "INTS");
  return a ? a->ints : def;
}
std::vector<double> OpCtx::attr_floats(const std::string& n) const {
  const Attr* a = typed(*this, n, Attr::Kind::Floats, "FLOATS");
  return a ? a->floats : std::vector<double>{};
}

int64_t OpCtx::axis(int64_t a, int64_t rank) const {
  if (a < -rank || a >= rank)
    fail("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
  return a < 0 ? a + rank : a;
}

// ---- the operator table ----
const OpTable& op_table() {
  static const OpTable table = [] {
    OpTable t;
    add_elementwise_ops(t);
    add_nn_ops(t);
    add_pool_ops(t);
    add_shape_ops(t);
    add_index_ops(t);
    add_reduce_ops(t);
    add_scatter_ops(t);
    add_loss_ops(t);
    add_misc_ops(t);
    add_resize_ops(t);
    add_rnn_ops(t);
    add_sequence_ops(t);
    add_unpool_ops(t);
    add_window_ops(t);
    add_quantize_ops(t);
    add_nms_ops(t);
    add_unique_ops(t);
    add_gridsample_ops(t);
    add_det_ops(t);
    add_qlinear_ops(t);
    add_roialign_ops(t);
    add_control_ops(t);
    add_dft_ops(t);
    return t;
  }();
  return table;
}

std::vector<std::string> supported_ops() {
  std::vector<std::string> out;
  for (const auto& [name, fn] : op_table()) out.push_back(name);
  return out;
}

// ---- Model ----
Model::Model(std::shared_ptr<const Graph> g) : g_(std::move(g)), replays_(std::make_shared<Replays>()) {}
void Model::set_replay(bool on) const { replays_->set_enabled(on); }
bool Model::replay() const { return replays_->enabled(); }
RunStats Model::run_stats() const { return replays_->stats(); }
const std::vector<ValueInfo>& Model::inputs() const { return g_->inputs; }
const std::vector<ValueInfo>& Model::outputs() const { return g_->outputs; }
int64_t Model::opset() const { return g_->opset; }
std::string Model::producer() const { return g_->producer; }
size_t Model::node_count() const { return g_->nodes.size(); }

namespace {

// Checks `t` against the declared value `v`, binding its symbolic dimensions in `dims`. `where`
// names it in messages.
void check_value(const std::string& where, const ValueInfo& v, const Tensor& t, std::map<std::string, int64_t>& dims) {
  if (t.dtype() != v.dtype)
    throw OnnxError(where + " must be " + std::string(dtype_name(v.dtype)) + ", got " + std::string(dtype_name(t.dtype())));
  if (!v.has_shape) return;
  if (t.ndim() != static_cast<int64_t>(v.dims.size()))
    throw OnnxError(where + " must have rank " + std::to_string(v.dims.size()) + ", got " + shape_str(t.shape()));
  for (size_t i = 0; i < v.dims.size(); ++i) {
    int64_t got = t.shape()[i];
    if (v.dims[i] >= 0 && got != v.dims[i])
      throw OnnxError(where + " has shape " + shape_str(t.shape()) + ", dimension " + std::to_string(i) +
                      " must be " + std::to_string(v.dims[i]));
    if (v.dims[i] < 0 && !v.dim_params[i].empty()) {
      auto [it, fresh] = dims.emplace(v.dim_params[i], got);
      if (!fresh && it->second != got)
        throw OnnxError(where + " has shape " + shape_str(t.shape()) + ": dimension '" + v.dim_params[i] + "' is " +
                        std::to_string(got) + " here but " + std::to_string(it->second) + " in an earlier input");
    }
  }
}

std::string prefixed(const Graph& g, const std::string& msg) { return g.source.empty() ? msg : g.source + ": " + msg; }

// Builds each node's expression in order; `scope` holds the graph's initializers and inputs (and
// reaches the enclosing graphs' values). Values are dropped after their last reader (g.drops).
std::vector<Tensor> run_graph(const Graph& g, Scope& scope) {
  const OpTable& ops = op_table();
  for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
    const NodeDef& n = g.nodes[ni];
    OpCtx ctx{n, g.opset, {}, &scope};
    for (const std::string& in : n.inputs) {
      if (in.empty()) {
        ctx.in.emplace_back(std::nullopt);
        continue;
      }
      const Tensor* t = scope.find(in);  // the loader proved it defined; a drop must not lose it
      if (!t) throw OnnxError(prefixed(g, n.label() + ": input '" + in + "' has no value"));
      ctx.in.emplace_back(*t);
    }
    std::vector<Tensor> outs;
    try {
      outs = ops.at(n.op)(ctx);
    } catch (const OnnxError& e) {
      throw OnnxError(prefixed(g, e.what()));
    } catch (const Error& e) {
      throw OnnxError(prefixed(g, n.label() + ": " + e.what()));
    }
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      if (n.outputs[i].empty()) continue;
      if (i >= outs.size())
        throw OnnxError(prefixed(g, n.label() + ": output " + std::to_string(i) + " ('" + n.outputs[i] +
                                        "') is not supported"));
      scope.values.insert_or_assign(n.outputs[i], outs[i]);
    }
    for (const std::string& name : g.drops[ni]) scope.values.erase(name);
  }
  std::vector<Tensor> result;
  for (const auto& v : g.outputs) {
    const Tensor* t = scope.find(v.name);
    if (!t) throw OnnxError(prefixed(g, "graph output '" + v.name + "' has no value"));
    result.push_back(*t);
  }
  return result;
}

}  // namespace

std::vector<Tensor> OpCtx::run_subgraph(const Graph& g, const std::vector<Tensor>& inputs, const std::string& when) const {
  const std::string name = "subgraph '" + g.name + "'" + (when.empty() ? "" : " (" + when + ")");
  if (inputs.size() != g.inputs.size())
    fail(name + " takes " + std::to_string(g.inputs.size()) + " input(s), given " + std::to_string(inputs.size()));
  Scope sub;
  sub.outer = scope;
  sub.values = g.initializers;
  std::map<std::string, int64_t> dims;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ValueInfo& v = g.inputs[i];
    if (!g.untyped.count(v.name)) check_value(node.label() + ": " + name + " input '" + v.name + "'", v, inputs[i], dims);
    sub.values.insert_or_assign(v.name, inputs[i]);
  }
  std::vector<Tensor> out;
  try {
    out = run_graph(g, sub);
  } catch (const OnnxError& e) {
    fail(name + ": " + e.what());
  }
  for (size_t i = 0; i < out.size(); ++i) {
    const ValueInfo& v = g.outputs[i];
    if (!g.untyped.count(v.name) && out[i].dtype() != v.dtype)
      fail(name + " output '" + v.name + "' is declared " + std::string(dtype_name(v.dtype)) + " but computed " +
           std::string(dtype_name(out[i].dtype())));
  }
  return out;
}

std::vector<Tensor> Model::run(const std::map<std::string, Tensor>& inputs) const {
  std::map<std::string, int64_t> dims;
  std::set<std::string> known;
  std::vector<Tensor> ordered;  // the graph inputs, in the graph's order
  for (const ValueInfo& v : g_->inputs) {
    auto it = inputs.find(v.name);
    if (it == inputs.end()) throw OnnxError(g_->source + ": input '" + v.name + "' is missing");
    check_value(g_->source + ": input '" + v.name + "'", v, it->second, dims);
    known.insert(v.name);
    ordered.push_back(it->second);
  }
  std::vector<std::pair<std::string, Tensor>> overrides;  // initializers listed as inputs (IR < 4)
  for (const auto& [name, t] : inputs)
    if (!known.count(name) && !g_->initializers.count(name))
      throw OnnxError(g_->source + ": the model has no input named '" + name + "'");
    else if (!known.count(name))
      overrides.emplace_back(name, t);
  // The values by name, built only when the graph is (a replay needs none of them).
  auto plain = [&] {
    Scope scope;
    scope.values = g_->initializers;
    for (size_t i = 0; i < ordered.size(); ++i) scope.values.insert_or_assign(g_->inputs[i].name, ordered[i]);
    for (const auto& [name, t] : overrides) scope.values.insert_or_assign(name, t);
    return run_graph(*g_, scope);
  };
  // An overridden initializer is not an input a capture would rebind: such runs stay plain.
  if (!overrides.empty()) return plain();
  return replays_->run(ordered, plain);
}

std::vector<Tensor> Model::run(const std::vector<Tensor>& inputs) const {
  if (inputs.size() != g_->inputs.size())
    throw OnnxError(g_->source + ": the model takes " + std::to_string(g_->inputs.size()) + " input(s), got " +
                    std::to_string(inputs.size()));
  std::map<std::string, Tensor> named;
  for (size_t i = 0; i < inputs.size(); ++i) named.insert_or_assign(g_->inputs[i].name, inputs[i]);
  return run(named);
}

}  // namespace maroon::onnx
