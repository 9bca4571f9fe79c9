// How a `maroon` subcommand plugs in. The parsing, --help, --version and error reporting are
// CLI11's (Debian's libcli11-dev); this header adds the registry, the shared output conventions
// and the validators whose messages name the option and the value.
//
// A subcommand is one file in src/cli (the build globs *.cpp) that registers itself:
//
//   namespace maroon::cli {
//   namespace {
//   Runner declare(CLI::App& app) {
//     auto file = std::make_shared<std::string>();
//     app.add_option("FILE", *file, "the file to read")->required();
//     return [file](const Context& ctx) {
//       ctx.log("reading %s", file->c_str());          // stderr, silenced by --quiet
//       ctx.result({{"file", *file}}, *file + "\n");    // stdout: JSON with --json, else text
//       return kOk;
//     };
//   }
//   const Registration reg("name", "one line for `maroon --help`", declare);
//   }  // namespace
//   }  // namespace maroon::cli
//
// Exit status: kOk (0), kDiffers (1: a verified difference), kUsage (2: bad usage or input;
// main reports every exception this way, with its message on stderr).
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace maroon::cli {

constexpr int kOk = 0, kDiffers = 1, kUsage = 2;

// The options every subcommand shares (declared once, on the top-level command).
struct Context {
  bool json = false;   // --json: results as one JSON document on stdout
  bool quiet = false;  // --quiet: no progress or log lines on stderr
  std::string command_line;  // the arguments as given (run records keep it as provenance)

  // A log line on stderr (printf format, newline added), unless --quiet.
  void log(const char* fmt, ...) const __attribute__((format(printf, 2, 3)));
  // The command's result on stdout: `j` (pretty-printed) with --json, else `text` as written.
  void result(const nlohmann::ordered_json& j, const std::string& text) const;
};

using Runner = std::function<int(const Context&)>;
// Declares a subcommand's options and positionals on `app`; returns what runs it once parsed.
using Declare = std::function<Runner(CLI::App& app)>;

struct Registration {
  Registration(std::string name, std::string summary, Declare declare);
};

struct CommandSpec {
  std::string name, summary;
  Declare declare;
};
// Every registered subcommand, sorted by name.
std::vector<CommandSpec> registered_commands();

// Validators whose failure reads "--epochs: needs an integer of at least 1, got '0'".
CLI::Validator integer_at_least(int64_t min, int64_t max = INT64_MAX);
CLI::Validator positive_number(double max);

// The closest of `candidates` to `typed` within a small edit distance ("" if none): the
// "did you mean" of an unknown option or subcommand (CLI11 2.1 has no suggestions of its own).
std::string closest(const std::string& typed, const std::vector<std::string>& candidates);

}  // namespace maroon::cli
