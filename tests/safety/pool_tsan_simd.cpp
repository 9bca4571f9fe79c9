// maroon_pool_tsan_tests (tests/safety/CMakeLists.txt) links the thread pool and the settings
// without the CPU backend, whose Highway kernels the pool's tests never run. The settings module
// still names the SIMD target, so this binary answers that it has none.
#include <string>

#include "maroon/backend.h"
#include "maroon/error.h"

namespace maroon {
std::string simd_target() { return "none"; }
void set_simd_target(const std::string& name) {
  throw Error("[set_simd_target] maroon_pool_tsan_tests has no SIMD backend, asked for " + name);
}
}  // namespace maroon
