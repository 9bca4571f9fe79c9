// `maroon verify RUN [FILE...]`: checks the run record (its seal, Merkle root and job digest),
// hashes every file it names or that is given (checkpoints, data, weights), replays every step
// comparing its state commitment and loss, and with --accuracy re-measures the claimed test
// accuracy. Prints "verified" or each difference (file, field or step, both values; exit 1).
#include <cstdio>

#include "cli/commands.h"
#include "cli/run.h"
#include "maroon/backend.h"
#include "maroon/safetensors.h"

namespace maroon::cli {

namespace {

struct VerifyOptions {
  std::string run;
  std::vector<std::string> files;
  bool no_replay = false, accuracy = false;
  DataOptions data;
};

// The claimed test accuracy against the weights file's, measured now.
void check_accuracy(const verify::RunRecord& rec, const std::string& path, const data::Mnist& ds, bool fused,
                    verify::VerifyReport& rep) {
  auto claim = rec.claims.find("test_accuracy");
  if (claim == rec.claims.end() || rec.outputs.empty()) {
    rep.findings.push_back({path, "claims.test_accuracy", -1, "(none)", "nothing to re-measure"});
    return;
  }
  std::string weights = verify::resolve(path, rec.outputs.at(0).path);
  auto model = models::model_from_state(nn::safe_load(weights), "'" + weights + "'");
  const FusedScope products(fused);  // as the run measured it (train --fused)
  std::string got = percent(test_correct(*model, ds.test), ds.test.n);
  if (got != claim->second) rep.findings.push_back({path, "claims.test_accuracy (re-measured)", -1, claim->second, got});
}

int run_verify(const VerifyOptions& o, const Context& ctx) {
  apply_threads(o.data);
  RecordedRun run = open_run(o.run);
  const std::string& path = run.path;
  const verify::RunRecord& rec = run.rec;
  const RunConfig& cfg = run.cfg;
  data::Mnist ds = load_dataset(cfg.dataset, o.data.dir);
  ctx.log("maroon verify: %s (%s, %zu of %lld steps committed), %d thread(s), %s", path.c_str(), rec.job.name.c_str(),
          rec.states.empty() ? size_t{0} : rec.states.size() - 1, static_cast<long long>(rec.steps), num_threads(),
          simd_target().c_str());
  MnistProgram prog(cfg, ds.train);  // the job as it should run: a recorded perturbation is not replayed
  verify::Program program = prog.program();
  verify::VerifyOptions vo;
  vo.replay = !o.no_replay;
  vo.data_dir = data_dir(cfg.dataset, o.data.dir);
  vo.extra_files = o.files;
  if (o.run != path) vo.extra_files.push_back(o.run);  // the weights file named instead of the record
  verify::VerifyReport rep = verify::verify_run(rec, path, &program, vo);
  if (o.accuracy) check_accuracy(rec, path, ds, cfg.fused, rep);
  nlohmann::ordered_json found = nlohmann::ordered_json::array();
  std::string text;
  for (const verify::Finding& f : rep.findings) {
    found.push_back({{"file", f.file}, {"field", f.field}, {"step", f.step}, {"recorded", f.recorded}, {"found", f.found}});
    text += "differs: " + f.message() + "\n";
  }
  nlohmann::ordered_json j = {{"record", path},
                              {"verified", rep.findings.empty()},
                              {"files_checked", rep.files_checked},
                              {"steps_replayed", rep.steps_replayed},
                              {"merkle_root", verify::hex(rec.merkle_root)},
                              {"differences", found}};
  std::string weights = rec.outputs.empty() ? "" : rec.outputs[0].sha256;
  std::string trace = rec.losses.empty() ? "" : models::loss_trace_digest(rec.losses);
  j["weights_sha256"] = weights, j["loss_trace_sha256"] = trace;
  if (rep.findings.empty())
    text = "verified: " + std::to_string(rep.files_checked) + " files, " + std::to_string(rep.steps_replayed) +
           " steps replayed, every state commitment" + (o.accuracy ? " and the test accuracy" : "") +
           " the same\nmerkle root        " + verify::hex(rec.merkle_root) + "\nweights sha256     " + weights +
           "\nloss trace sha256  " + trace + "\n";
  ctx.result(j, text);
  return rep.findings.empty() ? kOk : kDiffers;
}

Runner declare_verify(CLI::App& app) {
  auto o = std::make_shared<VerifyOptions>();
  app.add_option("RUN", o->run, "the run record (.run.json) or the weights file beside it")->required();
  app.add_option("FILE", o->files, "more files to check against the record (weights, checkpoints)");
  app.add_flag("--no-replay", o->no_replay, "check the record and the files only");
  app.add_flag("--accuracy", o->accuracy, "re-measure the claimed test accuracy");
  add_data_options(app, o->data);
  return [o](const Context& ctx) { return run_verify(*o, ctx); };
}

const Registration verify_command("verify",
                                  "check a run record, every file it names and every step (replayed); print \"verified\" "
                                  "or each difference (exit status 1)",
                                  declare_verify);

}  // namespace

}  // namespace maroon::cli
