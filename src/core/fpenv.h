// The library sets the floating-point environment it needs and restores the caller's: IEEE
// round-to-nearest, no flush-to-zero or denormals-are-zero, whatever the caller had set.
#pragma once
#include <cfenv>

namespace maroon {

class FpEnvGuard {
 public:
  FpEnvGuard();
  ~FpEnvGuard();
  FpEnvGuard(const FpEnvGuard&) = delete;
  FpEnvGuard& operator=(const FpEnvGuard&) = delete;

 private:
  std::fenv_t saved_;
};

}  // namespace maroon
