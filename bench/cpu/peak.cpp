#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "peak.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <chrono>

HWY_BEFORE_NAMESPACE();
namespace maroon::bench::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// 16 independent accumulators: enough to hide the add latency on every x86 we know. kFma: the
// same chains as fused multiply-adds (what BLAS and ONNX Runtime run), for the ratio between the
// two, which bounds an unfused product's speed against theirs on this machine.
template <class T, bool kFma = false>
double Peak() {
  const hn::ScalableTag<T> d;
  // Distinct starting values: identical chains would be merged by the compiler into one.
  auto a0 = hn::Set(d, T(0)), a1 = hn::Set(d, T(1)), a2 = hn::Set(d, T(2)), a3 = hn::Set(d, T(3));
  auto a4 = hn::Set(d, T(4)), a5 = hn::Set(d, T(5)), a6 = hn::Set(d, T(6)), a7 = hn::Set(d, T(7));
  auto a8 = hn::Set(d, T(8)), a9 = hn::Set(d, T(9)), a10 = hn::Set(d, T(10)), a11 = hn::Set(d, T(11));
  auto a12 = hn::Set(d, T(12)), a13 = hn::Set(d, T(13)), a14 = hn::Set(d, T(14)), a15 = hn::Set(d, T(15));
  // a = a*x + y with separate roundings: nothing the compiler can hoist, 16 chains in flight.
  const auto x = hn::Set(d, T(0.9999999)), y = hn::Set(d, T(1e-7));
  const long iters = 20'000'000;
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < iters; ++i) {
#define STEP(a) a = kFma ? hn::MulAdd(a, x, y) : hn::Add(hn::Mul(a, x), y);
    STEP(a0) STEP(a1) STEP(a2) STEP(a3) STEP(a4) STEP(a5) STEP(a6) STEP(a7)
    STEP(a8) STEP(a9) STEP(a10) STEP(a11) STEP(a12) STEP(a13) STEP(a14) STEP(a15)
#undef STEP
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  auto sum = hn::Add(hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)), hn::Add(hn::Add(a4, a5), hn::Add(a6, a7)));
  sum = hn::Add(sum, hn::Add(hn::Add(hn::Add(a8, a9), hn::Add(a10, a11)), hn::Add(hn::Add(a12, a13), hn::Add(a14, a15))));
  volatile T sink = hn::GetLane(sum);
  (void)sink;
  return 2.0 * 16 * iters * hn::Lanes(d) / s / 1e9;
}
double PeakF() { return Peak<float>(); }
double PeakD() { return Peak<double>(); }
double PeakFmaF() { return Peak<float, true>(); }
double PeakFmaD() { return Peak<double, true>(); }

}  // namespace maroon::bench::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "peak.h"
namespace maroon::bench {
HWY_EXPORT(PeakF);
HWY_EXPORT(PeakD);
HWY_EXPORT(PeakFmaF);
HWY_EXPORT(PeakFmaD);
template <> double peak_mul_add_gflops<float>() { return HWY_DYNAMIC_DISPATCH(PeakF)(); }
template <> double peak_mul_add_gflops<double>() { return HWY_DYNAMIC_DISPATCH(PeakD)(); }
template <> double peak_fma_gflops<float>() { return HWY_DYNAMIC_DISPATCH(PeakFmaF)(); }
template <> double peak_fma_gflops<double>() { return HWY_DYNAMIC_DISPATCH(PeakFmaD)(); }
}  // namespace maroon::bench
#endif
