// Whether Run's hasher evicts what it hashed (src/verify/evict.cpp, eviction_helps): not where
// every core the process may use shares one last-level cache. The rule reads sysfs; here it reads
// fake trees of the same layout.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "job.h"
#include "verify/evict.h"

using namespace maroon::verify;
namespace fs = std::filesystem;

namespace {

// cpu<c>/cache/index<i>/{level,shared_cpu_list} for one CPU: caches[i] = {level, list}.
void cpu_caches(const std::string& root, int c, const std::vector<std::pair<std::string, std::string>>& caches) {
  for (size_t i = 0; i < caches.size(); ++i) {
    const fs::path d = fs::path(root) / ("cpu" + std::to_string(c)) / "cache" / ("index" + std::to_string(i));
    fs::create_directories(d);
    std::ofstream(d / "level") << caches[i].first << "\n";
    std::ofstream(d / "shared_cpu_list") << caches[i].second << "\n";
  }
}

}  // namespace

TEST(VerifyEvictRule, SharedLastLevelCacheMeansNoEviction) {
  const std::string root = verifytest::scratch("evict_rule_shared");
  // The Intel Xeon this was measured on: private L1 and L2, one L3 for both cores.
  cpu_caches(root, 0, {{"1", "0"}, {"1", "0"}, {"2", "0"}, {"3", "0-1"}});
  EXPECT_TRUE(share_last_level_cache(root, {0, 1}));
  EXPECT_FALSE(share_last_level_cache(root, {0, 1, 2}));  // a third core outside it
}

TEST(VerifyEvictRule, PrivateCachesMeanEviction) {
  const std::string root = verifytest::scratch("evict_rule_private");
  // The 2-vCPU EPYC: no cache level shared by the two vCPUs.
  cpu_caches(root, 0, {{"1", "0"}, {"1", "0"}, {"2", "0"}, {"3", "0"}});
  EXPECT_FALSE(share_last_level_cache(root, {0, 1}));
  // The highest level decides, whatever the order of the index folders: here L2 is shared, L3 not.
  const std::string mixed = verifytest::scratch("evict_rule_mixed");
  cpu_caches(mixed, 0, {{"3", "0"}, {"2", "0-1"}, {"1", "0"}});
  EXPECT_FALSE(share_last_level_cache(mixed, {0, 1}));
}

TEST(VerifyEvictRule, ListsWithRangesAndCommas) {
  const std::string root = verifytest::scratch("evict_rule_lists");
  cpu_caches(root, 4, {{"1", "4"}, {"3", "0,2-5,9"}});
  EXPECT_TRUE(share_last_level_cache(root, {4, 0, 3, 9}));
  EXPECT_FALSE(share_last_level_cache(root, {4, 1}));
  EXPECT_FALSE(share_last_level_cache(root, {4, 6}));
}

TEST(VerifyEvictRule, UnreadableOrMalformedKeepsEviction) {
  const std::string root = verifytest::scratch("evict_rule_bad");
  EXPECT_FALSE(share_last_level_cache(root, {0, 1}));  // no cpu0 at all
  cpu_caches(root, 0, {{"1", "0"}, {"3", "0-x"}});
  EXPECT_FALSE(share_last_level_cache(root, {0, 1}));
  const std::string suffix = verifytest::scratch("evict_rule_suffix");
  cpu_caches(suffix, 0, {{"3", "0-1x"}});
  EXPECT_FALSE(share_last_level_cache(suffix, {0, 1}));
  const std::string empty = verifytest::scratch("evict_rule_empty");
  cpu_caches(empty, 0, {{"3", ""}});
  EXPECT_FALSE(share_last_level_cache(empty, {0, 1}));
  const std::string level = verifytest::scratch("evict_rule_level");
  cpu_caches(level, 0, {{"L3", "0-1"}});
  EXPECT_FALSE(share_last_level_cache(level, {0, 1}));
}

TEST(VerifyEvictRule, OneCoreNeedsNoEviction) {
  EXPECT_TRUE(share_last_level_cache(verifytest::scratch("evict_rule_one"), {0}));
}
