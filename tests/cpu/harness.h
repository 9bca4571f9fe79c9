// The CPU backend harness: a graph built anew on the reference executor and on the CPU backend
// for every SIMD target this machine has and 1, 2 and 3 threads, results compared by memcmp.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backend_settings.h"
#include "core/buffer_cache.h"
#include "maroon/backend.h"
#include "maroon/settings.h"
#include "util.h"

namespace maroon::test {

inline int g_runs = 0;  // backend runs compared, for the summaries the tests print

// n values in [-1, 1] on a grid of 1/1024 (exact in every float format), random signs: sums of
// their products stay interesting. Drawn from g in order.
inline std::vector<uint64_t> near_one(Gen& g, size_t n, sf::Format f = sf::kF32) {
  std::vector<uint64_t> v(n);
  for (auto& x : v) x = encode(f, (g.next() % 2049) / 1024.0 - 1);
  return v;
}

// A float32 or float64 tensor of values near 1 (near_one); with `specials`, one in eight a NaN, an
// infinity, a signed zero or a subnormal: the products' edge cases in realistic sums.
inline Tensor near_one_tensor(DType d, const Shape& s, uint64_t seed, bool specials = false) {
  Gen g(seed);
  const sf::Format f = d == DType::Float32 ? sf::kF32 : sf::kF64;
  std::vector<uint64_t> v = near_one(g, static_cast<size_t>(numel(s)), f);
  if (specials)
    for (auto& x : v) {
      switch (g.next() % 16) {
        case 0: x = sf::canonical_nan(f); break;
        case 1: x = f.exp_mask() << f.mbits; break;
        case 2: x = f.sign_bit() | (f.exp_mask() << f.mbits); break;
        case 3: x = f.sign_bit(); break;
        case 4: x = (g.next() & 1 ? f.sign_bit() : 0) | (1 + g.next() % f.man_mask()); break;
        default: break;
      }
    }
  return tensor_of_bits(v, s, d);
}

// A tensor of shape s whose elements are random bits (NaN, infinities, signed zeros, subnormals; integer
// edges), drawn from Gen(seed).
inline Tensor random_bits_tensor(const Shape& s, DType d, uint64_t seed) {
  Gen g(seed);
  std::vector<uint64_t> v(static_cast<size_t>(numel(s)));
  for (auto& x : v) x = g.bits(d);
  return tensor_of_bits(v, s, d);
}

// The SIMD targets to compare: all this machine has, or with MAROON_TEST_SIMD_TARGETS=ends only
// the weakest and the best (tools/ci_safety.sh, where ASan makes the full sweep too slow).
inline std::vector<std::string> targets_to_test() {
  std::vector<std::string> all = available_simd_targets();
  if (setting(SettingId::MAROON_TEST_SIMD_TARGETS) == std::optional<std::string>("ends") && all.size() > 2)
    return {all.front(), all.back()};
  return all;
}

// Builds the graph anew for each backend (realized nodes keep their results) and compares. With
// `ran`, called after each CPU backend run with its target and thread count (a path check).
// Every buffer made while it is checked starts as a pattern (set_buffer_poison), so an output
// element a kernel never writes cannot pass by holding an earlier run's right bytes.
inline void check(const std::string& what, const std::function<Tensor()>& build,
                  const std::function<void(const std::string&, int)>& ran = nullptr) {
  BackendSettings keep;
  struct Poison {
    Poison() { set_buffer_poison(true); }
    ~Poison() { set_buffer_poison(false); }
  } poison;
  set_backend(Backend::Ref);
  const std::vector<uint8_t> want = build().bytes();
  set_backend(Backend::Cpu);
  for (const std::string& target : targets_to_test()) {
    set_simd_target(target);
    for (int threads : {1, 2, 3}) {
      set_num_threads(threads);
      std::vector<uint8_t> got = build().bytes();
      ++g_runs;
      if (ran) ran(target, threads);
      // Compared as vectors: memcmp of an empty result's null data() is undefined (UBSan).
      if (got != want) {
        size_t i = 0;
        while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
        ADD_FAILURE() << what << " on " << target << " with " << threads << " threads: first byte "
                      << i << " of " << want.size() << " differs";
        return;
      }
    }
  }
}

// check(), and that every CPU backend run took a given path: `runs` reads that path's counter
// (a test that only compared bits would pass as well if a change sent the cases elsewhere).
inline void check_path(const std::string& what, const std::function<Tensor()>& build,
                       const std::function<int64_t()>& runs, const char* path) {
  const int64_t before = runs();
  const int compared = g_runs;
  check(what, build);
  EXPECT_GE(runs() - before, g_runs - compared) << what << ": a run did not " << path;
}

// check(), and that the matmul's epilogue ran (`epilogue_runs`, cpu::matmul_epilogue_runs) but
// never took a given path of it (`runs`): cases a specialised epilogue must leave to the plain one.
inline void check_epilogue_without(const std::string& what, const std::function<Tensor()>& build,
                                   const std::function<int64_t()>& epilogue_runs,
                                   const std::function<int64_t()>& runs, const char* path) {
  const int64_t epi = epilogue_runs(), before = runs();
  check(what, build);
  EXPECT_GT(epilogue_runs(), epi) << what << ": no epilogue ran";
  EXPECT_EQ(runs(), before) << what << ": " << path;
}

// check(), and that each run on one of `targets` (a path only they have, such as x86's register
// transposes on "avx2" and "avx512") took a given path: `runs` reads its counter, each run
// checked alone. Returns how many runs were so checked (0 on a machine with none of them).
inline int check_path_on(const std::string& what, const std::function<Tensor()>& build,
                         const std::function<int64_t()>& runs, const char* path,
                         const std::vector<std::string>& targets) {
  int checked = 0;
  int64_t before = runs();
  check(what, build, [&](const std::string& target, int threads) {
    const int64_t now = runs();
    if (std::find(targets.begin(), targets.end(), target) != targets.end()) {
      ++checked;
      EXPECT_GT(now, before) << what << " on " << target << " with " << threads << " threads: did not " << path;
    }
    before = now;
  });
  return checked;
}

}  // namespace maroon::test
