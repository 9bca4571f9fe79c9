// `maroon train`: trains with every step's state committed (src/verify), evaluates after each
// epoch, writes the weights, checkpoints and the run record, and prints the digests.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <tuple>
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
  int64_t epochs = 1, batch = 0, seed = 0, steps = 0, checkpoint_every = 0, log_every = 50, shards = 1;
  double lr = 1e-3, lr_decay = 0.5, timeout = 600;
  bool no_eval = false, resume = false, no_jit = false, fused = false;
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
  cfg.shards = o.shards;
  cfg.fused = o.fused;
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
  verify::Run* run;  // rank 0's; the other ranks commit nothing
  int64_t first;     // steps done before this loop (a resume)
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
  for (int64_t done = l.first + 1; done <= l.prog.total_steps(); ++done) {
    models::StepResult r = l.prog.step(done);
    if (l.run) l.run->commit(r.loss);
    loss_sum += r.loss, epoch_correct += r.correct, ++epoch_steps;
    l.progress.step(done, r.loss, r.correct);
    if (done % l.prog.steps_per_epoch() != 0 && done != l.prog.total_steps()) continue;
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
      const FusedScope products(l.cfg.fused);  // the test set's products as the run's
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
                              {"shards", prog.shards()},
                              {"products", prog.fused() ? "fused" : "unfused"},
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
  if (prog.fused()) text += "products           fused (REDUCE_MULACC, docs/spec.md §14)\n";
  text += "weights sha256     " + weights + "\nloss trace sha256  " + trace + "\nmerkle root        " +
          verify::hex(rec.merkle_root) + "\n";
  ctx.result(j, text);
}

// Every rank runs this; rank 0 alone evaluates, prints, commits and writes files (the other ranks'
// states are checked against rank 0's after every step by dist::DataParallel). Ranks must train
// on the same data: a rank with other files is named before the first step.
int train_ranks(const TrainOptions& o, const Context& ctx, const RunConfig& cfg, dist::Comm* comm) {
  const int rank = comm ? comm->rank() : 0, ranks = comm ? comm->size() : 1;
  if (ranks > 1 && (o.resume || !o.resume_from.empty()))
    throw Error("--resume under MPI is not supported: resume the run in one process (the same bits)");
  std::string out, record_path;
  if (rank == 0) std::tie(out, record_path) = output_paths(o, cfg);
  std::string dir = data_dir(cfg.dataset, o.data.dir);
  data::Mnist ds = load_dataset(cfg.dataset, o.data.dir);
  if (ranks > 1) {
    auto bytes = [](const std::vector<uint8_t>& v) {
      return std::string_view(reinterpret_cast<const char*>(v.data()), v.size());
    };
    std::string mine = verify::hex(verify::sha256(bytes(ds.train.images))) +
                       verify::hex(verify::sha256(bytes(ds.train.labels)));
    std::vector<std::string> all = comm->all_gather(verify::hex(verify::sha256(mine)));
    for (int q = 1; q < ranks; ++q)
      if (all[q] != all[0])
        throw Error("rank " + std::to_string(q) + "'s training data (sha256 " + all[q] + ") is not rank 0's (" +
                    all[0] + ")");
  }
  MnistProgram prog(cfg, ds.train, o.perturb, comm, o.timeout);
  prog.set_jit(!o.no_jit);  // the one-process step (data parallel steps run without it)
  std::optional<verify::Run> run;
  if (rank == 0) {
    verify::RunOptions ro;
    ro.record = record_path, ro.steps = prog.total_steps(), ro.command_line = ctx.command_line;
    ro.checkpoint_every = o.checkpoint_every ? o.checkpoint_every : prog.steps_per_epoch();
    ro.resume = !o.resume_from.empty() ? o.resume_from : o.resume ? "latest" : "";
    run.emplace(mnist_job(cfg, dir, prog.model()), prog.binding(), ro);
  }
  Context quiet = ctx;
  quiet.quiet = ctx.quiet || rank != 0;
  char lr[64], dp[64] = "";
  std::snprintf(lr, sizeof lr, "%g (x%g per epoch)", cfg.lr, cfg.lr_decay);
  if (cfg.shards > 1 || ranks > 1)
    std::snprintf(dp, sizeof dp, ", %lld shards on %d rank(s)", static_cast<long long>(cfg.shards), ranks);
  quiet.log("maroon train: %s, %s model, %lld epoch(s) of %lld steps (batch %lld%s), %lld steps, seed %lld, Adam lr "
            "%s, %d thread(s), %s%s",
            cfg.dataset.c_str(), cfg.model.c_str(), static_cast<long long>(cfg.epochs),
            static_cast<long long>(prog.steps_per_epoch()), static_cast<long long>(cfg.batch), dp,
            static_cast<long long>(prog.total_steps()), static_cast<long long>(cfg.seed), lr, num_threads(),
            simd_target().c_str(), cfg.fused ? ", fused products" : "");
  int64_t first = 0;
  if (run) {
    run->begin();
    first = run->step();
    if (first > 0) ctx.log("resumed after step %lld", static_cast<long long>(first));
  }
  Progress progress(prog.total_steps(), prog.steps_per_epoch(), cfg.epochs, cfg.batch, o.log_every, quiet.quiet);
  std::string acc = train_loop({prog, run ? &*run : nullptr, first, ds, cfg, !o.no_eval && rank == 0, progress});
  // The clock stops once every step's state is committed: the hasher may still be a few states
  // behind the loop (verify/run.cpp), and a run is not done before its commitments are.
  if (run) run->commitments();
  double seconds = progress.elapsed();
  if (rank != 0) return kOk;
  nn::safe_save(prog.model().state_dict(), out);
  std::map<std::string, std::string> claims;
  if (!acc.empty()) claims["test_accuracy"] = acc;
  if (!o.perturb.empty()) claims["perturbation"] = o.perturb;
  if (ranks > 1) claims["ranks"] = std::to_string(ranks);  // where it ran; the bits do not depend on it
  verify::RunRecord rec = run->finish({{"weights", out, ""}}, claims);
  report(ctx, rec, seconds, prog.total_steps() - first, prog, out, record_path);
  return kOk;
}

int train(const TrainOptions& o, const Context& ctx) {
  RunConfig cfg = config(o);
  apply_threads(o.data);
  // Under mpirun (or another MPI launcher) this process is one rank of MPI_COMM_WORLD.
  std::unique_ptr<dist::Comm> comm = dist::launched_by_mpi() ? dist::mpi_world() : nullptr;
  try {
    return train_ranks(o, ctx, cfg, comm.get());
  } catch (const std::exception& e) {
    if (!comm || comm->size() == 1) throw;
    // The other ranks would wait for this one until their timeout: end them all now.
    std::fflush(stdout);
    std::fprintf(stderr, "maroon train: rank %d of %d: error: %s\n", comm->rank(), comm->size(), e.what());
    dist::abort_world(kUsage);
  }
}

Runner declare_train(CLI::App& app) {
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
  app.add_flag("--no-jit", o->no_jit,
               "run every step's function instead of replaying the step TinyJit captured (same bits, slower)");
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
  app.add_flag("--fused", o->fused, "products (layers, convolutions and their gradients) as fused multiply-adds, "
               "one rounding a step (REDUCE_MULACC, docs/spec.md §14): other bits than the default's, the same on "
               "every machine, faster where the CPU has FMA; the run record says so, so verify and resume follow");
  app.add_option("--shards", o->shards, "cut each batch into S shards summed in a fixed order (docs/dist.md): "
                 "the same bits on any number of MPI ranks up to S (mpirun -np R maroon train ...)")
      ->check(integer_at_least(1))
      ->type_name("S")
      ->capture_default_str();
  app.add_option("--timeout", o->timeout, "under MPI: seconds a rank waits for the others before the job ends "
                 "with an error (0: forever)")
      ->check(CLI::NonNegativeNumber)
      ->type_name("SECONDS")
      ->capture_default_str();
  add_data_options(app, o->data);
  return [o](const Context& ctx) { return train(*o, ctx); };
}

const Registration train_command("train",
                                 "train a model, committing its state after every step; write the weights, checkpoints "
                                 "and FILE.run.json; print the digests",
                                 declare_train);

}  // namespace

}  // namespace maroon::cli
