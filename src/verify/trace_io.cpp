// Trace files (docs/verify.md, "Trace"): one JSON document, one node per line.
#include "io/files.h"
#include "verify/jsonio.h"

namespace maroon::verify {

namespace {

std::string shape_json(const Shape& s) {
  std::string o = "[";
  for (size_t i = 0; i < s.size(); ++i) o += (i ? ", " : "") + std::to_string(s[i]);
  return o + "]";
}

TraceNode read_node(const json::Value& v, const std::string& where, int64_t index) {
  Obj o(v, where, {"op", "dtype", "shape", "round", "arg", "src", "label", "sha256"});
  TraceNode n;
  n.op = o.str("op");
  n.dtype = o.str("dtype");
  try {
    dtype_from_name(n.dtype);
  } catch (const Error&) {
    throw o.fail("has an unknown dtype \"" + n.dtype + "\"");
  }
  n.round = o.str("round");
  bool known = false;
  for (Round r : kAllRounds) known = known || round_name(r) == n.round;
  if (!known) throw o.fail("has an unknown rounding mode \"" + n.round + "\"");
  for (auto& d : o.arr("shape").items) {
    uint64_t u;
    if (!d.as_u64(u) || u >= (uint64_t{1} << 62)) throw o.fail("has a shape entry that is not a size");
    n.shape.push_back(static_cast<int64_t>(u));
  }
  n.arg = o.str("arg");
  for (auto& d : o.arr("src").items) {
    uint64_t u;
    if (!d.as_u64(u) || static_cast<int64_t>(u) >= index) throw o.fail("has a source that is not an earlier node");
    n.src.push_back(static_cast<int64_t>(u));
  }
  n.label = o.str("label");
  n.digest = o.digest("sha256");
  return n;
}

}  // namespace

std::string trace_json(const Trace& t) {
  std::string s = "{\"format\": \"maroon-trace/1\", \"step\": " + std::to_string(t.step) +
                  ", \"job_sha256\": " + q(t.job_sha256) + ", \"state_in\": " + q(t.state_in) + ",\n \"nodes\": [";
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    const TraceNode& n = t.nodes[i];
    s += (i ? ",\n  " : "\n  ") + std::string("{\"op\": ") + q(n.op) + ", \"dtype\": " + q(n.dtype) +
         ", \"shape\": " + shape_json(n.shape) + ", \"round\": " + q(n.round) + ", \"arg\": " + q(n.arg) +
         ", \"src\": " + shape_json(n.src) + ", \"label\": " + q(n.label) + ", \"sha256\": " + q(hex(n.digest)) + "}";
  }
  s += "],\n \"state_out\": [";
  for (size_t i = 0; i < t.state_out.size(); ++i) {
    const TraceState& e = t.state_out[i];
    s += (i ? ",\n  " : "\n  ") + std::string("{\"name\": ") + q(e.name) + ", \"sha256\": " + q(hex(e.digest)) +
         ", \"node\": " + (e.node < 0 ? std::string("null") : std::to_string(e.node)) + "}";
  }
  return s + "]}\n";
}

void write_trace(const Trace& t, const std::string& path) { io::write_file_atomic(path, trace_json(t), "[trace]"); }

Trace read_trace(const std::string& path) {
  const std::string where = "trace '" + path + "':";
  json::Value v = json::parse(io::read_file(path, "[trace]", uint64_t{1} << 30), where);
  Obj o(v, where, {"format", "step", "job_sha256", "state_in", "nodes", "state_out"});
  if (o.str("format") != "maroon-trace/1")
    throw o.fail("has format \"" + o.str("format") + "\", expected \"maroon-trace/1\"");
  Trace t;
  t.step = o.num("step");
  t.job_sha256 = o.str("job_sha256");
  t.state_in = o.str("state_in");
  if (!t.job_sha256.empty()) parse_digest(t.job_sha256, o.field("job_sha256"));
  if (!t.state_in.empty()) parse_digest(t.state_in, o.field("state_in"));
  const auto& nodes = o.arr("nodes").items;
  for (size_t i = 0; i < nodes.size(); ++i)
    t.nodes.push_back(read_node(nodes[i], where + " nodes[" + std::to_string(i) + "]", static_cast<int64_t>(i)));
  const auto& outs = o.arr("state_out").items;
  for (size_t i = 0; i < outs.size(); ++i) {
    Obj e(outs[i], where + " state_out[" + std::to_string(i) + "]", {"name", "sha256", "node"});
    TraceState s{e.str("name"), e.digest("sha256"), -1};
    const json::Value* n = outs[i].find("node");
    if (n->kind != json::Value::Kind::Null) {
      s.node = e.num("node");
      if (s.node >= static_cast<int64_t>(t.nodes.size())) throw e.fail("names node " + std::to_string(s.node) + ", past the last");
    }
    t.state_out.push_back(std::move(s));
  }
  return t;
}

}  // namespace maroon::verify
