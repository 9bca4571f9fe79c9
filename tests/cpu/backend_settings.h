// Restores the backend settings (backend, thread count, SIMD target) a CPU test changed.
#pragma once
#include <string>

#include "maroon/backend.h"

namespace maroon::test {

struct BackendSettings {
  Backend b = backend();
  int t = num_threads();
  std::string s = simd_target();
  ~BackendSettings() {
    set_backend(b);
    set_num_threads(t);
    set_simd_target(s);
  }
};

}  // namespace maroon::test
