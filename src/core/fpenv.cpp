#include "core/fpenv.h"

namespace maroon {

// FE_DFL_ENV resets the whole environment: on x86-64 that is MXCSR 0x1F80 (nearest, FTZ and DAZ
// off, exceptions masked) and the x87 control word; on AArch64, FPCR with FZ off.
FpEnvGuard::FpEnvGuard() {
  std::fegetenv(&saved_);
  std::fesetenv(FE_DFL_ENV);
}

FpEnvGuard::~FpEnvGuard() { std::fesetenv(&saved_); }

}  // namespace maroon
