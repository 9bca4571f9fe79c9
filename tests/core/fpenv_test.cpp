// The caller's floating-point state never changes Maroon's bits, and Maroon gives it back intact.
#include <gtest/gtest.h>

#include <cfenv>
#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define MAROON_HAS_MXCSR 1
#endif

#include "util.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

std::vector<uint64_t> workload() {
  // Subnormal results (which FTZ would flush), inexact sums (which the rounding mode would
  // change) and the transcendentals (which may use hardware doubles internally).
  Tensor a = Tensor::from_vector<float>({1e-38f, 3.f, 0.1f, -2.5f, 1e-45f, 7.f}, {6});
  Tensor b = Tensor::from_vector<float>({0.5f, 7.f, 0.2f, 1.f / 3, 1e-45f, 1e-3f}, {6});
  std::vector<uint64_t> out;
  for (const Tensor& t : {prim::mul(a, b), prim::add(a, b), a.exp2(), b.log2(), a.sin(), prim::pow(b, a),
                          a.cast(DType::Float64).sin(), a.cast(DType::Float16).exp2()}) {
    auto bits = t.bits();
    out.insert(out.end(), bits.begin(), bits.end());
  }
  return out;
}

TEST(FpEnv, CallerStateDoesNotChangeBitsAndIsRestored) {
  const std::vector<uint64_t> clean = workload();
  std::fenv_t saved;
  std::fegetenv(&saved);
  ASSERT_EQ(std::fesetround(FE_UPWARD), 0);
#ifdef MAROON_HAS_MXCSR
  const unsigned ftz_daz = 0x8040;  // FTZ (bit 15) and DAZ (bit 6)
  _mm_setcsr(_mm_getcsr() | ftz_daz);
#endif
  const std::vector<uint64_t> dirty = workload();
  const int round_after = std::fegetround();
#ifdef MAROON_HAS_MXCSR
  const unsigned csr_after = _mm_getcsr();
#endif
  std::fesetenv(&saved);
  EXPECT_EQ(dirty, clean);
  EXPECT_EQ(round_after, FE_UPWARD) << "the caller's rounding mode was not restored";
#ifdef MAROON_HAS_MXCSR
  EXPECT_EQ(csr_after & ftz_daz, ftz_daz) << "the caller's FTZ/DAZ bits were not restored";
#endif
}

// A caller already in the library's settings keeps its exception flags as they were, set or
// clear: the work raises inexact, underflow and others, which are the library's, not the caller's.
TEST(FpEnv, CallerExceptionFlagsAreRestored) {
  const std::vector<uint64_t> clean = workload();
  std::fenv_t saved;
  std::fegetenv(&saved);
  for (int raised : {0, FE_INEXACT, FE_DIVBYZERO | FE_OVERFLOW}) {
    std::feclearexcept(FE_ALL_EXCEPT);
    if (raised) std::feraiseexcept(raised);
    const std::vector<uint64_t> again = workload();
    const int after = std::fetestexcept(FE_ALL_EXCEPT);
    std::fesetenv(&saved);
    EXPECT_EQ(again, clean);
    EXPECT_EQ(after, raised) << "the caller's exception flags changed";
  }
}

}  // namespace
}  // namespace maroon::test
