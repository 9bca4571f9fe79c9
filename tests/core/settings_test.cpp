// The settings module: one table (maroon/settings.def), values set in the process over the
// environment's, and the engine's settings applied when set.
#include <gtest/gtest.h>

#include <set>

#include "maroon/backend.h"
#include "maroon/error.h"
#include "maroon/settings.h"

namespace maroon {
namespace {

TEST(Settings, EveryEntryHasANameADefaultAndADocString) {
  std::set<std::string_view> names;
  for (const SettingInfo& s : all_settings()) {
    EXPECT_TRUE(s.name.starts_with("MAROON_")) << s.name;
    EXPECT_FALSE(s.default_value.empty()) << s.name;
    EXPECT_FALSE(s.values.empty()) << s.name;
    EXPECT_FALSE(s.doc.empty()) << s.name;
    EXPECT_TRUE(names.insert(s.name).second) << s.name << " is defined twice";
    EXPECT_EQ(&setting_info(s.id), &s);
  }
  EXPECT_GE(names.size(), 9u);
}

TEST(Settings, SetOverridesTheEnvironmentAndEmptyUnsets) {
  set_setting("MAROON_MAX_FILE_BYTES", "4096");
  EXPECT_EQ(setting(SettingId::MAROON_MAX_FILE_BYTES), std::optional<std::string>("4096"));
  EXPECT_EQ(get_setting("MAROON_MAX_FILE_BYTES"), "4096");
  set_setting("MAROON_MAX_FILE_BYTES", "");
  EXPECT_EQ(setting(SettingId::MAROON_MAX_FILE_BYTES), std::nullopt);
  EXPECT_THROW(set_setting("MAROON_MAX_FILE_BYTES", "-3"), ShapeError);
  EXPECT_THROW(set_setting("MAROON_NO_SUCH", "1"), ShapeError);
  EXPECT_THROW(get_setting("MAROON_NO_SUCH"), ShapeError);
}

TEST(Settings, EngineSettingsApplyAtOnce) {
  const int threads = num_threads();
  set_setting("MAROON_THREADS", "3");
  EXPECT_EQ(num_threads(), 3);
  EXPECT_EQ(get_setting("MAROON_THREADS"), "3");
  EXPECT_THROW(set_setting("MAROON_THREADS", "0"), ShapeError);
  EXPECT_THROW(set_setting("MAROON_THREADS", "two"), ShapeError);
  set_num_threads(threads);
  const std::string b = backend_name();
  set_setting("MAROON_BACKEND", "ref");
  EXPECT_EQ(backend(), Backend::Ref);
  EXPECT_THROW(set_setting("MAROON_BACKEND", "gpu"), ShapeError);
  set_backend(b);
}

TEST(Settings, FlagsFollowSet) {
  set_setting("MAROON_PROFILE", "1");
  EXPECT_TRUE(setting_flag(SettingId::MAROON_PROFILE));
  set_setting("MAROON_PROFILE", "");
  EXPECT_FALSE(setting_flag(SettingId::MAROON_PROFILE));
}

TEST(Settings, LevelsFollowSetAndRefuseWhatIsNotALevel) {
  set_setting("MAROON_DEBUG", "3");
  EXPECT_EQ(setting_level(SettingId::MAROON_DEBUG), 3);
  set_setting("MAROON_DEBUG", "");
  EXPECT_EQ(setting_level(SettingId::MAROON_DEBUG), 0);
  EXPECT_THROW(set_setting("MAROON_DEBUG", "10"), ShapeError);
  EXPECT_THROW(set_setting("MAROON_DEBUG", "-1"), ShapeError);
  EXPECT_THROW(set_setting("MAROON_DEBUG", "two"), ShapeError);
  EXPECT_EQ(setting_level(SettingId::MAROON_DEBUG), 0);
}

}  // namespace
}  // namespace maroon
