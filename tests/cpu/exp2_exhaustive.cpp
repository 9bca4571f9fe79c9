// maroon-exp2-exhaustive: the SIMD exp2 (src/cpu/fast_math.cpp) against src/math's scalar exp2
// on all 2^32 binary32 inputs, on every SIMD target this machine has, in the rounding modes
// asked for; in round-to-nearest also the chain kernel's EXP2 step (src/cpu/fastops.cpp, a chain
// of that one step: the running value through registers, the exp2 lanes and the final store) and
// the accumulator kernel's (src/cpu/acc_kernel.cpp: a load and the EXP2 step, the held vectors
// through its 64-lane span and back). src/math's exp2 is itself checked against MPFR on all 2^32 inputs (docs/math.md),
// so equality here makes the kernel correctly rounded too. Too long for CI (minutes); the README
// names it. The scalar results (the slow part) are computed once per block on `threads`
// threads; the targets then run one after another on the block.
//
//   maroon-exp2-exhaustive [--threads N] [--modes rn|all] [--range LO HI]
// Prints mismatches (at most 20) and a RESULT line; exits 1 on any mismatch.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cpu/fast_math.h"
#include "cpu/kernel.h"
#include "math/math.h"
#include "maroon/backend.h"

using namespace maroon;

int main(int argc, char** argv) {
  int threads = 2;
  bool all_modes = true;
  uint64_t lo = 0, hi = uint64_t{1} << 32;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) threads = std::max(1, std::atoi(argv[++i]));
    else if (a == "--modes" && i + 1 < argc) all_modes = std::string(argv[++i]) != "rn";
    else if (a == "--range" && i + 2 < argc) { lo = std::strtoull(argv[++i], nullptr, 0); hi = std::strtoull(argv[++i], nullptr, 0); }
    else { std::fprintf(stderr, "usage: maroon-exp2-exhaustive [--threads N] [--modes rn|all] [--range LO HI]\n"); return 2; }
  }
  if (hi > (uint64_t{1} << 32) || lo >= hi) { std::fprintf(stderr, "maroon-exp2-exhaustive: bad --range\n"); return 2; }
  std::vector<Round> modes = {Round::NearestEven};
  if (all_modes) modes.assign(std::begin(kAllRounds), std::end(kAllRounds));
  const cpu::MathFn fn = cpu::fast_math(Op::EXP2, DType::Float32, DType::Float32);
  const cpu::ChainFn chain = cpu::fast_chain(DType::Float32);
  const cpu::ChainStep exp2_step{cpu::ChainOp::Exp2, nullptr};
  const cpu::AccFn acc = cpu::fast_acc(DType::Float32);
  const cpu::AccStep acc_steps[] = {{cpu::AccOp::LoadV, 0, 0}, {cpu::AccOp::Exp2, 0, -1}};
  const std::vector<std::string> targets = available_simd_targets();
  const size_t nm = modes.size();
  constexpr uint64_t kBlock = uint64_t{1} << 20;
  std::vector<uint32_t> in(kBlock + cpu::kTilePad), want(kBlock * nm), got(kBlock + cpu::kTilePad);
  uint64_t mismatches = 0, checked = 0;
  std::vector<double> target_s(targets.size(), 0.0);
  double scalar_s = 0;
  auto now = [] { return std::chrono::steady_clock::now(); };
  auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  const auto t_start = now();
  for (uint64_t base = lo; base < hi; base += kBlock) {
    const uint64_t n = std::min(kBlock, hi - base);
    for (uint64_t i = 0; i < n; ++i) in[i] = static_cast<uint32_t>(base + i);
    const auto t0 = now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        for (uint64_t i = t; i < n; i += threads)
          for (size_t m = 0; m < nm; ++m) want[m * kBlock + i] = static_cast<uint32_t>(math::exp2(sf::kF32, in[i], modes[m]));
      });
    for (std::thread& th : pool) th.join();
    scalar_s += secs(t0, now());
    for (size_t ti = 0; ti < targets.size(); ++ti) {
      set_simd_target(targets[ti]);
      const auto t1 = now();
      for (size_t m = 0; m < nm; ++m) {
        for (int path = 0; path < (modes[m] == Round::NearestEven ? 3 : 1); ++path) {
          for (uint64_t i = 0; i < n; i += cpu::kTile) {
            const int len = static_cast<int>(std::min<uint64_t>(cpu::kTile, n - i));
            const void* leaf = in.data() + i;
            if (path == 0) fn(in.data() + i, got.data() + i, len, modes[m]);
            else if (path == 1) chain(in.data() + i, &exp2_step, 1, got.data() + i, len);
            else acc(acc_steps, 2, &leaf, nullptr, got.data() + i, len);
          }
          for (uint64_t i = 0; i < n; ++i) {
            if (got[i] == want[m * kBlock + i]) continue;
            if (++mismatches <= 20)
              std::printf("MISMATCH %s %s %s x=0x%08x kernel=0x%08x scalar=0x%08x\n", targets[ti].c_str(),
                          std::string(round_name(modes[m])).c_str(), path == 2 ? "acc" : path ? "chain" : "tile", in[i], got[i],
                          want[m * kBlock + i]);
          }
        }
      }
      target_s[ti] += secs(t1, now());
    }
    checked += n;
    if ((base - lo) % (uint64_t{1} << 28) == 0 && base != lo)
      std::fprintf(stderr, "  %.0f%% (%.0f s)\n", 100.0 * double(base - lo) / double(hi - lo), secs(t_start, now()));
  }
  std::printf("RESULT inputs [0x%llx, 0x%llx): %llu x %zu modes, targets:", static_cast<unsigned long long>(lo),
              static_cast<unsigned long long>(hi), static_cast<unsigned long long>(checked), nm);
  for (size_t ti = 0; ti < targets.size(); ++ti) std::printf(" %s (%.1f s)", targets[ti].c_str(), target_s[ti]);
  std::printf("; scalar reference %.1f s on %d threads; wall %.1f s; mismatches %llu\n", scalar_s, threads,
              secs(t_start, now()), static_cast<unsigned long long>(mismatches));
  return mismatches ? 1 : 0;
}
