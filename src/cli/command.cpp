// The subcommand registry, the output conventions and the validators (see command.h).
#include "cli/command.h"

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace maroon::cli {

namespace {
// A function-local static: registrations run during static initialisation, in any order.
std::vector<CommandSpec>& registry() {
  static std::vector<CommandSpec> commands;
  return commands;
}
}  // namespace

Registration::Registration(std::string name, std::string summary, Declare declare) {
  registry().push_back({std::move(name), std::move(summary), std::move(declare)});
}

std::vector<CommandSpec> registered_commands() {
  std::vector<CommandSpec> all = registry();
  std::sort(all.begin(), all.end(), [](const CommandSpec& a, const CommandSpec& b) { return a.name < b.name; });
  return all;
}

void Context::log(const char* fmt, ...) const {
  if (quiet) return;
  std::va_list args;
  va_start(args, fmt);
  std::vfprintf(stderr, fmt, args);
  va_end(args);
  std::fputc('\n', stderr);
}

void Context::result(const nlohmann::ordered_json& j, const std::string& text) const {
  std::string out = json ? j.dump(2) + "\n" : text;
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}

CLI::Validator integer_at_least(int64_t min, int64_t max) {
  std::string range = max == INT64_MAX ? "of at least " + std::to_string(min)
                                       : "from " + std::to_string(min) + " to " + std::to_string(max);
  return CLI::Validator(
      [min, max, range](std::string& s) -> std::string {
        char* end = nullptr;
        errno = 0;
        long long v = std::strtoll(s.c_str(), &end, 10);
        if (s.empty() || *end || errno == ERANGE || v < min || v > max)
          return "needs an integer " + range + ", got '" + s + "'";
        return "";
      },
      "");
}

CLI::Validator positive_number(double max) {
  return CLI::Validator(
      [max](std::string& s) -> std::string {
        char* end = nullptr;
        double v = std::strtod(s.c_str(), &end);
        if (s.empty() || *end || !(v > 0) || v > max) return "needs a positive number, got '" + s + "'";
        return "";
      },
      "");
}

std::string closest(const std::string& typed, const std::vector<std::string>& candidates) {
  // Edit distance with adjacent transpositions ("trian" is one edit from "train"); a suggestion
  // must be within a third of the typed length (at least 1).
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i)
      for (size_t j = 1; j <= b.size(); ++j) {
        d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    return d[a.size()][b.size()];
  };
  std::string best;
  size_t best_d = std::max<size_t>(1, typed.size() / 3) + 1;
  for (const std::string& c : candidates)
    if (size_t d = distance(typed, c); d < best_d) best = c, best_d = d;
  return best;
}

}  // namespace maroon::cli
