// bisect: two records of one job. Phase 1 descends the two Merkle trees to the first step whose
// committed states differ; the state both commit to before it is rebuilt from the nearest
// checkpoint. Phase 2 replays that step on it with each side's program, tracing every node,
// names the first node (or state tensor) that differs and has the reference executor recompute
// it alone from its inputs to say which side is right.
#include <algorithm>
#include <cstdio>

#include "verify/digest.h"
#include "verify/state.h"
#include "verify/replay.h"

namespace maroon::verify {

namespace {

std::string describe(const TraceNode& n, int64_t i) {
  std::string s = "#" + std::to_string(i) + " " + n.op + " " + n.dtype + " " + shape_str(n.shape) + " " + n.round;
  if (!n.arg.empty()) s += " " + n.arg;
  if (!n.src.empty()) {
    s += " src";
    for (size_t k = 0; k < n.src.size(); ++k) s += (k ? ",#" : " #") + std::to_string(n.src[k]);
  }
  if (!n.label.empty()) s += " (" + n.label + ")";
  return s;
}

bool same_structure(const TraceNode& a, const TraceNode& b) {
  return a.op == b.op && a.dtype == b.dtype && a.shape == b.shape && a.round == b.round && a.arg == b.arg &&
         a.src == b.src;
}

std::string job_difference(const Job& a, const Job& b) {
  if (a.name != b.name) return "job.name is \"" + a.name + "\" and \"" + b.name + "\"";
  for (auto& [k, v] : a.config) {
    auto it = b.config.find(k);
    if (it == b.config.end() || it->second != v)
      return "job.config." + k + " is \"" + v + "\" and \"" + (it == b.config.end() ? "(absent)" : it->second) + "\"";
  }
  if (a.config.size() != b.config.size()) return "job.config has other keys";
  if (a.arch_sha256 != b.arch_sha256) return "job.arch_sha256 is " + a.arch_sha256 + " and " + b.arch_sha256;
  return "job.data differs";
}

// The referee's call on a node both sides computed from the same inputs.
void judge(BisectReport& rep, const Digest& ref, const Digest& da, const Digest& db) {
  rep.referee_digest = hex(ref);
  rep.referee_says = ref == da ? "a" : ref == db ? "b" : "neither";
  rep.lines.push_back("referee: recomputed alone by the reference executor from its inputs: " + hex(ref) +
                      (ref == da ? " = a's" : ref == db ? " = b's" : ", neither side's"));
}

}  // namespace

BisectReport bisect(const RunRecord& a, const std::string& path_a, Program& pa, const RunRecord& b,
                    const std::string& path_b, Program& pb) {
  const Digest job = a.job.digest();
  if (job != b.job.digest())
    throw Error("[bisect] '" + path_a + "' and '" + path_b + "' are not runs of the same job: " + job_difference(a.job, b.job));
  BisectReport rep;
  auto line = [&](const std::string& s) { rep.lines.push_back(s); };
  for (auto* r : {&a, &b})
    if (merkle_root(r->states) != r->merkle_root)
      line("note: " + std::string(r == &a ? path_a : path_b) + "'s merkle_root does not match its states");
  size_t n = std::min(a.states.size(), b.states.size());
  std::vector<Digest> sa(a.states.begin(), a.states.begin() + n), sb(b.states.begin(), b.states.begin() + n);
  int64_t k = first_difference(sa, sb, &rep.merkle_compared);
  if (k < 0) {
    rep.same = a.states.size() == b.states.size();
    line("phase 1: the two runs commit to the same state after each of their " + std::to_string(n - 1) +
         " common steps (" + std::to_string(rep.merkle_compared) + " Merkle node pair compared)");
    return rep;
  }
  rep.step = k;
  line("phase 1: the committed states first differ after step " + std::to_string(k) + " (" +
       std::to_string(rep.merkle_compared) + " Merkle node pairs compared" +
       (k ? "; both commit to " + hex(sa[static_cast<size_t>(k - 1)]) + " after step " + std::to_string(k - 1) : "") + ")");
  if (k == 0) {
    line("the initial states differ: " + hex(sa[0]) + " and " + hex(sb[0]) + " (compare the step-0 checkpoints)");
    return rep;
  }
  // The agreed state before step k: the nearest checkpoint of either record at or before k - 1
  // that hashes to the agreed commitment, then replayed (each step checked against both records).
  std::vector<std::pair<int64_t, std::string>> files;
  for (auto& c : a.checkpoints) files.push_back({c.step, resolve(path_a, c.path)});
  for (auto& c : b.checkpoints) files.push_back({c.step, resolve(path_b, c.path)});
  std::vector<Digest> agreed(sa.begin(), sa.begin() + k);
  Rebuilt base = rebuild(files, agreed, pa, k, job);
  rep.from_checkpoint = base.from_checkpoint, rep.checkpoint_loads = base.loads, rep.step_replays = base.replays;
  for (auto& note : base.notes) line("note: " + note);
  if (base.mismatch >= 0) {
    line("both records commit to " + hex(sa[static_cast<size_t>(base.mismatch)]) + " after step " +
         std::to_string(base.mismatch) + ", but replaying it gives " + hex(base.got) + ": both are wrong there");
    return rep;
  }
  line("replay: from the checkpoint of step " + std::to_string(base.from_checkpoint) +
       (base.replays ? ", then steps " + std::to_string(base.from_checkpoint + 1) + ".." + std::to_string(k - 1) +
                           ", each matching both records"
                     : ""));
  const State& in = base.state;

  // Phase 2. Side b first; side a keeps its nodes so the referee can recompute any of them.
  TracedStep sb2, sa2;
  traced_step(pb, in, k, job, false, sb2);
  std::unique_ptr<Tracer> tracer_a = traced_step(pa, in, k, job, true, sa2);
  Tracer& ta = *tracer_a;
  rep.step_replays += 2;
  auto match = [&](const Digest& c, const RunRecord& r) {
    return c == r.states[static_cast<size_t>(k)] ? "reproduces its record" : "does not reproduce its record";
  };
  line("phase 2: step " + std::to_string(k) + " replayed on the agreed state with each side's program, " +
       std::to_string(sa2.trace.nodes.size()) + " and " + std::to_string(sb2.trace.nodes.size()) + " nodes traced");
  line("  a's program gives " + hex(sa2.commitment) + " (" + match(sa2.commitment, a) + ")");
  line("  b's program gives " + hex(sb2.commitment) + " (" + match(sb2.commitment, b) + ")");
  rep.replay_matches = sa2.commitment == a.states[static_cast<size_t>(k)]   ? "a"
                       : sa2.commitment == b.states[static_cast<size_t>(k)] ? "b"
                                                                             : "neither";
  const auto& na = sa2.trace.nodes;
  const auto& nb = sb2.trace.nodes;
  size_t m = std::min(na.size(), nb.size()), i = 0;
  while (i < m && same_structure(na[i], nb[i]) && na[i].digest == nb[i].digest) ++i;
  if (i < m || na.size() != nb.size()) {
    rep.node = static_cast<int64_t>(i);
    if (i < m) rep.node_a = na[i], rep.node_b = nb[i];
    if (i >= m || !same_structure(na[i], nb[i])) {
      line("first differing node: #" + std::to_string(i) + ": the sides ran different graphs: a " +
           (i < na.size() ? describe(na[i], i) : "(none)") + ", b " + (i < nb.size() ? describe(nb[i], i) : "(none)"));
      return rep;
    }
    line("first differing node: " + describe(na[i], i) + ": a " + hex(na[i].digest) + ", b " + hex(nb[i].digest));
    if (ta.is_leaf(static_cast<int64_t>(i))) {
      line("it is an input of the step, not computed by it: the side whose value differs from the agreed state read "
           "another state than it committed to");
      for (auto& [name, t] : in)
        if (name == na[i].label) {
          Digest want = tensor_digest(t);
          rep.referee_digest = hex(want);
          rep.referee_says = want == na[i].digest ? "a" : want == nb[i].digest ? "b" : "neither";
          line("referee: the agreed state's " + name + " is " + hex(want));
        }
    } else {
      judge(rep, ta.referee(static_cast<int64_t>(i)), na[i].digest, nb[i].digest);
    }
  } else {
    const auto& oa = sa2.trace.state_out;
    const auto& ob = sb2.trace.state_out;
    size_t j = 0;
    while (j < oa.size() && j < ob.size() && oa[j].name == ob[j].name && oa[j].digest == ob[j].digest) ++j;
    if (j == oa.size() && j == ob.size()) {
      line("every node and every state tensor of step " + std::to_string(k) + " agree: the records' commitments for it "
           "are what differs");
    } else if (j < oa.size() && j < ob.size() && oa[j].name == ob[j].name) {
      rep.state_tensor = oa[j].name;
      rep.state_node = oa[j].node;
      auto who = [&](const TraceState& s) {
        return s.node >= 0 ? "the output of node " + describe(na[static_cast<size_t>(s.node)], s.node)
                           : std::string("not the output of any node of the step");
      };
      line("every node agrees; the state tensor " + oa[j].name + " after the step differs: a " + hex(oa[j].digest) +
           " (" + who(oa[j]) + "), b " + hex(ob[j].digest) + " (" + who(ob[j]) + ")");
      int64_t p = oa[j].node >= 0 ? oa[j].node : ob[j].node;
      if (p >= 0 && !ta.is_leaf(p)) judge(rep, ta.referee(p), oa[j].digest, ob[j].digest);
    } else {
      line("the sides' states have different tensors after the step");
    }
  }
  if (!rep.referee_says.empty() && rep.referee_says != "neither") {
    std::string wrong = rep.referee_says == "a" ? "b" : "a";
    line("verdict: " + wrong + " is wrong at step " + std::to_string(k) +
         (rep.node >= 0 ? ", node " + describe(rep.node_a, rep.node)
                        : rep.state_node >= 0 ? ", state tensor " + rep.state_tensor + " (computed by node " +
                                                    describe(na[static_cast<size_t>(rep.state_node)], rep.state_node) + ")"
                                              : ", state tensor " + rep.state_tensor));
  }
  return rep;
}

}  // namespace maroon::verify
