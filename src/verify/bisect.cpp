// bisect: two records of one job. Phase 1 descends the two Merkle trees to the first step whose
// committed states differ; the state both commit to before it is rebuilt from the nearest
// checkpoint. Phase 2 replays that step on it with each side's program, tracing every node,
// names the first node (or state tensor) that differs and has the reference executor recompute
// it alone from its inputs to say which side is right.
#include <algorithm>
#include <cstdio>

#include "verify/digest.h"
#include "verify/state.h"
#include "verify/tracer.h"

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

struct Side {
  Trace trace;
  Digest commitment;
};

// Step k on the state `in` with program p, every node traced (the tracer is returned: with
// `keep` it holds every node for the referee).
std::unique_ptr<Tracer> traced_step(Program& p, const State& in, int64_t k, const Digest& job, bool keep, Side& side) {
  restore(p.binding, in, job, "[bisect] state before step " + std::to_string(k));
  auto t = std::make_unique<Tracer>(&p.binding, std::nullopt, keep);
  if (p.before_step) p.before_step(k);
  p.step(k);
  State out = capture(p.binding, k, job);
  t->record_state_out(out);
  t->trace().step = k;
  t->trace().job_sha256 = hex(job);
  t->trace().state_in = hex(state_commitment(in));
  side = {t->trace(), state_commitment(out)};
  t->detach();
  return t;
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
  // The agreed state before step k: from the nearest checkpoint at or before k - 1 that hashes
  // to the agreed commitment, then replayed (each replayed step checked against both records).
  std::vector<std::pair<int64_t, std::string>> cands;
  for (auto& c : a.checkpoints) cands.push_back({c.step, resolve(path_a, c.path)});
  for (auto& c : b.checkpoints) cands.push_back({c.step, resolve(path_b, c.path)});
  std::sort(cands.begin(), cands.end(), [](auto& x, auto& y) { return x.first > y.first; });
  State base;
  for (auto& [step, path] : cands) {
    if (step > k - 1 || rep.from_checkpoint >= 0) continue;
    Digest got;
    try {
      ++rep.checkpoint_loads;
      base = read_checkpoint(path, &got);
    } catch (const FormatError& e) {
      line(std::string("note: ") + e.what());
      continue;
    }
    if (got != sa[static_cast<size_t>(step)]) {
      line("note: checkpoint " + path + " has sha256 " + hex(got) + ", not the agreed state of step " + std::to_string(step));
      continue;
    }
    rep.from_checkpoint = step;
    line("replay: from checkpoint " + path + " (step " + std::to_string(step) + ")");
  }
  if (rep.from_checkpoint < 0) {
    rep.from_checkpoint = 0;
    base = capture(pa.binding, 0, job);
    line("replay: from the program's initial state (no usable checkpoint)");
  }
  restore(pa.binding, base, job, "[bisect] checkpoint of step " + std::to_string(rep.from_checkpoint));
  for (int64_t j = rep.from_checkpoint + 1; j < k; ++j) {
    if (pa.before_step) pa.before_step(j);
    pa.step(j);
    ++rep.step_replays;
    Digest c = state_commitment(capture(pa.binding, j, job));
    if (c != sa[static_cast<size_t>(j)]) {
      line("both records commit to " + hex(sa[static_cast<size_t>(j)]) + " after step " + std::to_string(j) +
           ", but replaying it gives " + hex(c) + ": both are wrong there");
      return rep;
    }
  }
  if (rep.step_replays) line("replay: steps " + std::to_string(rep.from_checkpoint + 1) + ".." + std::to_string(k - 1) +
                             " replayed, each matching both records");
  State in = capture(pa.binding, k - 1, job);

  // Phase 2. Side b first; side a keeps its nodes so the referee can recompute any of them.
  Side sb2, sa2;
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
