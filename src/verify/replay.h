// Internal to src/verify: rebuilding the state before a step from checkpoints and replays, and
// tracing one step (shared by bisect, trace_step and state_before).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "maroon/verify.h"
#include "verify/tracer.h"

namespace maroon::verify {

struct Rebuilt {
  State state;                     // after step k - 1 (valid unless mismatch >= 0)
  int64_t from_checkpoint = -1;    // the checkpoint replays started from (0 with none: the program's own)
  int64_t loads = 0, replays = 0;
  int64_t mismatch = -1;           // a replayed step whose commitment is not the agreed one
  Digest got{};                    // what replaying it gave
  std::vector<std::string> notes;  // checkpoints passed over, and why
};
// The state after step k - 1: the newest checkpoint among `files` (step, path) at or before
// k - 1 whose bytes hash to agreed[step], then steps replayed with `p`, each checked against
// agreed[j].
Rebuilt rebuild(std::vector<std::pair<int64_t, std::string>> files, const std::vector<Digest>& agreed, Program& p,
                int64_t k, const Digest& job);

struct TracedStep {
  Trace trace;
  Digest commitment{};  // of the state after the step
};
// Step k on the state `in` with program p, every node traced. The returned tracer is detached;
// with `keep` it holds every node so that the referee can recompute any of them.
std::unique_ptr<Tracer> traced_step(Program& p, const State& in, int64_t k, const Digest& job, bool keep,
                                    TracedStep& out);

}  // namespace maroon::verify
