// `maroon`: train MNIST models and prove the result with digests that are the same everywhere.
// The subcommands register themselves (cli/command.h); this file only parses and dispatches.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "cli/command.h"
#include "maroon/backend.h"
#include "maroon/version.h"

namespace {

using namespace maroon::cli;

const char* kFooter =
    "Data: --data DIR, else $MAROON_DATA_DIR/{mnist,fashion-mnist}, else the source tree's data/\n"
    "(bash tools/fetch_mnist.sh). MAROON_THREADS and --threads change the speed, never a digest.\n"
    "Results go to stdout (JSON with --json), progress and logs to stderr (none with --quiet).\n"
    "Exit status: 0 success, 1 a verified difference, 2 bad usage or input.";

std::string version_text() {
  std::string simd;
  for (const std::string& t : maroon::available_simd_targets()) simd += (simd.empty() ? "" : " ") + t;
#ifdef __clang__
  const char* compiler = "clang ";
#else
  const char* compiler = "GCC ";
#endif
  return std::string("maroon ") + MAROON_VERSION + "\ncompiler: " + compiler + __VERSION__ + "\nSIMD targets: " + simd;
}

// The long names of `app`'s options and, with `commands`, its subcommands: the candidates for a
// suggestion.
std::vector<std::string> names_in(const CLI::App& app, bool commands) {
  std::vector<std::string> out;
  for (const CLI::Option* o : app.get_options())
    for (const std::string& n : o->get_lnames()) out.push_back("--" + n);
  if (commands)
    for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; })) out.push_back(s->get_name());
  return out;
}

// "unknown option --epoch (did you mean --epochs?)" for the arguments nobody took: the unknown
// options if there are any (what follows one is likely its value), else the stray arguments.
std::string describe_extras(const CLI::App& app, const CLI::App* sub) {
  std::vector<std::string> candidates = names_in(app, sub == nullptr);
  if (sub) {
    std::vector<std::string> own = names_in(*sub, false);
    candidates.insert(candidates.end(), own.begin(), own.end());
  }
  std::vector<std::string> options, others;
  for (const std::string& arg : app.remaining(true))
    (arg.size() > 1 && arg[0] == '-' ? options : others).push_back(arg.substr(0, arg.find('=')));
  std::string msg;
  // At the top level the first stray word is the mistyped command; the rest are its arguments.
  if (options.empty() && !sub && others.size() > 1) others.resize(1);
  for (const std::string& arg : options.empty() ? others : options) {
    std::string what = !options.empty() ? "unknown option " + arg
                       : sub            ? "unexpected argument '" + arg + "'"
                                        : "unknown command '" + arg + "'";
    if (std::string near = closest(arg, candidates); !near.empty()) what += " (did you mean " + near + "?)";
    msg += (msg.empty() ? "" : "; ") + what;
  }
  return msg;
}

// `maroon help [COMMAND]` is `maroon [COMMAND] --help`, as with git.
std::vector<std::string> arguments(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "help") {
    args.erase(args.begin());
    args.push_back("--help");
  }
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  // Over a file-size limit (ulimit -f) a write then fails with EFBIG, reported and cleaned up by
  // io::AtomicFile, instead of SIGXFSZ killing the process and leaving its temporary file.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app("maroon: deterministic MNIST training whose digests are the same on every machine", "maroon");
  Context ctx;
  app.set_version_flag("--version", version_text(), "print the version and build and exit");
  app.add_flag("--json", ctx.json, "print results as one JSON document on stdout");
  app.add_flag("-q,--quiet", ctx.quiet, "no progress or log lines on stderr");
  app.require_subcommand(1);
  app.fallthrough();  // the options above may follow the subcommand: `maroon train --json`
  app.footer(kFooter);
  std::map<const CLI::App*, Runner> runners;
  for (const CommandSpec& c : registered_commands()) {
    CLI::App* sub = app.add_subcommand(c.name, c.summary);
    runners[sub] = c.declare(*sub);
  }

  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`") == std::string::npos;
    ctx.command_line += (i ? " " : "") + (plain ? a : "'" + a + "'");
  }
  std::vector<std::string> args = arguments(argc, argv);
  if (args.empty()) {  // a bare `maroon` is a usage error: the help, on stderr
    std::fputs(app.help().c_str(), stderr);
    return kUsage;
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  try {
    app.parse(args);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::vector<CLI::App*> chosen = app.get_subcommands();
    const CLI::App* sub = chosen.empty() ? nullptr : chosen[0];
    std::string who = "maroon" + (sub ? " " + sub->get_name() : std::string());
    // An argument nobody took is the likeliest cause of whatever failed after it (`--epoch 2`
    // leaves 2 to the DATASET positional), so it is reported first.
    std::string what = app.remaining(true).empty() ? e.what() : describe_extras(app, sub);
    std::fprintf(stderr, "%s: error: %s\nRun '%s --help' for more information.\n", who.c_str(), what.c_str(),
                 who.c_str());
    return kUsage;
  }
  const CLI::App* sub = app.get_subcommands().at(0);
  try {
    return runners.at(sub)(ctx);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "maroon %s: error: %s\n", sub->get_name().c_str(), e.what());
    return kUsage;
  }
}
