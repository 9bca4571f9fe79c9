// Strict option parsing (see args.h).
#include "cli/args.h"

#include <cerrno>
#include <cstdlib>

#include "maroon/error.h"

namespace maroon::cli {

std::string Args::get(const std::string& name, const std::string& fallback) const {
  auto it = options.find(name);
  return it == options.end() ? fallback : it->second;
}

int64_t Args::get_int(const std::string& name, int64_t fallback, int64_t min) const {
  auto it = options.find(name);
  if (it == options.end()) return fallback;
  const std::string& s = it->second;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end || errno == ERANGE || v < min)
    throw Error("--" + name + " needs an integer of at least " + std::to_string(min) + ", got '" + s + "'");
  return v;
}

double Args::get_double(const std::string& name, double fallback) const {
  auto it = options.find(name);
  if (it == options.end()) return fallback;
  const std::string& s = it->second;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end || !(v > 0) || v > 1e9) throw Error("--" + name + " needs a positive number, got '" + s + "'");
  return v;
}

Args parse_args(int argc, char** argv, int first, const std::set<std::string>& valued,
                const std::set<std::string>& flags) {
  Args a;
  for (int i = first; i < argc; ++i) {
    std::string s = argv[i];
    if (s.rfind("--", 0) != 0 || s.size() == 2) {
      a.positional.push_back(s);
      continue;
    }
    std::string name = s.substr(2), value;
    bool inline_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1), name = name.substr(0, eq), inline_value = true;
    }
    if (valued.count(name)) {
      if (!inline_value) {
        if (i + 1 >= argc) throw Error("--" + name + " needs a value");
        value = argv[++i];
      }
    } else if (flags.count(name)) {
      if (inline_value) throw Error("--" + name + " takes no value");
    } else {
      throw Error("unknown option --" + name);
    }
    a.options[name] = value;
  }
  return a;
}

}  // namespace maroon::cli
