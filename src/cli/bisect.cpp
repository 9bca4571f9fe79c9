// `maroon bisect A B`: two run records of the same job; the first step whose committed states
// differ, then the first node (or state tensor) of that step that differs, recomputed alone by the
// reference executor to say which side is right. `maroon trace RUN --step K`: a step's per-node
// trace. Each side's program is this command's training step (with the side's recorded
// perturbation, if it has one: what that party ran).
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "cli/commands.h"
#include "cli/run.h"
#include "maroon/backend.h"

namespace maroon::cli {

namespace {

struct BisectOptions {
  std::string a, b;
  DataOptions data;
};

int run_bisect(const BisectOptions& o, const Context& ctx) {
  apply_threads(o.data);
  RecordedRun ra = open_run(o.a), rb = open_run(o.b);
  const std::string &pa = ra.path, &pb = rb.path;
  data::Mnist ds = load_dataset(ra.cfg.dataset, o.data.dir);
  MnistProgram a(ra.cfg, ds.train, ra.perturbation()), b(ra.cfg, ds.train, rb.perturbation());
  verify::Program qa = a.program(), qb = b.program();
  ctx.log("maroon bisect: a = %s, b = %s (%s), %d thread(s), %s", pa.c_str(), pb.c_str(), ra.rec.job.name.c_str(),
          num_threads(), simd_target().c_str());
  auto t0 = std::chrono::steady_clock::now();
  verify::BisectReport r = verify::bisect(ra.rec, pa, qa, rb.rec, pb, qb);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string text;
  for (const std::string& l : r.lines) text += l + "\n";
  char b2[200];
  std::snprintf(b2, sizeof b2, "cost: %lld Merkle node pairs compared, %lld checkpoint load(s), %lld step replay(s), %.1f s\n",
                static_cast<long long>(r.merkle_compared), static_cast<long long>(r.checkpoint_loads),
                static_cast<long long>(r.step_replays), secs);
  text += b2;
  nlohmann::ordered_json j = {{"a", pa}, {"b", pb}, {"same", r.same}, {"step", r.step}, {"node", r.node},
                              {"state_tensor", r.state_tensor}, {"referee_says", r.referee_says},
                              {"merkle_compared", r.merkle_compared}, {"checkpoint_loads", r.checkpoint_loads},
                              {"step_replays", r.step_replays}, {"seconds", secs}, {"lines", r.lines}};
  if (r.node >= 0) j["node_op"] = r.node_a.op;
  ctx.result(j, text);
  return r.same ? kOk : kDiffers;
}

struct TraceOptions {
  std::string run, out;
  int64_t step = 0;
  DataOptions data;
};

int run_trace(const TraceOptions& o, const Context& ctx) {
  apply_threads(o.data);
  RecordedRun run = open_run(o.run);
  const std::string& path = run.path;
  data::Mnist ds = load_dataset(run.cfg.dataset, o.data.dir);
  MnistProgram prog(run.cfg, ds.train, run.perturbation());
  verify::Program p = prog.program();
  verify::Trace t = verify::trace_step(run.rec, path, p, o.step);
  std::string out = o.out.empty() ? std::filesystem::path(path).replace_extension("").replace_extension("").string() +
                                        ".step" + std::to_string(o.step) + ".trace.json"
                                  : o.out;
  verify::write_trace(t, out);
  nlohmann::ordered_json j = {{"trace", out}, {"step", o.step}, {"nodes", t.nodes.size()},
                              {"state_in", t.state_in}};
  ctx.result(j, "trace of step " + std::to_string(o.step) + ": " + std::to_string(t.nodes.size()) + " nodes -> " +
                    out + "\n");
  return kOk;
}

Runner declare_bisect(CLI::App& app) {
  auto o = std::make_shared<BisectOptions>();
  app.add_option("A", o->a, "a run record (.run.json) or the weights file beside it")->required();
  app.add_option("B", o->b, "another run of the same job")->required();
  add_data_options(app, o->data);
  return [o](const Context& ctx) { return run_bisect(*o, ctx); };
}

Runner declare_trace(CLI::App& app) {
  auto o = std::make_shared<TraceOptions>();
  app.add_option("RUN", o->run, "the run record (.run.json) or the weights file beside it")->required();
  app.add_option("--step", o->step, "the step to trace (1-based)")->required()->check(integer_at_least(1));
  app.add_option("--out", o->out, "the trace file (default: RUN.stepK.trace.json)")->type_name("FILE");
  add_data_options(app, o->data);
  return [o](const Context& ctx) { return run_trace(*o, ctx); };
}

const Registration bisect_command("bisect",
                                  "find the first step, then the first node, where two runs of one job differ, and "
                                  "which side the reference executor supports (exit status 1)",
                                  declare_bisect);
const Registration trace_command("trace", "write the per-node trace of one step of a recorded run", declare_trace);

}  // namespace

}  // namespace maroon::cli
