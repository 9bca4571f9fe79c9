#include "fpstate.h"

#include <cfenv>
#include <cstdio>
#include <stdexcept>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace maroon::determinism {

std::string CallerFpState::describe() const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "control=0x%llx round=%d", static_cast<unsigned long long>(control), round);
  return buf;
}

CallerFpState read_caller_fpstate() {
  CallerFpState s;
  s.round = std::fegetround();
#if defined(__x86_64__) || defined(__i386__)
  uint16_t cw = 0;
  __asm__ volatile("fnstcw %0" : "=m"(cw));
  s.control = (uint64_t{cw} << 32) | (_mm_getcsr() & 0xFFC0u);
#elif defined(__aarch64__)
  uint64_t fpcr = 0;
  __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
  s.control = fpcr;
#endif
  return s;
}

CallerFpState set_caller_fpstate(const std::string& name) {
  if (name == "default") {
  } else if (name == "round-up") {
    if (std::fesetround(FE_UPWARD) != 0) throw std::runtime_error("fesetround(FE_UPWARD) failed");
  } else if (name == "ftz-daz") {
#if defined(__x86_64__) || defined(__i386__)
    _mm_setcsr(_mm_getcsr() | 0x8040u);  // FTZ (bit 15) and DAZ (bit 6)
#elif defined(__aarch64__)
    uint64_t fpcr = 0;
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    fpcr |= (uint64_t{1} << 24) | (uint64_t{1} << 19);  // FZ and FZ16
    __asm__ volatile("msr fpcr, %0" : : "r"(fpcr));
#else
    throw std::runtime_error("fpstate ftz-daz: this architecture has no flush-to-zero control");
#endif
  } else {
    throw std::runtime_error("unknown --fpstate '" + name + "' (default, ftz-daz, round-up)");
  }
  return read_caller_fpstate();
}

}  // namespace maroon::determinism
