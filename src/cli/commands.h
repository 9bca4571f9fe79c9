// What the MNIST subcommands (train, eval, digest, verify) share. Each registers itself
// (cli/command.h) and returns the exit status: kOk, kDiffers (a verified difference), kUsage.
#pragma once
#include <memory>
#include <string>

#include "cli/command.h"
#include "maroon/datasets.h"
#include "maroon/models.h"
#include "maroon/nn.h"

namespace maroon::cli {

// --data DIR and --threads T (train, eval, verify).
struct DataOptions {
  std::string dir;      // "" for the default (data_dir in run.h)
  int64_t threads = 0;  // 0: MAROON_THREADS, else all cores
};
void add_data_options(CLI::App& app, DataOptions& o);
void add_threads_option(CLI::App& app, DataOptions& o);  // --threads alone (infer)
void apply_threads(const DataOptions& o);
// --dataset mnist|fashion, or the DATASET positional.
CLI::Option* add_dataset_option(CLI::App& app, const std::string& name, std::string& dataset, const std::string& help);
data::Mnist load_dataset(const std::string& dataset, const std::string& dir_override);
std::string check_dataset(const std::string& name);  // "mnist" or "fashion", else throws
// The test accuracy line's numbers: correct predictions over the test split.
int64_t test_correct(models::MnistModel& m, const data::Split& test);
std::string percent(int64_t correct, int64_t n);  // "98.21"
// The run record beside a weights file ("x.safetensors" -> "x.run.json"), or the path itself.
std::string record_path_for(const std::string& path);
// Warns on stderr (always, not only without --quiet) for each tensor with NaN or inf values.
void warn_non_finite(const nn::StateDict& state, const std::string& what);

}  // namespace maroon::cli
