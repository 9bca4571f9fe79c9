// The caller's floating-point control state, set before Maroon runs and compared afterwards.
#pragma once
#include <cstdint>
#include <string>

namespace maroon::determinism {

// Control bits only (never the sticky exception flags, which any float operation may raise):
// x86 MXCSR bits 6-15 and the x87 control word; AArch64 FPCR; elsewhere the rounding mode.
struct CallerFpState {
  uint64_t control = 0;
  int round = 0;
  bool operator==(const CallerFpState& o) const { return control == o.control && round == o.round; }
  std::string describe() const;
};

CallerFpState read_caller_fpstate();
// "default" changes nothing; "ftz-daz" sets flush-to-zero and denormals-are-zero (AArch64:
// FPCR.FZ and FZ16); "round-up" sets the rounding direction toward +inf. Throws
// std::runtime_error for a state this architecture lacks.
CallerFpState set_caller_fpstate(const std::string& name);

}  // namespace maroon::determinism
