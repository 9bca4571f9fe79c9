// Per-node traces (see tracer.h): every realized node of a computation in schedule order, with
// its op, dtype, shape, rounding mode, argument, sources and the SHA-256 of its output.
#include <cstdio>

#include "core/fpenv.h"
#include "ref/executor.h"
#include "verify/digest.h"
#include "verify/tracer.h"

namespace maroon::verify {

namespace {

std::string ints(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// Every state tensor's current node, by name (leaves read during the step get these labels).
void label_state(const StateBinding& b, std::unordered_map<const Node*, std::pair<std::weak_ptr<Node>, std::string>>& out) {
  State s = capture(b, 0, Digest{});
  for (auto& [name, t] : s)
    if (name.rfind("model.", 0) == 0 || name.rfind("optim.", 0) == 0 || name.rfind("extra.", 0) == 0)
      out[t.node().get()] = {t.node(), name};
}

}  // namespace

// What a computed node's trace entry commits to. Elementwise ops and reductions: the SHA-256 of
// their elements. A movement op computes nothing (it is a view of its source), so its digest
// chains its source's with the op and its argument, and a constant's is that of its one element:
// neither is gathered, so a trace costs what the computing costs, not what a broadcast shape
// would (docs/verify.md, "Trace").
Digest output_digest(const Node& n, const std::vector<TraceNode>& nodes, const std::vector<int64_t>& src) {
  if (op_info(n.op).kind == OpKind::Movement) {
    Hasher h;
    h.update("maroon-view/1");
    const Digest& s = nodes.at(static_cast<size_t>(src.at(0))).digest;
    h.update(s.data(), s.size());
    h.update(std::string(op_name(n.op)) + " " + arg_string(n));
    return h.finish();
  }
  if (n.op == Op::CONST) return sha256(std::string_view(reinterpret_cast<const char*>(&n.arg.bits), itemsize(n.dtype)));
  return node_digest(n);
}

std::string arg_string(const Node& n) {
  const Arg& a = n.arg;
  switch (n.op) {
    case Op::RESHAPE: case Op::EXPAND: return "shape=" + ints(a.ints);
    case Op::PERMUTE: return "order=" + ints(a.ints);
    case Op::FLIP: return "axes=" + ints(a.ints);
    case Op::REDUCE: return std::string(reduce_op_name(a.reduce_op)) + " axes=" + ints(a.ints);
    case Op::REDUCE_MULACC: return "axes=" + ints(a.ints);
    case Op::GATHER: return "axis=" + ints(a.ints);
    case Op::PAD: case Op::SHRINK: {
      std::string s = "pairs=[";
      for (size_t i = 0; i < a.pairs.size(); ++i)
        s += (i ? ",[" : "[") + std::to_string(a.pairs[i].first) + "," + std::to_string(a.pairs[i].second) + "]";
      return s + "]";
    }
    case Op::CAST: case Op::BITCAST: return "to=" + std::string(dtype_name(a.dtype));
    case Op::CONST: {
      char b[32];
      std::snprintf(b, sizeof b, "bits=0x%llx", static_cast<unsigned long long>(a.bits));
      return b;
    }
    default: return "";
  }
}

Tracer::Tracer(const StateBinding* labels, std::optional<Fault> fault, bool keep)
    : prev_(nullptr), fault_(fault), keep_(keep) {
  if (labels) label_state(*labels, labels_);
  prev_ = set_realize_observer(this);
}

Tracer::~Tracer() { detach(); }

void Tracer::detach() {
  if (attached_) set_realize_observer(prev_);
  attached_ = false;
}

int64_t Tracer::index_of(const NodePtr& n) {
  auto it = seen_.find(n.get());
  if (it != seen_.end() && it->second.node.lock() == n) return it->second.index;
  return add(n, true);  // realized before the trace began (or outside it): a leaf
}

int64_t Tracer::add(const NodePtr& n, bool leaf) {
  TraceNode e;
  std::vector<int64_t> src;
  if (!leaf)
    for (const NodePtr& s : n->src) src.push_back(index_of(s));
  const int64_t i = static_cast<int64_t>(t_.nodes.size());
  e.op = leaf ? "BUFFER" : std::string(op_name(n->op));
  e.dtype = std::string(dtype_name(n->dtype));
  e.shape = n->shape;
  e.round = std::string(round_name(n->rnd));
  e.arg = leaf ? "" : arg_string(*n);
  e.src = std::move(src);
  if (leaf) {
    auto l = labels_.find(n.get());
    auto o = owner_.find(n->buffer.get());
    if (l != labels_.end() && l->second.first.lock() == n) e.label = l->second.second;
    else if (o != owner_.end() && o->second.first.lock() == n->buffer) e.label = "=#" + std::to_string(o->second.second);
    else e.label = "input";
  }
  if (fault_ && fault_->node == i) {
    if (leaf || op_info(n->op).kind == OpKind::Movement || n->op == Op::CONST)
      throw Error("[trace] a fault can only be injected into a computed node; node " + std::to_string(i) + " is " + e.op);
    if (fault_->element < 0 || fault_->element >= n->buffer->count || fault_->bit < 0 ||
        fault_->bit >= static_cast<int>(8 * itemsize(n->dtype)))
      throw Error("[trace] fault element or bit out of range for node " + std::to_string(i));
    n->buffer->store(fault_->element, n->buffer->load(fault_->element) ^ (uint64_t{1} << fault_->bit));
  }
  e.digest = leaf ? node_digest(*n) : output_digest(*n, t_.nodes, e.src);
  t_.nodes.push_back(std::move(e));
  seen_[n.get()] = {n, i};
  if (!leaf && n->view.is_contiguous() && !owner_.count(n->buffer.get())) owner_[n->buffer.get()] = {n->buffer, i};
  if (keep_) kept_.push_back(n);
  return i;
}

// An enclosing tracer (bisect tracing a step whose program traces itself) sees the same nodes.
void Tracer::realized(const NodePtr& n) {
  add(n, false);
  if (prev_) prev_->realized(n);
}

void Tracer::record_state_out(const State& s) {
  for (auto& [name, t] : s) {
    const Node& n = verify::realized(t);
    TraceState e{name, node_digest(n), -1};
    auto o = owner_.find(n.buffer.get());
    if (o != owner_.end() && o->second.first.lock() == n.buffer && n.view.is_contiguous()) e.node = o->second.second;
    t_.state_out.push_back(e);
  }
}

Digest Tracer::referee(int64_t i) const {
  if (!keep_ || i < 0 || i >= static_cast<int64_t>(kept_.size()))
    throw Error("[trace] internal: node " + std::to_string(i) + " was not kept for the referee");
  // kept_ holds leaves and computed nodes in trace order, so kept_[i] is trace node i.
  const Node& n = *kept_[static_cast<size_t>(i)];
  Node alone;
  alone.op = n.op, alone.dtype = n.dtype, alone.shape = n.shape, alone.rnd = n.rnd, alone.arg = n.arg, alone.src = n.src;
  FpEnvGuard env;  // what realize() sets for the executors
  ref::execute(alone);
  return output_digest(alone, t_.nodes, t_.nodes.at(static_cast<size_t>(i)).src);
}

Trace trace(const std::function<void()>& fn, const StateBinding* labels, std::optional<Fault> fault) {
  Tracer t(labels, fault, false);
  fn();
  return std::move(t.trace());
}

}  // namespace maroon::verify
