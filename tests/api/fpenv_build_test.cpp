// Building a graph computes some doubles on the host (an initialiser's bound, linspace's step):
// those must not round in the caller's mode or flush its subnormals either. Float64 results
// carry such a double through unrounded, so a caller's upward rounding would show in the bits.
#include <cfenv>
#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define MAROON_HAS_MXCSR 1
#endif

#include "maroon/nn.h"
#include "util.h"

namespace maroon {
namespace {

std::vector<uint64_t> build_and_run() {
  Tensor::manual_seed(3);
  const DType f64 = DType::Float64;
  std::vector<Tensor> ts = {
      Tensor::linspace(0, 1, 7, f64),
      Tensor::arange(Scalar(0.1), Scalar(1.0), Scalar(0.3), f64),
      Tensor::kaiming_uniform({5, 3}, 0.01, f64),
      Tensor::glorot_uniform({5, 3}, f64),
      Tensor::scaled_uniform({3, 7}, f64),
      Tensor::ones({2, 7}, f64).sparse_categorical_crossentropy(Tensor::zeros({2}, DType::Int32), -1, 0.1),
      Tensor::ones({1, 1, 3}, f64).log10(),
  };
  // Several fans: a bound that differs in its last bit shows through `+ low` in float64, but
  // a square root can hide a one-ulp difference of its argument, so one shape is not enough.
  for (int64_t fan : {3, 7, 11, 13, 17, 19, 23, 29}) {
    ts.push_back(Tensor::kaiming_uniform({2, fan}, 0.01, f64));
    ts.push_back(Tensor::glorot_uniform({2, fan}, f64));
    ts.push_back(Tensor::kaiming_normal({2, fan}, 0.01, f64));
  }
  nn::Linear lin(784, 3);
  ts.push_back(lin.weight);
  std::vector<uint64_t> out;
  for (const Tensor& t : ts) {
    auto b = t.bits();
    out.insert(out.end(), b.begin(), b.end());
  }
  return out;
}

TEST(FpEnv, GraphBuildingIgnoresTheCallersRoundingAndFlushing) {
  const std::vector<uint64_t> clean = build_and_run();
  std::fenv_t saved;
  std::fegetenv(&saved);
  ASSERT_EQ(std::fesetround(FE_UPWARD), 0);
#ifdef MAROON_HAS_MXCSR
  _mm_setcsr(_mm_getcsr() | 0x8040);  // FTZ and DAZ
#endif
  const std::vector<uint64_t> dirty = build_and_run();
  const int round_after = std::fegetround();
  std::fesetenv(&saved);
  EXPECT_EQ(round_after, FE_UPWARD) << "the caller's rounding mode was not restored";
  EXPECT_EQ(dirty, clean);
}

}  // namespace
}  // namespace maroon
