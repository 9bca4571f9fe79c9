// Scalar binary32 throughput of maroon::math against glibc's libm and SLEEF's deterministic
// pure-C scalar functions (Sleef_cinz_*f1_u10purec: same bits on every platform, 1.0-ulp
// accuracy), all measured in the same run on the same inputs; then the CPU backend's SIMD exp2
// (src/cpu/fast_math.cpp, the same bits) per target on the same inputs, against the scalar
// maroon::math::exp2 of the first table. libm is fine here: this is a benchmark, not the library.
//
//   math-bench [inputs (default 1<<20)] [repetitions (default 5)]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cpu/fast_math.h"
#include "cpu/kernel.h"
#include "math/math.h"
#include "maroon/backend.h"
// After Maroon's headers: sleef.h defines a CONST macro, which is also an op's name.
#include <sleef.h>

using namespace maroon;

namespace {

volatile uint32_t g_sink;

inline uint32_t bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }

template <class F>
double ns_per_call(const std::vector<float>& xs, int reps, F fn) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    uint32_t acc = 0;
    auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < xs.size(); ++i) acc ^= fn(i);
    auto t1 = std::chrono::steady_clock::now();
    g_sink = acc;
    double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / double(xs.size());
    if (ns < best) best = ns;
  }
  return best;
}

struct Lcg {
  uint64_t s = 0x1234567;
  double uni() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return double(s >> 11) * 0x1p-53;
  }
};

// The SIMD exp2 kernel over xs in tiles (as the CPU backend calls it), ns per element.
double simd_ns(const std::vector<float>& xs, int reps, Round r) {
  const cpu::MathFn fn = cpu::fast_math(Op::EXP2, DType::Float32, DType::Float32);
  std::vector<float> in(xs);
  in.resize(xs.size() + cpu::kTilePad);
  std::vector<uint32_t> out(in.size());
  double best = 1e30;
  for (int rep = 0; rep < reps; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < xs.size(); i += cpu::kTile)
      fn(in.data() + i, out.data() + i, static_cast<int>(std::min<size_t>(cpu::kTile, xs.size() - i)), r);
    auto t1 = std::chrono::steady_clock::now();
    g_sink = out[xs.size() / 2];
    best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count() / double(xs.size()));
  }
  return best;
}

void simd_exp2_rows(const std::vector<float>& ex, int reps, double scalar_ns, double glibc_ns) {
  std::printf("\nSIMD exp2 (src/cpu/fast_math.cpp, binary32, bits = maroon scalar), exp2 [-100,100], ns per element\n");
  std::printf("%-10s %10s %10s %14s %12s\n", "target", "nearest", "up", "scalar/simd", "simd/glibc");
  const std::string before = simd_target();
  for (const std::string& t : available_simd_targets()) {
    set_simd_target(t);
    const double rn = simd_ns(ex, reps, Round::NearestEven), up = simd_ns(ex, reps, Round::Up);
    std::printf("%-10s %10.2f %10.2f %13.1fx %11.2fx\n", t.c_str(), rn, up, scalar_ns / rn, rn / glibc_ns);
  }
  set_simd_target(before);
}

}  // namespace

int main(int argc, char** argv) {
  size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : (size_t{1} << 20);
  int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  Lcg rng;
  std::vector<float> ex(n), lg(n), sn(n), px(n), py(n);
  for (size_t i = 0; i < n; ++i) {
    ex[i] = float(rng.uni() * 200 - 100);                    // exp2: [-100, 100]
    lg[i] = float(std::exp2(rng.uni() * 200 - 100));         // log2: 2^[-100, 100]
    sn[i] = float(rng.uni() * 200 - 100);                    // sin: [-100, 100]
    px[i] = float(rng.uni() * 10);                           // pow: x in [0, 10)
    py[i] = float(rng.uni() * 40 - 20);                      //      y in [-20, 20)
  }
  std::vector<float> sb(n);                                  // sin of large arguments
  for (size_t i = 0; i < n; ++i) sb[i] = float(std::exp2(rng.uni() * 100) * (rng.uni() < 0.5 ? -1 : 1));

  std::printf("scalar binary32, %zu inputs, best of %d; ns per call (ratio = maroon / other)\n", n, reps);
  std::printf("%-22s %10s %10s %10s %12s %12s\n", "function", "maroon", "glibc", "sleef", "vs glibc", "vs sleef");
  auto row = [&](const char* name, double m, double g, double s) {
    std::printf("%-22s %10.2f %10.2f %10.2f %11.2fx %11.2fx\n", name, m, g, s, m / g, m / s);
  };
  const Round rn = Round::NearestEven;
  const double exp2_scalar =
      ns_per_call(ex, reps, [&](size_t i) { return uint32_t(math::exp2(sf::kF32, bits(ex[i]), rn)); });
  const double exp2_glibc = ns_per_call(ex, reps, [&](size_t i) { return bits(exp2f(ex[i])); });
  row("exp2 [-100,100]", exp2_scalar, exp2_glibc,
      ns_per_call(ex, reps, [&](size_t i) { return bits(Sleef_cinz_exp2f1_u10purec(ex[i])); }));
  row("log2 2^[-100,100]",
      ns_per_call(lg, reps, [&](size_t i) { return uint32_t(math::log2(sf::kF32, bits(lg[i]), rn)); }),
      ns_per_call(lg, reps, [&](size_t i) { return bits(log2f(lg[i])); }),
      ns_per_call(lg, reps, [&](size_t i) { return bits(Sleef_cinz_log2f1_u10purec(lg[i])); }));
  row("sin [-100,100]",
      ns_per_call(sn, reps, [&](size_t i) { return uint32_t(math::sin(sf::kF32, bits(sn[i]), rn)); }),
      ns_per_call(sn, reps, [&](size_t i) { return bits(sinf(sn[i])); }),
      ns_per_call(sn, reps, [&](size_t i) { return bits(Sleef_cinz_sinf1_u10purec(sn[i])); }));
  row("sin +-2^[0,100]",
      ns_per_call(sb, reps, [&](size_t i) { return uint32_t(math::sin(sf::kF32, bits(sb[i]), rn)); }),
      ns_per_call(sb, reps, [&](size_t i) { return bits(sinf(sb[i])); }),
      ns_per_call(sb, reps, [&](size_t i) { return bits(Sleef_cinz_sinf1_u10purec(sb[i])); }));
  row("pow [0,10)^[-20,20)",
      ns_per_call(px, reps, [&](size_t i) { return uint32_t(math::pow(sf::kF32, bits(px[i]), bits(py[i]), rn)); }),
      ns_per_call(px, reps, [&](size_t i) { return bits(powf(px[i], py[i])); }),
      ns_per_call(px, reps, [&](size_t i) { return bits(Sleef_cinz_powf1_u10purec(px[i], py[i])); }));
  simd_exp2_rows(ex, reps, exp2_scalar, exp2_glibc);
  // The other formats and modes, maroon only.
  std::printf("\nmaroon, other modes/formats (ns per call):\n");
  std::printf("  exp2 f32 up: %.2f   log2 f32 down: %.2f   sin f32 toward-zero: %.2f\n",
              ns_per_call(ex, reps, [&](size_t i) { return uint32_t(math::exp2(sf::kF32, bits(ex[i]), Round::Up)); }),
              ns_per_call(lg, reps, [&](size_t i) { return uint32_t(math::log2(sf::kF32, bits(lg[i]), Round::Down)); }),
              ns_per_call(sn, reps, [&](size_t i) { return uint32_t(math::sin(sf::kF32, bits(sn[i]), Round::TowardZero)); }));
  std::vector<double> exd(n), lgd(n), snd(n);
  for (size_t i = 0; i < n; ++i) { exd[i] = ex[i] * 10.0; lgd[i] = lg[i]; snd[i] = sn[i]; }
  auto b64 = [](double d) { uint64_t u; std::memcpy(&u, &d, 8); return u; };
  std::printf("  f64 (double-double path): exp2 %.2f (glibc exp2 %.2f)   log2 %.2f (glibc %.2f)   sin %.2f (glibc %.2f)\n",
              ns_per_call(ex, reps, [&](size_t i) { return uint32_t(math::exp2(sf::kF64, b64(exd[i]), rn)); }),
              ns_per_call(ex, reps, [&](size_t i) { return uint32_t(b64(std::exp2(exd[i]))); }),
              ns_per_call(lg, reps, [&](size_t i) { return uint32_t(math::log2(sf::kF64, b64(lgd[i]), rn)); }),
              ns_per_call(lg, reps, [&](size_t i) { return uint32_t(b64(std::log2(lgd[i]))); }),
              ns_per_call(sn, reps, [&](size_t i) { return uint32_t(math::sin(sf::kF64, b64(snd[i]), rn)); }),
              ns_per_call(sn, reps, [&](size_t i) { return uint32_t(b64(std::sin(snd[i]))); }));
  return 0;
}
