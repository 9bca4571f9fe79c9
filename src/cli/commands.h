// The `maroon` subcommands. Each returns the process exit status: 0 success, 1 a verified
// difference (verify) or a failed check, 2 bad usage or input (reported by main).
#pragma once
#include <memory>
#include <string>

#include "cli/args.h"
#include "maroon/datasets.h"
#include "maroon/models.h"
#include "maroon/nn.h"

namespace maroon::cli {

int cmd_train(const Args& a);
int cmd_eval(const Args& a);
int cmd_digest(const Args& a);
int cmd_verify(const Args& a);

// Shared by the commands.
void apply_threads(const Args& a);  // --threads N
data::Mnist load_dataset(const std::string& dataset, const std::string& dir_override);
std::string check_dataset(const std::string& name);  // "mnist" or "fashion", else throws
// The test accuracy line's numbers: correct predictions over the test split.
int64_t test_correct(models::MnistModel& m, const data::Split& test);
std::string percent(int64_t correct, int64_t n);  // "98.21"
// A model of the kind the state's names say (l1.* for mlp, layers.* for cnn), loaded from it.
std::unique_ptr<models::MnistModel> model_from_state(const nn::StateDict& state, const std::string& what);
// The run record beside a weights file ("x.safetensors" -> "x.run.json"), or the path itself.
std::string record_path_for(const std::string& path);

}  // namespace maroon::cli
