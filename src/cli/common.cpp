// Helpers shared by the subcommands.
#include <cstdio>

#include "cli/commands.h"
#include "cli/run.h"
#include "maroon/backend.h"

namespace maroon::cli {

void add_data_options(CLI::App& app, DataOptions& o) {
  app.add_option("--data", o.dir, "the dataset's directory (IDX files)")->type_name("DIR");
  add_threads_option(app, o);
}

void add_threads_option(CLI::App& app, DataOptions& o) {
  app.add_option("--threads", o.threads, "worker threads (speed only: never changes a bit)")
      ->check(integer_at_least(1, 1024))
      ->type_name("T");
}

void apply_threads(const DataOptions& o) {
  if (o.threads > 0) set_num_threads(static_cast<int>(o.threads));
}

CLI::Option* add_dataset_option(CLI::App& app, const std::string& name, std::string& dataset, const std::string& help) {
  return app.add_option(name, dataset, help)->check(CLI::IsMember({"mnist", "fashion"}));
}

std::string check_dataset(const std::string& name) {
  if (name == "mnist" || name == "fashion") return name;
  throw Error("unknown dataset '" + name + "' (expected mnist or fashion)");
}

data::Mnist load_dataset(const std::string& dataset, const std::string& dir_override) {
  std::string dir = data_dir(dataset, dir_override);
  std::FILE* probe = std::fopen((dir + "/train-images-idx3-ubyte").c_str(), "rb");
  if (!probe)
    throw Error("no " + dataset + " data in '" + dir + "': run `bash tools/fetch_mnist.sh`, or give --data DIR");
  std::fclose(probe);
  return data::load_mnist(dir);
}

int64_t test_correct(models::MnistModel& m, const data::Split& test) {
  std::vector<uint8_t> pred = models::predict(m, test.images.data(), test.n);
  int64_t c = 0;
  for (int64_t i = 0; i < test.n; ++i) c += pred[static_cast<size_t>(i)] == test.labels[static_cast<size_t>(i)];
  return c;
}

std::string percent(int64_t correct, int64_t n) {
  char b[32];
  // Integer arithmetic, so the printed figure is exact (two decimals, rounded half up).
  int64_t bp = n ? (correct * 20000 / n + 1) / 2 : 0;
  std::snprintf(b, sizeof b, "%lld.%02lld", static_cast<long long>(bp / 100), static_cast<long long>(bp % 100));
  return b;
}

namespace {

// The number of NaN or infinite elements of a float tensor (0 for other dtypes), from the bits.
int64_t non_finite(const Tensor& t) {
  uint64_t exp;
  switch (t.dtype()) {
    case DType::Float16: exp = 0x7c00; break;
    case DType::BFloat16: exp = 0x7f80; break;
    case DType::Float32: exp = 0x7f800000; break;
    case DType::Float64: exp = 0x7ff0000000000000; break;
    default: return 0;
  }
  int64_t n = 0;
  for (uint64_t b : t.bits()) n += (b & exp) == exp;
  return n;
}

}  // namespace

void warn_non_finite(const nn::StateDict& state, const std::string& what) {
  // Weights with NaN or inf still evaluate (to a meaningless accuracy): say so, always.
  for (auto& [k, t] : state)
    if (int64_t n = non_finite(t))
      std::fprintf(stderr, "maroon: warning: %s: tensor '%s' has %lld NaN or infinite values of %lld\n", what.c_str(),
                   k.c_str(), static_cast<long long>(n), static_cast<long long>(t.numel()));
}

std::string record_path_for(const std::string& path) {
  const std::string ext = ".safetensors";
  if (path.size() > ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0)
    return path.substr(0, path.size() - ext.size()) + ".run.json";
  return path;
}

}  // namespace maroon::cli
