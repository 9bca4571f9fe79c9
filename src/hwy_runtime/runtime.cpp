// The part of Highway's library (libhwy: hwy/targets.cc, hwy/abort.cc) that Maroon calls, for
// builds that must not load libhwy.so (src/hwy_runtime/CMakeLists.txt): which SIMD targets this
// CPU supports, the test hook that forces one (MAROON_SIMD, maroon::set_simd_target), the
// chosen-target state that HWY_DYNAMIC_DISPATCH reads, and Abort.
//
// A target is reported only when the CPU has every instruction set its code is compiled with
// (HWY_TARGET_STR_* in hwy/ops/set_macros-inl.h) and the OS saves the registers it uses; a
// wrong "yes" would be an illegal instruction, a wrong "no" only slower. Which target runs never
// changes a bit (tests/cpu proves it), so this file decides speed, not results.
#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "hwy/base.h"
#include "hwy/targets.h"

#if HWY_ARCH_X86
#include <cpuid.h>
#elif HWY_ARCH_ARM_A64 && defined(__linux__)
#include <sys/auxv.h>
#endif

namespace hwy {
namespace {

#if HWY_ARCH_X86
bool bit(uint32_t reg, int i) { return (reg >> i) & 1u; }

uint64_t xgetbv0() {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

int64_t detect() {
  uint32_t a, b, c1, d1, c7 = 0, b7 = 0, cx = 0, d;
  int64_t t = 0;
  if (!__get_cpuid(1, &a, &b, &c1, &d1)) return 0;
  if (__get_cpuid_max(0, nullptr) >= 7) __get_cpuid_count(7, 0, &a, &b7, &c7, &d);
  if (__get_cpuid_max(0x80000000u, nullptr) >= 0x80000001u) __get_cpuid(0x80000001u, &a, &b, &cx, &d);
  bool ssse3 = bit(d1, 26) && bit(c1, 0) && bit(c1, 9);               // sse2, sse3, ssse3
  bool sse4 = ssse3 && bit(c1, 19) && bit(c1, 20) && bit(c1, 1) && bit(c1, 25);  // sse4.1/4.2, pclmul, aes
  uint64_t xcr0 = bit(c1, 27) ? xgetbv0() : 0;                         // OSXSAVE: the OS saves state
  bool ymm = (xcr0 & 0x6) == 0x6, zmm = (xcr0 & 0xe6) == 0xe6;
  bool avx2 = sse4 && ymm && bit(c1, 28) && bit(b7, 5) && bit(b7, 3) && bit(b7, 8) && bit(c1, 12) &&
              bit(c1, 29) && bit(cx, 5);                               // avx avx2 bmi bmi2 fma f16c lzcnt
  bool avx3 = avx2 && zmm && bit(b7, 16) && bit(b7, 31) && bit(b7, 17) && bit(b7, 30);  // f vl dq bw
  if (ssse3) t |= HWY_SSSE3;
  if (sse4) t |= HWY_SSE4;
  if (avx2) t |= HWY_AVX2;
  if (avx3) t |= HWY_AVX3;
  return t;
}
#elif HWY_ARCH_ARM_A64 && defined(__linux__)
int64_t detect() {
  int64_t t = HWY_NEON;  // every AArch64 CPU
  unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
  if (hw & (1ul << 22)) t |= HWY_SVE;                                // HWCAP_SVE
  if ((hw & (1ul << 22)) && (hw2 & (1ul << 1)) && (hw2 & (1ul << 2))) t |= HWY_SVE2;  // SVE2, SVEAES
  return t;
}
#else
int64_t detect() { return 0; }  // only what the build's baseline compiles (below)
#endif

std::atomic<int64_t> g_forced{0};

}  // namespace

HWY_DLLEXPORT int64_t SupportedTargets() {
  int64_t forced = g_forced.load();
  if (forced) return forced;
  static const int64_t real = detect() | HWY_STATIC_TARGET | HWY_EMU128 | HWY_SCALAR;
  return real;
}

HWY_DLLEXPORT void SetSupportedTargetsForTest(int64_t targets) {
  g_forced.store(targets);
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
