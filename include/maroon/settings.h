// Maroon's settings: every MAROON_* environment variable, defined once in maroon/settings.def
// with its default and what it does (the README's settings table is generated from it). Each
// setting's value is what set_setting last gave it in this process, else the environment's,
// else its default. None of them changes a result bit.
#pragma once
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace maroon {

enum class SettingId {
#define SETTING(ID, ...) ID,
#include "maroon/settings.def"
#undef SETTING
};

struct SettingInfo {
  SettingId id;
  std::string_view name;           // the environment variable
  std::string_view default_value;  // as shown to users
  std::string_view values;
  std::string_view doc;
};

std::span<const SettingInfo> all_settings();
const SettingInfo& setting_info(SettingId id);

// The value set in this process or the environment's; nullopt when neither gives one (the
// default applies). Empty values count as unset.
std::optional<std::string> setting(SettingId id);
// By name, as text: the value in force. For MAROON_BACKEND, MAROON_THREADS and MAROON_SIMD the
// engine's current choice (what backend_name(), num_threads() and simd_target() say); for the
// others setting(id), or "" when unset. ShapeError for a name that is not a setting.
std::string get_setting(std::string_view name);
// Whether a setting that is a switch (MAROON_REPORT_SLOW_OPS, MAROON_PROFILE) is on: cached,
// lock-free, for the paths that ask per kernel.
bool setting_flag(SettingId id);
// A setting that is a level (MAROON_DEBUG) as an integer, 0 when unset: cached and lock-free
// like setting_flag.
int setting_level(SettingId id);
// Sets a setting for this process. MAROON_BACKEND, MAROON_THREADS and MAROON_SIMD apply at once
// (as set_backend, set_num_threads, set_simd_target would, with their errors); "" unsets the
// others. ShapeError for an unknown name.
void set_setting(std::string_view name, const std::string& value);

}  // namespace maroon
