// `maroon train`: trains, evaluates after each epoch, writes the weights and the run record, and
// prints the digests.
#include <cstdio>
#include <filesystem>

#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/run.h"
#include "io/files.h"
#include "maroon/backend.h"
#include "maroon/safetensors.h"

namespace maroon::cli {

int cmd_train(const Args& a) {
  if (a.positional.size() > 1) throw Error("train takes one dataset name (mnist or fashion)");
  RunConfig cfg;
  // `train mnist --dataset fashion` is the spelling: "mnist" names the task, --dataset
  // the data. Only `train fashion --dataset mnist` contradicts itself.
  std::string task = check_dataset(a.positional.empty() ? "mnist" : a.positional[0]);
  cfg.dataset = check_dataset(a.get("dataset", task));
  if (task == "fashion" && cfg.dataset != "fashion") throw Error("dataset given twice: 'fashion' and --dataset mnist");
  cfg.model = a.get("model", "mlp");
  if (cfg.model != "mlp" && cfg.model != "cnn") throw Error("--model must be mlp or cnn, got '" + cfg.model + "'");
  cfg.epochs = a.get_int("epochs", 1, 1);
  cfg.batch = a.get_int("batch", cfg.model == "cnn" ? 512 : 64, 1);
  cfg.seed = a.get_int("seed", 0, 0);
  cfg.lr = a.get_double("lr", 1e-3);
  cfg.lr_decay = a.get_double("lr-decay", 0.5);
  cfg.max_steps = a.get_int("steps", 0, 0);
  cfg.checkpoint_every = a.get_int("checkpoint-every", 50, 1);
  bool eval = !a.has("no-eval");
  apply_threads(a);

  std::string out =
      a.get("out", "runs/" + cfg.dataset + "-" + cfg.model + "-seed" + std::to_string(cfg.seed) + ".safetensors");
  std::string record_path = record_path_for(out);
  if (record_path == out) throw Error("--out must end in .safetensors, got '" + out + "'");
  std::filesystem::path parent = std::filesystem::path(out).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  // A read-only or missing output location is reported now, not after the whole run.
  io::check_writable(out, "[train]");
  io::check_writable(record_path, "[train]");

  data::Mnist ds = load_dataset(cfg.dataset, a.get("data", ""));
  Run run(cfg, ds.train);
  RunRecord rec;
  rec.cfg = cfg;
  rec.data_sha256 = split_digest(ds.train);
  rec.threads = num_threads();
  char lr[64];
  std::snprintf(lr, sizeof lr, "%g (x%g per epoch)", cfg.lr, cfg.lr_decay);
  std::printf(
      "maroon train: %s, %s model, %lld epoch(s) of %lld steps (batch %lld), %lld steps, seed %lld, Adam lr %s, "
      "%d thread(s), %s\n",
      cfg.dataset.c_str(), cfg.model.c_str(), static_cast<long long>(cfg.epochs),
      static_cast<long long>(run.steps_per_epoch()), static_cast<long long>(cfg.batch),
      static_cast<long long>(run.total_steps()), static_cast<long long>(cfg.seed), lr, num_threads(),
      simd_target().c_str());

  Progress progress(run.total_steps(), run.steps_per_epoch(), cfg.epochs, cfg.batch, a.get_int("log-every", 50, 1));
  double epoch_start = 0, loss_sum = 0;
  int64_t epoch_correct = 0, epoch_steps = 0;
  std::string last_test;
  while (run.done() < run.total_steps()) {
    models::StepResult r = run.step();
    int64_t done = run.done();
    rec.losses.push_back(r.loss);
    loss_sum += r.loss, epoch_correct += r.correct, ++epoch_steps;
    progress.step(done, r.loss, r.correct);
    // Digests and evaluation are not training: the clock stops for them.
    if (run.is_checkpoint(done)) {
      progress.pause();
      rec.checkpoints.push_back({done, run.weights_digest()});
      progress.resume();
    }
    if (done % run.steps_per_epoch() == 0 || done == run.total_steps()) {
      double t = progress.elapsed();
      char line[256];
      std::snprintf(line, sizeof line, "epoch %lld/%lld: %lld steps, mean loss %.4f, train acc %s%%",
                    static_cast<long long>((done - 1) / run.steps_per_epoch() + 1), static_cast<long long>(cfg.epochs),
                    static_cast<long long>(epoch_steps), loss_sum / static_cast<double>(epoch_steps),
                    percent(epoch_correct, epoch_steps * cfg.batch).c_str());
      std::string text = line;
      if (eval) {
        progress.pause();
        int64_t c = test_correct(run.model(), ds.test);
        progress.resume();
        last_test = percent(c, ds.test.n);
        text += ", test acc " + last_test + "%";
      }
      std::snprintf(line, sizeof line, ", %.1f s", t - epoch_start);
      progress.line(text + line);
      epoch_start = t, loss_sum = 0, epoch_correct = 0, epoch_steps = 0;
    }
  }
  rec.train_seconds = progress.elapsed();
  nn::StateDict state = run.model().state_dict();
  nn::safe_save(state, out);
  rec.weights_sha256 = models::weights_digest(state);
  rec.loss_trace_sha256 = models::loss_trace_digest(rec.losses);
  rec.test_accuracy = last_test;
  write_record(rec, record_path);

  double epochs_run = static_cast<double>(run.total_steps()) / static_cast<double>(run.steps_per_epoch());
  std::printf("weights            %s\n", out.c_str());
  std::printf("run record         %s\n", record_path.c_str());
  if (eval) std::printf("test accuracy      %s%%\n", last_test.c_str());
  std::printf("time per epoch     %.1f s (training steps only%s; %.1f s for %lld steps)\n",
              rec.train_seconds / epochs_run, epochs_run == static_cast<double>(cfg.epochs) ? "" : ", extrapolated",
              rec.train_seconds, static_cast<long long>(run.total_steps()));
  std::printf("weights sha256     %s\n", rec.weights_sha256.c_str());
  std::printf("loss trace sha256  %s\n", rec.loss_trace_sha256.c_str());
  return 0;
}

}  // namespace maroon::cli
