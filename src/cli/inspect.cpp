// `maroon eval WEIGHTS` and `maroon digest FILE...`.
#include <sys/stat.h>

#include <fstream>

#include "cli/commands.h"
#include "cli/run.h"
#include "maroon/safetensors.h"

namespace maroon::cli {

namespace {

struct EvalOptions {
  std::string weights, dataset;
  DataOptions data;
};

int eval(const EvalOptions& o, const Context& ctx) {
  apply_threads(o.data);
  nn::StateDict state = nn::safe_load(o.weights);
  warn_non_finite(state, o.weights);
  auto model = models::model_from_state(state, "'" + o.weights + "'");
  // The dataset: --dataset, else the one the run record beside the weights names, else mnist.
  std::string dataset = o.dataset.empty() ? "mnist" : o.dataset;
  bool fused = false;  // the products as the run beside the weights computed them (train --fused)
  std::string rec = record_path_for(o.weights);
  struct stat st {};
  if (rec != o.weights && ::stat(rec.c_str(), &st) == 0) {  // stat: a FIFO named like a record must not block
    verify::RunRecord r = verify::read_record(rec);
    // The record is the weights' checksum: safetensors has none, so a changed bit would
    // otherwise evaluate silently. (verify checks the file named in the record; this is the
    // file given, which may be a copy.)
    std::string digest = verify::hex(verify::file_digest(o.weights, "[eval]"));
    if (!r.outputs.empty() && digest != r.outputs[0].sha256)
      throw FormatError("[eval] '" + o.weights + "' does not match the run record beside it ('" + rec +
                        "'): its sha256 is " + digest + ", the record says " + r.outputs[0].sha256 +
                        " (a changed or corrupted file)");
    if (o.dataset.empty()) dataset = config_of(r.job, "run record '" + rec + "'").dataset;
    // Read directly: with --dataset the record may be another program's (maroon.verify.Run),
    // whose job config config_of would refuse.
    auto products = r.job.config.find("products");
    fused = products != r.job.config.end() && products->second == "fused";
  }
  data::Mnist ds = load_dataset(dataset, o.data.dir);
  const FusedScope products(fused);
  int64_t c = test_correct(*model, ds.test);
  std::string acc = percent(c, ds.test.n);
  nlohmann::ordered_json j = {{"weights", o.weights}, {"model", model->kind()},  {"dataset", dataset},
                              {"correct", c},         {"total", ds.test.n},      {"test_accuracy", std::stod(acc)}};
  ctx.result(j, o.weights + " (" + model->kind() + " model) on the " + dataset + " test set: " + std::to_string(c) +
                    "/" + std::to_string(ds.test.n) + " correct, test accuracy " + acc + "%\n");
  return kOk;
}

Runner declare_eval(CLI::App& app) {
  auto o = std::make_shared<EvalOptions>();
  app.add_option("WEIGHTS", o->weights, "the weights file (.safetensors)")->required();
  add_dataset_option(app, "--dataset", o->dataset, "the test set (default: the run record's, else mnist)");
  add_data_options(app, o->data);
  return [o](const Context& ctx) { return eval(*o, ctx); };
}

Runner declare_digest(CLI::App& app) {
  auto files = std::make_shared<std::vector<std::string>>();
  app.add_option("FILE", *files, "weights files (.safetensors)")->required();
  return [files](const Context& ctx) {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    std::string text;
    for (const std::string& path : *files) {
      std::string d = models::weights_digest(nn::safe_load(path));
      j.push_back({{"file", path}, {"weights_sha256", d}});
      text += d + "  " + path + "\n";
    }
    ctx.result(j, text);
    return kOk;
  };
}

const Registration eval_command("eval", "print the test accuracy of a weights file", declare_eval);
const Registration digest_command(
    "digest", "print the weights digest (SHA-256 of the tensors as safetensors, no metadata)", declare_digest);

}  // namespace

}  // namespace maroon::cli
