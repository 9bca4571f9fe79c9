// `maroon verify RUN`: replays a recorded run step by step and names the first step whose loss or
// weights differ, or says "identical".
#include <cstdio>
#include <cstring>

#include "cli/commands.h"
#include "cli/run.h"
#include "maroon/backend.h"

namespace maroon::cli {

namespace {

std::string bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  char b[64];
  std::snprintf(b, sizeof b, "0x%08x (%.9g)", u, static_cast<double>(f));
  return b;
}

// The first difference: where (the step, 0 for the data, -1 for the end), what differs, the
// replay's value and the record's, and the line printed for it.
struct Difference {
  int64_t step;
  std::string field, got, recorded, text;
};

int differs(const Context& ctx, const std::string& path, const Difference& d) {
  nlohmann::ordered_json j = {{"record", path},
                              {"identical", false},
                              {"first_difference",
                               {{"step", d.step == -1 ? nlohmann::ordered_json("end") : nlohmann::ordered_json(d.step)},
                                {"field", d.field},
                                {"replay", d.got},
                                {"recorded", d.recorded}}}};
  ctx.result(j, d.text + "\n");
  return kDiffers;
}

// Replays every step, comparing each loss and each checkpoint's weights digest with the record.
// Returns false with `d` filled at the first difference.
bool replay(Run& run, const RunRecord& rec, const std::string& path, std::vector<float>& losses, Difference& d) {
  size_t next_ckpt = 0;
  while (run.done() < run.total_steps()) {
    models::StepResult r = run.step();
    int64_t done = run.done();
    losses.push_back(r.loss);
    float want = rec.losses[static_cast<size_t>(done - 1)];
    if (std::memcmp(&want, &r.loss, 4) != 0) {
      d = {done, "loss", bits(r.loss), bits(want), ""};
      d.text = "differs at step " + std::to_string(done) + ": loss " + d.got + ", the run recorded " + d.recorded;
      return false;
    }
    if (!run.is_checkpoint(done)) continue;
    std::string got = run.weights_digest();
    if (next_ckpt >= rec.checkpoints.size() || rec.checkpoints[next_ckpt].step != done)
      throw FormatError("[verify] '" + path + "': no recorded weights digest for step " + std::to_string(done));
    const Checkpoint& c = rec.checkpoints[next_ckpt++];
    if (got != c.weights_sha256) {
      int64_t prev = next_ckpt >= 2 ? rec.checkpoints[next_ckpt - 2].step : 0;
      d = {done, "weights_sha256", got, c.weights_sha256, ""};
      d.text = "differs at step " + std::to_string(done) + ": weights sha256 " + got + ", the run recorded " +
               c.weights_sha256 + " (weights matched after step " + std::to_string(prev) +
               "; every loss through step " + std::to_string(done) + " matched)";
      return false;
    }
  }
  return true;
}

int verify(const std::string& given, const DataOptions& data, const Context& ctx) {
  apply_threads(data);
  std::string path = record_path_for(given);
  RunRecord rec = read_record(path);
  check_dataset(rec.cfg.dataset);
  data::Mnist ds = load_dataset(rec.cfg.dataset, data.dir);
  ctx.log("maroon verify: %s (%s, %s model, %zu steps), %d thread(s), %s", path.c_str(), rec.cfg.dataset.c_str(),
          rec.cfg.model.c_str(), rec.losses.size(), num_threads(), simd_target().c_str());
  std::string data_sha = split_digest(ds.train);
  if (data_sha != rec.data_sha256)
    return differs(ctx, path,
                   {0, "data_sha256", data_sha, rec.data_sha256,
                    "differs before step 1: the training data's sha256 is " + data_sha + ", the run used " +
                        rec.data_sha256});
  Run run(rec.cfg, ds.train);
  if (static_cast<int64_t>(rec.losses.size()) != run.total_steps())
    throw FormatError("[verify] '" + path + "': " + std::to_string(rec.losses.size()) +
                      " losses recorded, the run has " + std::to_string(run.total_steps()) + " steps");
  std::vector<float> losses;
  Difference d;
  if (!replay(run, rec, path, losses, d)) return differs(ctx, path, d);
  std::string weights = run.weights_digest(), trace = models::loss_trace_digest(losses);
  if (weights != rec.weights_sha256)
    return differs(ctx, path,
                   {-1, "weights_sha256", weights, rec.weights_sha256,
                    "differs at the end: weights sha256 " + weights + " (recorded " + rec.weights_sha256 + ")"});
  if (trace != rec.loss_trace_sha256)
    return differs(ctx, path,
                   {-1, "loss_trace_sha256", trace, rec.loss_trace_sha256,
                    "differs at the end: loss trace sha256 " + trace + " (recorded " + rec.loss_trace_sha256 + ")"});
  nlohmann::ordered_json j = {{"record", path},           {"identical", true},           {"steps", run.total_steps()},
                              {"weights_sha256", weights}, {"loss_trace_sha256", trace}};
  ctx.result(j, "identical: " + std::to_string(run.total_steps()) +
                    " steps, every loss and weights digest the same\nweights sha256     " + weights +
                    "\nloss trace sha256  " + trace + "\n");
  return kOk;
}

Runner declare(CLI::App& app) {
  auto run = std::make_shared<std::string>();
  auto data = std::make_shared<DataOptions>();
  app.add_option("RUN", *run, "the run record (.run.json) or the weights file beside it")->required();
  add_data_options(app, *data);
  return [run, data](const Context& ctx) { return verify(*run, *data, ctx); };
}

const Registration command("verify",
                           "replay a run and print \"identical\" or the first step whose loss or weights differ "
                           "(exit status 1)",
                           declare);

}  // namespace

}  // namespace maroon::cli
