// fold_segs_vec (src/cpu/fold_segs_simd.cpp: each vector of outputs' running sums in a register,
// other segments' lanes adding +0) against fold_segs (the scalar fold, one segment at a time
// through memory) on every SIMD target, bit for bit: random term layouts (segments of every
// length, padding, rows wider and narrower than a vector), terms of random bits (NaN, infinities
// of both signs, whose sum is the x86 default NaN until made canonical, signed zeros,
// subnormals), float32 and float64, in four rounding modes; each layout folded both with the
// lanes worked out per row and through plan_fold_vec's plan, each run checked to have taken the
// way it was meant to. The conv2d harness
// (CpuConvGradients) checks the kernel that uses it against the reference executor.
#include <gtest/gtest.h>

#include <cstring>

#include "backend_settings.h"
#include "cpu/fold_segs.h"
#include "cpu/threads.h"
#include "harness.h"

namespace maroon::test {
namespace {

// Terms of P = rows * width outputs, R each: mostly runs along the row (offset x + r * stride
// from a per-(row, term) base), some padding, some scattered.
cpu::FoldSegs random_layout(Gen& g, int64_t rows, int64_t width, int64_t R, int64_t span) {
  cpu::FoldSegs f;
  f.P = rows * width;
  f.R = R;
  f.width = width;
  std::vector<int64_t> base(static_cast<size_t>(rows * R));
  for (auto& b : base) b = static_cast<int64_t>(g.next() % static_cast<uint64_t>(span - width));
  f.build([&](int64_t n) {
    const int64_t p = n / R, r = n % R, q = p / width, x = p % width;
    const uint64_t k = g.next() % 16;
    if (k == 0) return int64_t{-1};                                                // padding
    if (k == 1) return static_cast<int64_t>(g.next() % static_cast<uint64_t>(span));  // scattered
    return base[q * R + r] + x;
  });
  return f;
}

template <class T>
void compare(DType d, Round rnd, int64_t width, uint64_t seed, int* cases) {
  Gen g(seed);
  const int64_t rows = 7, R = 9, span = 4096;
  cpu::FoldSegs f = random_layout(g, rows, width, R, span);
  const size_t slack = cpu::kFoldSlackBytes / sizeof(T);
  std::vector<T> src(span + 2 * slack);
  for (auto& v : src) {
    uint64_t b = g.bits(d);
    if (g.next() % 8 == 0) b = d == DType::Float32 ? (g.next() & 1 ? 0xFF800000u : 0x7F800000u)
                                                   : (g.next() & 1 ? 0xFFF0000000000000ull : 0x7FF0000000000000ull);
    std::memcpy(&v, &b, sizeof(T));
  }
  std::vector<T> want(static_cast<size_t>(f.P)), got(static_cast<size_t>(f.P));
  cpu::set_hw_round(rnd);
  cpu::fold_segs(d, f, src.data() + slack, want.data());
  for (const std::string& target : targets_to_test()) {
    set_simd_target(target);
    for (bool plan : {false, true}) {
      if (plan) cpu::plan_fold_vec(d, &f);
      else f.vec_lanes = 0;
      ASSERT_EQ(plan, f.vec_lanes > 0) << "no lane plan on " << target;
      std::fill(got.begin(), got.end(), T(1));
      const cpu::FoldVecPath path = cpu::fold_segs_vec(d, f, src.data() + slack, got.data());
      EXPECT_EQ(plan ? cpu::FoldVecPath::Planned : cpu::FoldVecPath::Computed, path) << "on " << target;
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(T)))
          << dtype_name(d) << " " << round_name(rnd) << " width " << width << " on " << target
          << (plan ? " planned" : "");
    }
  }
  cpu::set_hw_round(Round::NearestEven);
  ++*cases;
}

TEST(CpuFoldSegs, VectorFoldEqualsScalarFold) {
  BackendSettings keep;
  int cases = 0;
  uint64_t seed = 7300;
  for (Round r : {Round::NearestEven, Round::Down, Round::Up, Round::TowardZero})
    for (int64_t width : {1, 3, 8, 17, 24, 40, 70}) {
      compare<float>(DType::Float32, r, width, seed++, &cases);
      compare<double>(DType::Float64, r, width, seed++, &cases);
    }
  std::printf("vector folds: %d layouts, each on every SIMD target equal to the scalar fold\n", cases);
}

}  // namespace
}  // namespace maroon::test
