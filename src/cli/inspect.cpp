// `maroon eval WEIGHTS` and `maroon digest FILE...`.
#include <cstdio>
#include <fstream>

#include "cli/commands.h"
#include "cli/run.h"
#include "maroon/safetensors.h"

namespace maroon::cli {

int cmd_eval(const Args& a) {
  if (a.positional.size() != 1) throw Error("eval takes one weights file (.safetensors)");
  apply_threads(a);
  const std::string& path = a.positional[0];
  auto model = model_from_state(nn::safe_load(path), "'" + path + "'");
  // The dataset: --dataset, else the one the run record beside the weights names, else mnist.
  std::string dataset = "mnist";
  std::string rec = record_path_for(path);
  if (a.has("dataset"))
    dataset = check_dataset(a.get("dataset", ""));
  else if (rec != path && std::ifstream(rec).good())
    dataset = check_dataset(read_record(rec).cfg.dataset);
  data::Mnist ds = load_dataset(dataset, a.get("data", ""));
  int64_t c = test_correct(*model, ds.test);
  std::printf("%s (%s model) on the %s test set: %lld/%lld correct, test accuracy %s%%\n", path.c_str(),
              model->kind().c_str(), dataset.c_str(), static_cast<long long>(c), static_cast<long long>(ds.test.n),
              percent(c, ds.test.n).c_str());
  return 0;
}

int cmd_digest(const Args& a) {
  if (a.positional.empty()) throw Error("digest takes one or more weights files (.safetensors)");
  for (const std::string& path : a.positional)
    std::printf("%s  %s\n", models::weights_digest(nn::safe_load(path)).c_str(), path.c_str());
  return 0;
}

}  // namespace maroon::cli
