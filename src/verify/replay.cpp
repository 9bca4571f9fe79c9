// Rebuilding the state before a step and tracing the step (see replay.h), and the public
// state_before and trace_step built on them.
#include "verify/replay.h"

#include <algorithm>

#include "verify/digest.h"

namespace maroon::verify {

Rebuilt rebuild(std::vector<std::pair<int64_t, std::string>> files, const std::vector<Digest>& agreed, Program& p,
                int64_t k, const Digest& job) {
  Rebuilt r;
  std::sort(files.begin(), files.end(), [](auto& x, auto& y) { return x.first > y.first; });
  State base;
  for (auto& [step, path] : files) {
    if (step > k - 1 || step >= static_cast<int64_t>(agreed.size()) || r.from_checkpoint >= 0) continue;
    Digest got;
    try {
      ++r.loads;
      base = read_checkpoint(path, &got);
    } catch (const FormatError& e) {
      r.notes.push_back(std::string("checkpoint passed over: ") + e.what());
      continue;
    }
    if (got != agreed[static_cast<size_t>(step)]) {
      r.notes.push_back("checkpoint passed over: " + path + " has sha256 " + hex(got) + ", not the state of step " +
                        std::to_string(step));
      continue;
    }
    r.from_checkpoint = step;
  }
  if (r.from_checkpoint < 0) {
    r.from_checkpoint = 0;  // the program as constructed: its initial state
    base = capture(p.binding, 0, job);
    if (agreed.empty() || state_commitment(base) != agreed[0]) {
      r.mismatch = 0, r.got = state_commitment(base);
      return r;
    }
  }
  restore(p.binding, base, job, "checkpoint of step " + std::to_string(r.from_checkpoint));
  for (int64_t j = r.from_checkpoint + 1; j < k; ++j) {
    if (p.before_step) p.before_step(j);
    p.step(j);
    ++r.replays;
    Digest c = state_commitment(capture(p.binding, j, job));
    if (c != agreed[static_cast<size_t>(j)]) {
      r.mismatch = j, r.got = c;
      return r;
    }
  }
  r.state = capture(p.binding, k - 1, job);
  return r;
}

std::unique_ptr<Tracer> traced_step(Program& p, const State& in, int64_t k, const Digest& job, bool keep,
                                    TracedStep& out) {
  restore(p.binding, in, job, "the state before step " + std::to_string(k));
  auto t = std::make_unique<Tracer>(&p.binding, std::nullopt, keep);
  if (p.before_step) p.before_step(k);
  p.step(k);
  State after = capture(p.binding, k, job);
  t->record_state_out(after);
  t->detach();
  t->trace().step = k;
  t->trace().job_sha256 = hex(job);
  t->trace().state_in = hex(state_commitment(in));
  out = {t->trace(), state_commitment(after)};
  return t;
}

namespace {
std::vector<std::pair<int64_t, std::string>> files_of(const RunRecord& r, const std::string& path) {
  std::vector<std::pair<int64_t, std::string>> out;
  for (auto& c : r.checkpoints) out.push_back({c.step, resolve(path, c.path)});
  return out;
}
}  // namespace

State state_before(const RunRecord& r, const std::string& path, Program& p, int64_t k, int64_t* replays) {
  if (k < 1 || k >= static_cast<int64_t>(r.states.size()))
    throw Error("[replay] step " + std::to_string(k) + " is not a step '" + path + "' records (1.." +
                std::to_string(static_cast<int64_t>(r.states.size()) - 1) + ")");
  Rebuilt b = rebuild(files_of(r, path), r.states, p, k, r.job.digest());
  if (replays) *replays = b.replays;
  if (b.mismatch >= 0)
    throw FormatError("[replay] '" + path + "' commits to " + hex(r.states[static_cast<size_t>(b.mismatch)]) +
                      " after step " + std::to_string(b.mismatch) + ", replaying gives " + hex(b.got));
  return b.state;
}

Trace trace_step(const RunRecord& r, const std::string& path, Program& p, int64_t k) {
  State in = state_before(r, path, p, k);
  TracedStep out;
  traced_step(p, in, k, r.job.digest(), false, out);
  return out.trace;
}

}  // namespace maroon::verify
