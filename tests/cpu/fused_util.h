// Helpers of the fused-matmul tests: run a graph on every backend configuration and compare bits.
#pragma once
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "backend_settings.h"
#include "maroon/backend.h"
#include "util.h"

namespace maroon::test {

// The float32 or float64 nearest to v (test data: any value, rounded once by the compiler's
// conversion in the default mode).
inline uint64_t nearest_bits(DType d, double v) {
  uint64_t b = 0;
  if (d == DType::Float32) {
    float f = static_cast<float>(v);
    std::memcpy(&b, &f, 4);
  } else {
    std::memcpy(&b, &v, 8);
  }
  return b;
}

// Builds the graph anew on the reference executor and on the CPU backend for every SIMD target
// and 1, 2, 3 threads; each result's bits must equal `want`. Returns the number of runs compared.
inline int compare_everywhere(const std::string& what, const std::vector<uint64_t>& want,
                              const std::function<Tensor()>& build) {
  BackendSettings keep;
  int runs = 0;
  set_backend(Backend::Ref);
  std::vector<uint64_t> got = build().bits();
  ++runs;
  EXPECT_EQ(got, want) << what << " on the reference executor";
  if (got != want) return runs;
  set_backend(Backend::Cpu);
  for (const std::string& target : available_simd_targets()) {
    set_simd_target(target);
    for (int threads : {1, 2, 3}) {
      set_num_threads(threads);
      got = build().bits();
      ++runs;
      if (got != want) {
        size_t i = 0;
        while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
        ADD_FAILURE() << what << " on " << target << " with " << threads << " threads: element " << i << " of "
                      << want.size() << " differs (" << (i < got.size() ? hex(got[i]) : "-") << " vs "
                      << (i < want.size() ? hex(want[i]) : "-") << ")";
        return runs;
      }
    }
  }
  return runs;
}

// The same with the reference executor's result as `want`.
inline int compare_with_ref(const std::string& what, const std::function<Tensor()>& build) {
  std::vector<uint64_t> want;
  {
    BackendSettings keep;
    set_backend(Backend::Ref);
    want = build().bits();
  }
  return compare_everywhere(what, want, build);
}

}  // namespace maroon::test
