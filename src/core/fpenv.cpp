#include "core/fpenv.h"

namespace maroon {

#if defined(__x86_64__) && defined(__GLIBC__)
namespace {

// FE_DFL_ENV's control settings: MXCSR 0x1F80 (nearest, exceptions masked, FTZ and DAZ off) and
// the x87 control word 0x037F. The low six MXCSR bits are exception flags, not settings.
constexpr uint32_t kCsrFlags = 0x3F;
constexpr uint32_t kDefaultCsr = 0x1F80;
constexpr uint16_t kDefaultX87Control = 0x037F;

uint32_t read_csr() {
  uint32_t c;
  asm volatile("stmxcsr %0" : "=m"(c));
  return c;
}
void write_csr(uint32_t c) { asm volatile("ldmxcsr %0" : : "m"(c)); }
uint16_t x87_control() {
  uint16_t w;
  asm volatile("fnstcw %0" : "=m"(w));
  return w;
}
uint16_t x87_status() {
  uint16_t w;
  asm volatile("fnstsw %0" : "=am"(w));
  return w;
}

}  // namespace
#endif

// FE_DFL_ENV resets the whole environment: on x86-64 that is MXCSR 0x1F80 (nearest, FTZ and DAZ
// off, exceptions masked) and the x87 control word; on AArch64, FPCR with FZ off.
// On x86-64 with glibc, a caller already in those settings (the usual case) keeps them: saving
// and replacing the whole environment (fnstenv/fldenv) was ~3.5% of a small op's call, reading
// the two control registers costs a few cycles. Its exception flags are given back on exit all
// the same, so the caller's state never changes either way.
FpEnvGuard::FpEnvGuard() {
#if defined(__x86_64__) && defined(__GLIBC__)
  csr_ = read_csr();
  if ((csr_ & ~kCsrFlags) == kDefaultCsr && x87_control() == kDefaultX87Control) {
    full_ = false;
    x87_status_ = x87_status();
    return;
  }
#endif
  std::fegetenv(&saved_);
  std::fesetenv(FE_DFL_ENV);
}

FpEnvGuard::~FpEnvGuard() {
  if (full_) {
    std::fesetenv(&saved_);
    return;
  }
#if defined(__x86_64__) && defined(__GLIBC__)
  if (read_csr() != csr_) write_csr(csr_);  // settings unchanged: only flags the library raised
  // The library computes nothing on the x87 (and sets its rounding only inside scopes that
  // restore it): this is the rare path.
  if (x87_status() != x87_status_ || x87_control() != kDefaultX87Control) {
    std::fenv_t now;
    std::fegetenv(&now);
    now.__status_word = x87_status_;
    now.__control_word = kDefaultX87Control;
    std::fesetenv(&now);
  }
#endif
}

}  // namespace maroon
