// `maroon train`: trains with every step's state committed (src/verify), evaluates after each
// epoch, writes the weights, checkpoints and the run record, and prints the digests.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <utility>

#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/run.h"
#include "io/files.h"
#include "maroon/backend.h"
#include "maroon/safetensors.h"

namespace maroon::cli {

namespace {

struct TrainOptions {
  std::string task = "mnist", dataset, model = "mlp", out, resume_from, perturb;
  int64_t epochs = 1, batch = 0, seed = 0, steps = 0, checkpoint_every = 0, log_every = 50;
  double lr = 1e-3, lr_decay = 0.5;
  bool no_eval = false, resume = false;
  DataOptions data;
};

RunConfig config(const TrainOptions& o) {
  RunConfig cfg;
  // `train mnist --dataset fashion` is the spelling: "mnist" names the task, --dataset
  // the data. Only `train fashion --dataset mnist` contradicts itself.
  cfg.dataset = o.dataset.empty() ? o.task : o.dataset;
  if (o.task == "fashion" && cfg.dataset != "fashion") throw Error("dataset given twice: 'fashion' and --dataset mnist");
  cfg.model = o.model;
  cfg.epochs = o.epochs;
  cfg.batch = o.batch ? o.batch : cfg.model == "cnn" ? 512 : 64;
  cfg.seed = o.seed;
  cfg.lr = o.lr;
  cfg.lr_decay = o.lr_decay;
  cfg.max_steps = o.steps;
  return cfg;
}

// Where the weights and the run record go; checked for writability before any work.
std::pair<std::string, std::string> output_paths(const TrainOptions& o, const RunConfig& cfg) {
  std::string out = o.out.empty()
                        ? "runs/" + cfg.dataset + "-" + cfg.model + "-seed" + std::to_string(cfg.seed) + ".safetensors"
                        : o.out;
  std::string record_path = record_path_for(out);
  if (record_path == out) throw Error("--out must end in .safetensors, got '" + out + "'");
  std::filesystem::path parent = std::filesystem::path(out).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  // A read-only or missing output location is reported now, not after the whole run.
  io::check_writable(out, "[train]");
  io::check_writable(record_path, "[train]");
  return {out, record_path};
}

struct Loop {
  MnistProgram& prog;
  verify::Run& run;
  const data::Mnist& ds;
  const RunConfig& cfg;
  bool eval;
  Progress& progress;
};

// Runs the remaining steps, committing each; after each epoch a summary line (and the test
// accuracy unless `eval` is off) on stderr. Returns the last test accuracy.
std::string train_loop(const Loop& l) {
  double epoch_start = 0, loss_sum = 0;
  int64_t epoch_correct = 0, epoch_steps = 0;
  std::string last_test;
  while (l.run.step() < l.run.total_steps()) {
    int64_t done = l.run.step() + 1;
    models::StepResult r = l.prog.step(done);
    l.run.commit(r.loss);
    loss_sum += r.loss, epoch_correct += r.correct, ++epoch_steps;
    l.progress.step(done, r.loss, r.correct);
    if (done % l.prog.steps_per_epoch() != 0 && done != l.run.total_steps()) continue;
    double t = l.progress.elapsed();
    char line[256];
    std::snprintf(line, sizeof line, "epoch %lld/%lld: %lld steps, mean loss %.4f, train acc %s%%",
                  static_cast<long long>((done - 1) / l.prog.steps_per_epoch() + 1),
                  static_cast<long long>(l.cfg.epochs), static_cast<long long>(epoch_steps),
                  loss_sum / static_cast<double>(epoch_steps),
                  percent(epoch_correct, epoch_steps * l.cfg.batch).c_str());
    std::string text = line;
    if (l.eval) {  // evaluation is not training: the clock stops for it
      l.progress.pause();
      int64_t c = test_correct(l.prog.model(), l.ds.test);
      l.progress.resume();
      last_test = percent(c, l.ds.test.n);
      text += ", test acc " + last_test + "%";
    }
    std::snprintf(line, sizeof line, ", %.1f s", t - epoch_start);
    l.progress.line(text + line);
    epoch_start = t, loss_sum = 0, epoch_correct = 0, epoch_steps = 0;
  }
  return last_test;
}

// The results on stdout: the digests, the files, the accuracy and the time per epoch.
void report(const Context& ctx, const verify::RunRecord& rec, double seconds, int64_t steps_run,
            const MnistProgram& prog, const std::string& out, const std::string& record_path) {
  double epochs_run = static_cast<double>(steps_run) / static_cast<double>(prog.steps_per_epoch());
  double per_epoch = seconds / epochs_run;
  std::string weights = rec.outputs.at(0).sha256, trace = models::loss_trace_digest(rec.losses);
  auto acc = rec.claims.find("test_accuracy");
  nlohmann::ordered_json j = {{"weights", out},
                              {"run_record", record_path},
                              {"steps", rec.steps},
                              {"test_accuracy", nullptr},
                              {"seconds_per_epoch", std::round(per_epoch * 1000) / 1000},
                              {"train_seconds", std::round(seconds * 1000) / 1000},
                              {"weights_sha256", weights},
                              {"loss_trace_sha256", trace},
                              {"merkle_root", verify::hex(rec.merkle_root)},
                              {"final_state_sha256", verify::hex(rec.states.back())}};
  char b[1024];
  std::string text = "weights            " + out + "\nrun record         " + record_path + "\n";
  if (acc != rec.claims.end()) {
    j["test_accuracy"] = std::stod(acc->second);
    text += "test accuracy      " + acc->second + "%\n";
  }
  std::snprintf(b, sizeof b, "time per epoch     %.1f s (training steps only%s; %.1f s for %lld steps)\n", per_epoch,
                steps_run % prog.steps_per_epoch() ? ", extrapolated" : "", seconds, static_cast<long long>(steps_run));
  text += b;
  text += "weights sha256     " + weights + "\nloss trace sha256  " + trace + "\nmerkle root        " +
          verify::hex(rec.merkle_root) + "\n";
  ctx.result(j, text);
}

int train(const TrainOptions& o, const Context& ctx) {
  RunConfig cfg = config(o);
  apply_threads(o.data);
  auto [out, record_path] = output_paths(o, cfg);
  std::string dir = data_dir(cfg.dataset, o.data.dir);
  data::Mnist ds = load_dataset(cfg.dataset, o.data.dir);
  MnistProgram prog(cfg, ds.train, o.perturb);
  verify::RunOptions ro;
  ro.record = record_path, ro.steps = prog.total_steps(), ro.command_line = ctx.command_line;
  ro.checkpoint_every = o.checkpoint_every ? o.checkpoint_every : prog.steps_per_epoch();
  ro.resume = !o.resume_from.empty() ? o.resume_from : o.resume ? "latest" : "";
  verify::Run run(mnist_job(cfg, dir, prog.model()), prog.binding(), ro);
  char lr[64];
  std::snprintf(lr, sizeof lr, "%g (x%g per epoch)", cfg.lr, cfg.lr_decay);
  ctx.log("maroon train: %s, %s model, %lld epoch(s) of %lld steps (batch %lld), %lld steps, seed %lld, Adam lr %s, "
          "%d thread(s), %s",
          cfg.dataset.c_str(), cfg.model.c_str(), static_cast<long long>(cfg.epochs),
          static_cast<long long>(prog.steps_per_epoch()), static_cast<long long>(cfg.batch),
          static_cast<long long>(prog.total_steps()), static_cast<long long>(cfg.seed), lr, num_threads(),
          simd_target().c_str());
  run.begin();
  if (run.step() > 0) ctx.log("resumed after step %lld", static_cast<long long>(run.step()));
  int64_t first = run.step();
  Progress progress(prog.total_steps(), prog.steps_per_epoch(), cfg.epochs, cfg.batch, o.log_every, ctx.quiet);
  std::string acc = train_loop({prog, run, ds, cfg, !o.no_eval, progress});
  double seconds = progress.elapsed();
  nn::safe_save(prog.model().state_dict(), out);
  std::map<std::string, std::string> claims;
  if (!acc.empty()) claims["test_accuracy"] = acc;
  if (!o.perturb.empty()) claims["perturbation"] = o.perturb;
  verify::RunRecord rec = run.finish({{"weights", out, ""}}, claims);
  report(ctx, rec, seconds, prog.total_steps() - first, prog, out, record_path);
  return kOk;
}

Runner declare(CLI::App& app) {
  auto o = std::make_shared<TrainOptions>();
  add_dataset_option(app, "DATASET", o->task, "the task: mnist (default) or fashion");
  add_dataset_option(app, "--dataset", o->dataset, "the data to train on (default: the task's)");
  app.add_option("--model", o->model, "the model")->check(CLI::IsMember({"mlp", "cnn"}))->capture_default_str();
  app.add_option("--epochs", o->epochs, "epochs to train")->check(integer_at_least(1))->capture_default_str();
  app.add_option("--batch", o->batch, "batch size (default: 64 for mlp, 512 for cnn)")->check(integer_at_least(1));
  app.add_option("--seed", o->seed, "the seed of the initial weights and the shuffle")
      ->check(integer_at_least(0))
      ->capture_default_str();
  app.add_option("--lr", o->lr, "Adam's learning rate")->check(positive_number(1e9))->capture_default_str();
  app.add_option("--lr-decay", o->lr_decay, "the learning rate's factor per epoch, in (0, 1]")
      ->check(positive_number(1e9))
      ->capture_default_str();
  app.add_option("--steps", o->steps, "stop after K steps (0: every step of every epoch)")
      ->check(integer_at_least(0))
      ->type_name("K");
  app.add_option("--out", o->out, "the weights file (default: runs/DATASET-MODEL-seedS.safetensors); the run "
                 "record goes beside it as .run.json, checkpoints in .ckpt/")->type_name("FILE.safetensors");
  app.add_option("--checkpoint-every", o->checkpoint_every,
                 "a checkpoint (the full state) every K steps (default: each epoch's end; always the first and "
                 "the last)")
      ->check(integer_at_least(1))
      ->type_name("K");
  app.add_flag("--resume", o->resume, "resume from the newest checkpoint the run record at --out names");
  app.add_option("--resume-from", o->resume_from, "resume from this checkpoint of the run record at --out")
      ->type_name("CKPT");
  app.add_option("--perturb", o->perturb,
                 "fault injection for tests and demonstrations: flip BIT of element ELEMENT of model tensor TENSOR "
                 "after step STEP (the record says so under claims.perturbation)")
      ->type_name("STEP:TENSOR:ELEMENT:BIT");
  app.add_option("--log-every", o->log_every, "a progress line every K steps when stderr is not a terminal")
      ->check(integer_at_least(1))
      ->type_name("K")
      ->capture_default_str();
  app.add_flag("--no-eval", o->no_eval, "skip the test-set evaluation after each epoch");
  add_data_options(app, o->data);
  return [o](const Context& ctx) { return train(*o, ctx); };
}

const Registration command("train",
                           "train a model, committing its state after every step; write the weights, checkpoints "
                           "and FILE.run.json; print the digests",
                           declare);

}  // namespace

}  // namespace maroon::cli
