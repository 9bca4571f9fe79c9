// Control flow: If, Loop and Scan. Each runs its subgraph (OpCtx::run_subgraph) as ordinary
// Maroon ops, one iteration after another, so an iteration's bits are those of the same nodes
// written out unrolled: nothing here computes a value. Conditions and trip counts are read on the
// host; loop-carried values are realized after each iteration (realization never changes bits,
// and it keeps a long loop from building one ever deeper lazy graph); scan outputs are stacked by
// copying each iteration's bytes into place (values moved, not computed).
#include <algorithm>
#include <cstring>

#include "api/internal.h"
#include "onnx/graph.h"

namespace maroon::onnx {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

// A one-element bool tensor's value (If's and Loop's conditions).
bool condition(const OpCtx& c, const Tensor& t, const std::string& what) {
  if (t.dtype() != DType::Bool) c.fail(what + " must be bool, got " + std::string(dtype_name(t.dtype())));
  if (t.numel() != 1) c.fail(what + " must hold one element, got shape " + shape_str(t.shape()));
  return t.bits()[0] != 0;
}

// One scan output: each iteration's value (all of one dtype and shape), stacked along a new axis.
struct Stacker {
  std::string what;
  std::optional<DType> dtype;
  Shape shape;
  std::vector<std::vector<uint8_t>> parts;

  void add(const OpCtx& c, const Tensor& t, int64_t iteration) {
    if (!dtype) {
      dtype = t.dtype();
      shape = t.shape();
    } else if (t.dtype() != *dtype || t.shape() != shape) {
      c.fail(what + " is " + std::string(dtype_name(t.dtype())) + " " + shape_str(t.shape()) + " in iteration " +
             str(iteration) + " but " + std::string(dtype_name(*dtype)) + " " + shape_str(shape) +
             " in iteration 0 (a scan output keeps one dtype and shape)");
    }
    parts.push_back(t.bytes());
  }

  // The stacked tensor, its new axis first; `reverse` puts the last iteration first.
  Tensor stacked(bool reverse) const {
    std::vector<uint8_t> all;
    for (size_t i = 0; i < parts.size(); ++i) {
      const auto& p = parts[reverse ? parts.size() - 1 - i : i];
      all.insert(all.end(), p.begin(), p.end());
    }
    Shape s = shape;
    s.insert(s.begin(), static_cast<int64_t>(parts.size()));
    return Tensor::from_bytes(all.data(), all.size(), s, *dtype);
  }
};

// A scan output of zero iterations: empty along the new axis, its element shape and dtype those
// the subgraph declares (nothing else says what they would have been).
Tensor empty_scan(const OpCtx& c, const Graph& body, size_t out) {
  const ValueInfo& v = body.outputs[out];
  bool fixed = !body.untyped.count(v.name) && v.has_shape;
  for (int64_t d : v.dims) fixed = fixed && d >= 0;
  if (!fixed)
    c.fail("runs no iteration, and subgraph output '" + v.name +
           "' declares no fixed shape to give its empty scan output");
  Shape s(v.dims.begin(), v.dims.end());
  s.insert(s.begin(), 0);
  static const uint8_t none = 0;
  return Tensor::from_bytes(&none, 0, s, v.dtype);
}

// Element `i` of `x` along `axis`, that axis removed (a view).
Tensor select(const Tensor& x, int64_t axis, int64_t i) {
  Pairs p;
  Shape s;
  for (int64_t d = 0; d < x.ndim(); ++d) {
    p.push_back(d == axis ? std::pair{i, i + 1} : std::pair{int64_t{0}, x.shape()[d]});
    if (d != axis) s.push_back(x.shape()[d]);
  }
  return x.shrink(p).reshape(s);
}

void check_carried(const OpCtx& c, const Tensor& next, const Tensor& prev, size_t k, int64_t iteration) {
  if (next.dtype() != prev.dtype())
    c.fail("carried value " + str(static_cast<int64_t>(k)) + " is " + std::string(dtype_name(prev.dtype())) +
           " but iteration " + str(iteration) + " computes " + std::string(dtype_name(next.dtype())));
}

// ---- If ----
std::vector<Tensor> if_op(const OpCtx& c) {
  const bool cond = condition(c, c.input(0), "the condition");
  return c.run_subgraph(c.graph_attr(cond ? "then_branch" : "else_branch"), {});
}

// ---- Loop ----
std::vector<Tensor> loop(const OpCtx& c) {
  const Graph& body = c.graph_attr("body");
  const size_t n_carried = c.count() - 2;
  const size_t n_scan = body.outputs.size() - 1 - n_carried;
  int64_t trip = -1;  // none
  if (c.has(0)) {
    const Tensor& m = c.input(0);
    if (m.dtype() != DType::Int64 || m.numel() != 1)
      c.fail("the trip count M must be one int64, got " + std::string(dtype_name(m.dtype())) + " " + shape_str(m.shape()));
    trip = m.to_vector<int64_t>()[0];
    if (trip < 0) c.fail("the trip count M is negative (" + str(trip) + ")");
    if (!c.has(1) && trip > kMaxIterations)
      c.fail("the trip count M (" + str(trip) + ") exceeds Maroon's limit of " + str(kMaxIterations) + " iterations");
  }
  bool cond = c.has(1) ? condition(c, c.input(1), "the condition input") : true;
  std::vector<Tensor> carried;
  for (size_t k = 0; k < n_carried; ++k) carried.push_back(c.input(2 + k));
  std::vector<Stacker> scans(n_scan);
  for (size_t k = 0; k < n_scan; ++k) scans[k].what = "scan output '" + body.outputs[1 + n_carried + k].name + "'";
  int64_t i = 0;
  for (; cond && (trip < 0 || i < trip); ++i) {
    if (i == kMaxIterations)
      c.fail("its condition did not end it within Maroon's limit of " + str(kMaxIterations) + " iterations");
    std::vector<Tensor> in{Tensor::from_vector(std::vector<int64_t>{i}, {}),
                           Tensor::from_vector(std::vector<uint8_t>{cond}, {}, DType::Bool)};
    in.insert(in.end(), carried.begin(), carried.end());
    std::vector<Tensor> out = c.run_subgraph(body, in, "iteration " + str(i));
    cond = condition(c, out[0], "subgraph output '" + body.outputs[0].name + "' (the condition)");
    for (size_t k = 0; k < n_carried; ++k) {
      check_carried(c, out[1 + k], carried[k], k, i);
      carried[k] = out[1 + k].realized_leaf();
    }
    for (size_t k = 0; k < n_scan; ++k) scans[k].add(c, out[1 + n_carried + k], i);
  }
  std::vector<Tensor> result = carried;
  for (size_t k = 0; k < n_scan; ++k)
    result.push_back(i == 0 ? empty_scan(c, body, 1 + n_carried + k) : scans[k].stacked(false));
  return result;
}

// ---- Scan ----
struct ScanSpec {
  std::vector<int64_t> in_axes, in_reverse, out_axes, out_reverse;
};

// Scan (opset 9's form) of `state` over the `xs` slices: the final state, then the scan outputs.
std::vector<Tensor> scan_core(const OpCtx& c, const Graph& body, std::vector<Tensor> state,
                              const std::vector<Tensor>& xs, const ScanSpec& spec) {
  const size_t n_state = state.size(), n_out = body.outputs.size() - n_state;
  std::vector<int64_t> in_axes(xs.size());
  int64_t steps = -1;
  for (size_t j = 0; j < xs.size(); ++j) {
    in_axes[j] = c.axis(j < spec.in_axes.size() ? spec.in_axes[j] : 0, xs[j].ndim());
    const int64_t len = xs[j].shape()[in_axes[j]];
    if (steps >= 0 && len != steps)
      c.fail("scan input " + str(static_cast<int64_t>(j)) + " has " + str(len) + " steps along axis " +
             str(in_axes[j]) + ", scan input 0 has " + str(steps));
    steps = len;
  }
  std::vector<Stacker> scans(n_out);
  for (size_t k = 0; k < n_out; ++k) scans[k].what = "scan output '" + body.outputs[n_state + k].name + "'";
  for (int64_t t = 0; t < steps; ++t) {
    std::vector<Tensor> in = state;
    for (size_t j = 0; j < xs.size(); ++j) {
      const bool rev = j < spec.in_reverse.size() && spec.in_reverse[j] != 0;
      in.push_back(select(xs[j], in_axes[j], rev ? steps - 1 - t : t));
    }
    std::vector<Tensor> out = c.run_subgraph(body, in, "iteration " + str(t));
    for (size_t k = 0; k < n_state; ++k) {
      check_carried(c, out[k], state[k], k, t);
      state[k] = out[k].realized_leaf();
    }
    for (size_t k = 0; k < n_out; ++k) scans[k].add(c, out[n_state + k], t);
  }
  std::vector<Tensor> result = state;
  for (size_t k = 0; k < n_out; ++k) {
    const bool rev = k < spec.out_reverse.size() && spec.out_reverse[k] != 0;
    Tensor y = steps == 0 ? empty_scan(c, body, n_state + k) : scans[k].stacked(rev);
    const int64_t axis = c.axis(k < spec.out_axes.size() ? spec.out_axes[k] : 0, y.ndim());
    result.push_back(api::move_first_axis(y, axis));
  }
  return result;
}

// Opset 8's Scan: a leading batch axis on every state and scan input (sequence_lens optional,
// refused unless it names every row's full length), each row scanned on its own.
std::vector<Tensor> scan8(const OpCtx& c, const Graph& body, size_t n_scan) {
  const size_t n_state = c.count() - 1 - n_scan;
  std::vector<Tensor> all;
  for (size_t i = 1; i < c.count(); ++i) all.push_back(c.input(i));
  int64_t batch = -1;
  for (const Tensor& x : all) {
    if (x.ndim() < 1 || (batch >= 0 && x.shape()[0] != batch))
      c.fail("every state and scan input must share the batch axis 0, got shape " + shape_str(x.shape()));
    batch = x.shape()[0];
  }
  if (c.has(0)) {
    for (int64_t len : c.ints(0))
      for (size_t j = n_state; j < all.size(); ++j)
        if (all[j].ndim() < 2 || len != all[j].shape()[1])
          c.fail("sequence_lens " + str(len) + " is not the full sequence length (shorter sequences are refused)");
  }
  if (batch == 0) c.fail("a batch of 0 rows is refused (no row says the outputs' shapes)");
  ScanSpec spec;
  spec.in_reverse = c.attr_ints("directions");
  std::vector<Stacker> rows(body.outputs.size());
  for (size_t k = 0; k < rows.size(); ++k) rows[k].what = "output '" + body.outputs[k].name + "'";
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Tensor> state, xs;
    for (size_t j = 0; j < all.size(); ++j) (j < n_state ? state : xs).push_back(select(all[j], 0, b));
    std::vector<Tensor> out = scan_core(c, body, state, xs, spec);
    for (size_t k = 0; k < out.size(); ++k) rows[k].add(c, out[k], b);
  }
  std::vector<Tensor> result;
  for (const Stacker& r : rows) result.push_back(r.stacked(false));
  return result;
}

std::vector<Tensor> scan(const OpCtx& c) {
  const Graph& body = c.graph_attr("body");
  const size_t n_scan = static_cast<size_t>(c.attr_i("num_scan_inputs", 0));
  if (c.opset < 9) return scan8(c, body, n_scan);
  const size_t n_state = c.count() - n_scan;
  std::vector<Tensor> state, xs;
  for (size_t i = 0; i < c.count(); ++i) (i < n_state ? state : xs).push_back(c.input(i));
  ScanSpec spec{c.attr_ints("scan_input_axes"), c.attr_ints("scan_input_directions"), c.attr_ints("scan_output_axes"),
                c.attr_ints("scan_output_directions")};
  return scan_core(c, body, state, xs, spec);
}

// ---- load-time checks ----
void check_count(const OpCtx& c, const std::string& what, size_t got, size_t want) {
  if (got != want) c.fail(what + " " + str(static_cast<int64_t>(got)) + ", expected " + str(static_cast<int64_t>(want)));
}

void check_directions(const OpCtx& c, const std::string& name, size_t count) {
  if (!c.has_attr(name)) return;
  const std::vector<int64_t> d = c.attr_ints(name);
  check_count(c, "attribute '" + name + "' has entries:", d.size(), count);
  for (int64_t v : d)
    if (v != 0 && v != 1) c.fail("attribute '" + name + "' entries must be 0 or 1, got " + str(v));
}

void check_if(const OpCtx& c) {
  for (const char* branch : {"then_branch", "else_branch"}) {
    const Graph& g = c.graph_attr(branch);
    check_count(c, std::string(branch) + " takes inputs:", g.inputs.size(), 0);
    check_count(c, std::string(branch) + " has outputs:", g.outputs.size(), c.node.outputs.size());
  }
  check_count(c, "inputs:", c.node.inputs.size(), 1);
}

void check_loop(const OpCtx& c) {
  const Graph& body = c.graph_attr("body");
  const size_t n = c.node.inputs.size();
  if (n < 2) c.fail("needs the inputs M and cond (either may be empty), got " + str(static_cast<int64_t>(n)));
  if (c.node.inputs[0].empty() && c.node.inputs[1].empty())
    c.fail("has neither a trip count M nor a condition: it would never end");
  check_count(c, "body takes inputs (iteration, condition, carried values):", body.inputs.size(), n);
  if (body.outputs.size() < n - 1)
    c.fail("body has " + str(static_cast<int64_t>(body.outputs.size())) + " outputs, fewer than its condition and " +
           str(static_cast<int64_t>(n - 2)) + " carried values");
  check_count(c, "outputs (carried values, scan outputs):", c.node.outputs.size(), body.outputs.size() - 1);
}

void check_scan(const OpCtx& c) {
  const Graph& body = c.graph_attr("body");
  const int64_t m = c.attr_i("num_scan_inputs", 0);
  const size_t n = c.node.inputs.size(), lead = c.opset < 9 ? 1 : 0;  // opset 8: sequence_lens
  if (m < 1 || static_cast<size_t>(m) + lead > n)
    c.fail("num_scan_inputs " + str(m) + " must be in [1, " + str(static_cast<int64_t>(n - std::min(n, lead))) + "]");
  const size_t n_state = n - lead - static_cast<size_t>(m);
  check_count(c, "body takes inputs (state, scan slices):", body.inputs.size(), n - lead);
  if (body.outputs.size() < n_state)
    c.fail("body has " + str(static_cast<int64_t>(body.outputs.size())) + " outputs, fewer than its " +
           str(static_cast<int64_t>(n_state)) + " state values");
  check_count(c, "outputs (state, scan outputs):", c.node.outputs.size(), body.outputs.size());
  const size_t n_out = body.outputs.size() - n_state;
  if (c.opset < 9) {
    check_directions(c, "directions", static_cast<size_t>(m));
    return;
  }
  check_directions(c, "scan_input_directions", static_cast<size_t>(m));
  check_directions(c, "scan_output_directions", n_out);
  if (c.has_attr("scan_input_axes"))
    check_count(c, "attribute 'scan_input_axes' has entries:", c.attr_ints("scan_input_axes").size(), static_cast<size_t>(m));
  if (c.has_attr("scan_output_axes"))
    check_count(c, "attribute 'scan_output_axes' has entries:", c.attr_ints("scan_output_axes").size(), n_out);
}

}  // namespace

void check_control_node(const OpCtx& c) {
  if (c.node.op == "If") check_if(c);
  else if (c.node.op == "Loop") check_loop(c);
  else if (c.node.op == "Scan") check_scan(c);
}

void add_control_ops(OpTable& t) {
  t["If"] = if_op;
  t["Loop"] = loop;
  t["Scan"] = scan;
}

}  // namespace maroon::onnx
