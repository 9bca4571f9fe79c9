// The library sets the floating-point environment it needs and restores the caller's: IEEE
// round-to-nearest, no flush-to-zero or denormals-are-zero, whatever the caller had set.
#pragma once
#include <cfenv>
#include <cstdint>

namespace maroon {

class FpEnvGuard {
 public:
  FpEnvGuard();
  ~FpEnvGuard();
  FpEnvGuard(const FpEnvGuard&) = delete;
  FpEnvGuard& operator=(const FpEnvGuard&) = delete;

 private:
  // x86-64: the caller's control registers already held the library's settings (the usual
  // case), so only the status flags the library may raise are given back on exit (`csr_`,
  // `x87_status_`); otherwise the whole environment was saved and replaced (`saved_`).
  bool full_ = true;
  std::fenv_t saved_;
#if defined(__x86_64__)
  uint32_t csr_ = 0;
  uint16_t x87_status_ = 0;
#endif
};

// f() under the library's environment. Graph-building code that computes a double from runtime
// values (an initialiser's bound, a step size) must not see the caller's rounding mode or
// flush-to-zero: the value becomes a constant in the graph.
template <class F>
auto in_ieee_env(F&& f) {
  FpEnvGuard guard;
  return f();
}

}  // namespace maroon
