// The settings module (maroon/settings.h): the table from maroon/settings.def, values set in this
// process over the environment's.
#include "maroon/settings.h"

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <map>
#include <mutex>

#include "maroon/backend.h"
#include "maroon/error.h"

namespace maroon {

namespace {

constexpr SettingInfo kSettings[] = {
#define SETTING(ID, DEFAULT, VALUES, DOC) {SettingId::ID, #ID, DEFAULT, VALUES, DOC},
#include "maroon/settings.def"
#undef SETTING
};

struct Overrides {
  std::mutex m;
  std::map<SettingId, std::string> values;  // "" = unset in this process
};
Overrides& overrides() {
  static Overrides o;  // function-local: settings are read during static initialisation
  return o;
}

const SettingInfo& by_name(std::string_view name) {
  for (const SettingInfo& s : kSettings)
    if (s.name == name) return s;
  std::string names;
  for (const SettingInfo& s : kSettings) names += (names.empty() ? "" : ", ") + std::string(s.name);
  throw ShapeError("[settings] unknown setting '" + std::string(name) + "' (" + names + ")");
}

// A positive decimal count, or ShapeError naming the setting.
int64_t count_of(const SettingInfo& s, const std::string& v, int64_t max) {
  char* end = nullptr;
  errno = 0;
  long long n = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || errno || *end || n < 1 || n > max)
    throw ShapeError("[settings] " + std::string(s.name) + "='" + v + "' is not " + std::string(s.values));
  return n;
}

// Whether set_setting was ever called: until then setting() reads only the environment.
std::atomic<bool> g_any_override{false};

constexpr size_t kCount = std::size(kSettings);
// setting_flag's cache: -1 unknown, else 0/1; set_setting refreshes it.
struct FlagCache {
  std::array<std::atomic<int>, kCount> v;
  FlagCache() {
    for (auto& x : v) x.store(-1);
  }
};
std::array<std::atomic<int>, kCount>& flags() {
  static FlagCache f;
  return f.v;
}
std::array<std::atomic<int>, kCount>& levels() {  // setting_level's cache, -1 unknown
  static FlagCache f;
  return f.v;
}

// A level 0..9, or ShapeError naming the setting.
int level_of(const SettingInfo& s, const std::string& v) {
  if (v.size() != 1 || v[0] < '0' || v[0] > '9')
    throw ShapeError("[settings] " + std::string(s.name) + "='" + v + "' is not " + std::string(s.values));
  return v[0] - '0';
}

}  // namespace

std::span<const SettingInfo> all_settings() { return kSettings; }

bool setting_flag(SettingId id) {
  std::atomic<int>& f = flags()[static_cast<size_t>(id)];
  int v = f.load(std::memory_order_relaxed);
  if (v < 0) {
    v = setting(id).has_value();
    f.store(v, std::memory_order_relaxed);
  }
  return v;
}

int setting_level(SettingId id) {
  std::atomic<int>& l = levels()[static_cast<size_t>(id)];
  int v = l.load(std::memory_order_relaxed);
  if (v < 0) {
    std::optional<std::string> s = setting(id);
    // A bad value in the environment is read as 0 (no setting may abort a program); set_setting
    // refuses one with an error.
    v = s && s->size() == 1 && (*s)[0] >= '0' && (*s)[0] <= '9' ? (*s)[0] - '0' : 0;
    l.store(v, std::memory_order_relaxed);
  }
  return v;
}

const SettingInfo& setting_info(SettingId id) { return kSettings[static_cast<size_t>(id)]; }

std::optional<std::string> setting(SettingId id) {
  // Read on every buffer allocation (the allocation cap): without an override in this process,
  // no lock, no map and no string are needed before the environment's value.
  if (g_any_override.load(std::memory_order_acquire)) {
    Overrides& o = overrides();
    std::lock_guard<std::mutex> lock(o.m);
    auto it = o.values.find(id);
    if (it != o.values.end()) return it->second.empty() ? std::nullopt : std::optional(it->second);
  }
  const char* e = std::getenv(setting_info(id).name.data());  // #ID in the table: NUL-terminated
  if (!e || !*e) return std::nullopt;
  return std::string(e);
}

std::string get_setting(std::string_view name) {
  const SettingInfo& s = by_name(name);
  switch (s.id) {
    case SettingId::MAROON_BACKEND: return backend_name();
    case SettingId::MAROON_THREADS: return std::to_string(num_threads());
    case SettingId::MAROON_SIMD: return simd_target();
    default: return setting(s.id).value_or("");
  }
}

void set_setting(std::string_view name, const std::string& value) {
  const SettingInfo& s = by_name(name);
  switch (s.id) {
    case SettingId::MAROON_BACKEND: set_backend(value); return;
    case SettingId::MAROON_THREADS: set_num_threads(static_cast<int>(count_of(s, value, 1024))); return;
    case SettingId::MAROON_SIMD: set_simd_target(value); return;
    case SettingId::MAROON_MAX_FILE_BYTES: case SettingId::MAROON_MAX_ALLOC_BYTES:
    case SettingId::MAROON_BENCH_STEPS:
      if (!value.empty()) count_of(s, value, INT64_MAX);
      break;
    case SettingId::MAROON_DEBUG:
      if (!value.empty()) level_of(s, value);
      break;
    default: break;
  }
  {
    Overrides& o = overrides();
    std::lock_guard<std::mutex> lock(o.m);
    o.values[s.id] = value;
    g_any_override.store(true, std::memory_order_release);
  }
  flags()[static_cast<size_t>(s.id)].store(-1);
  levels()[static_cast<size_t>(s.id)].store(-1);
}

}  // namespace maroon
