// Command-line parsing for `maroon`: positional arguments and --name VALUE / --name=VALUE
// options, each checked against the command's list so a typo is an error, not a default.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace maroon::cli {

struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;  // name without dashes -> value ("" for flags)

  bool has(const std::string& name) const { return options.count(name) > 0; }
  std::string get(const std::string& name, const std::string& fallback) const;
  int64_t get_int(const std::string& name, int64_t fallback, int64_t min) const;
  double get_double(const std::string& name, double fallback) const;
};

// `valued`: options that take a value; `flags`: options that do not. Throws maroon::Error.
Args parse_args(int argc, char** argv, int first, const std::set<std::string>& valued,
                const std::set<std::string>& flags);

}  // namespace maroon::cli
