// `maroon`: train MNIST models and prove the result with digests that are the same everywhere.
#include <cstdio>
#include <cstring>
#include <string>

#include "cli/commands.h"
#include "maroon/error.h"

namespace {

const char* kUsage =
    "usage:\n"
    "  maroon train [mnist|fashion] [--model mlp|cnn] [--epochs N] [--batch B] [--seed S]\n"
    "               [--dataset mnist|fashion] [--lr LR] [--lr-decay F] [--steps K]\n"
    "               [--out FILE.safetensors] [--checkpoint-every K] [--log-every K] [--no-eval]\n"
    "               [--data DIR] [--threads T]\n"
    "      trains; writes the weights and FILE.run.json; prints the weights and loss-trace SHA-256\n"
    "  maroon eval WEIGHTS [--dataset mnist|fashion] [--data DIR] [--threads T]\n"
    "      prints the test accuracy of a weights file\n"
    "  maroon digest FILE...\n"
    "      prints the weights digest (SHA-256 of the tensors as safetensors, no metadata)\n"
    "  maroon verify RUN [--data DIR] [--threads T]\n"
    "      replays a run (RUN.run.json or its .safetensors) and prints \"identical\" or the first\n"
    "      step whose loss or weights differ (exit status 1)\n"
    "Data: --data DIR, else $MAROON_DATA_DIR/{mnist,fashion-mnist}, else the source tree's data/\n"
    "(bash tools/fetch_mnist.sh). MAROON_THREADS and --threads change the speed, never a digest.\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace maroon::cli;
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  std::string cmd = argv[1];
  try {
    if (cmd == "train")
      return cmd_train(parse_args(argc, argv, 2,
                                  {"model", "epochs", "batch", "seed", "dataset", "lr", "lr-decay", "steps", "out",
                                   "checkpoint-every", "log-every", "data", "threads"},
                                  {"no-eval"}));
    if (cmd == "eval") return cmd_eval(parse_args(argc, argv, 2, {"dataset", "data", "threads"}, {}));
    if (cmd == "digest") return cmd_digest(parse_args(argc, argv, 2, {}, {}));
    if (cmd == "verify") return cmd_verify(parse_args(argc, argv, 2, {"data", "threads"}, {}));
    std::fprintf(stderr, "maroon: unknown command '%s'\n%s", cmd.c_str(), kUsage);
    return 2;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "maroon %s: error: %s\n", cmd.c_str(), e.what());
    return 2;
  }
}
