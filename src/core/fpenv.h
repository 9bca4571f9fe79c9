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

// f() under the library's environment. Graph-building code that computes a double from runtime
// values (an initialiser's bound, a step size) must not see the caller's rounding mode or
// flush-to-zero: the value becomes a constant in the graph.
template <class F>
auto in_ieee_env(F&& f) {
  FpEnvGuard guard;
  return f();
}

}  // namespace maroon
