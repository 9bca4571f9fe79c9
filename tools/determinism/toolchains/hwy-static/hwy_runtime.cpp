// The part of Highway's runtime (its libhwy, hwy/targets.cc and hwy/abort.cc) that the engine
// calls, for a build with one static target: which targets "the CPU supports" (the static one,
// or the set a test forced) and Highway's abort. No dispatch table exists in such a build.
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include "hwy/base.h"
#include "hwy/targets.h"

namespace hwy {
namespace {
int64_t g_forced = 0;
}  // namespace

HWY_DLLEXPORT int64_t SupportedTargets() { return g_forced ? g_forced : HWY_STATIC_TARGET; }

HWY_DLLEXPORT void SetSupportedTargetsForTest(int64_t targets) {
  g_forced = targets;
  GetChosenTarget().Update(SupportedTargets());
}

HWY_DLLEXPORT ChosenTarget& GetChosenTarget() {
  static ChosenTarget chosen;
  return chosen;
}

HWY_DLLEXPORT HWY_NORETURN void HWY_FORMAT(3, 4) Abort(const char* file, int line, const char* format, ...) {
  char buf[800];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  std::fprintf(stderr, "Abort at %s:%d: %s\n", file, line, buf);
  std::abort();
}

}  // namespace hwy
