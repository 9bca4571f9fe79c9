// The fused matmul (REDUCE_MULACC) on the CPU backend, bit for bit against two oracles: a scalar
// std::fma loop (acc = +0; acc = fma(a[i,k], b[k,j], acc) for k = 0, 1, ...) run in the node's
// rounding mode, and the reference executor's soft-float fold. Every SIMD target this machine has
// (FMA instructions on AVX2/AVX-512, the exact software MULACC on SSE4/scalar) and 1, 2 and 3
// threads, compared by memcmp.
#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <cstring>

#include "fused_util.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

int g_runs = 0;

// The oracle: libm's fma, in increasing k from +0, with the hardware mode set to `r`.
template <class T>
std::vector<uint64_t> fma_loop(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b, int64_t M,
                               int64_t K, int64_t N, Round r) {
  static const int modes[] = {FE_TONEAREST, FE_TOWARDZERO, FE_UPWARD, FE_DOWNWARD};
  auto val = [](uint64_t bits) { T v; std::memcpy(&v, &bits, sizeof(T)); return v; };
  std::vector<uint64_t> out(static_cast<size_t>(M * N));
  const int saved = std::fegetround();
  std::fesetround(modes[static_cast<int>(r)]);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      volatile T acc = T(0);
      for (int64_t k = 0; k < K; ++k) acc = std::fma(val(a[i * K + k]), val(b[k * N + j]), acc);
      T v = acc;
      uint64_t bits = 0;
      std::memcpy(&bits, &v, sizeof(T));
      out[i * N + j] = v != v ? (sizeof(T) == 4 ? 0x7FC00000u : 0x7FF8000000000000ull) : bits;
    }
  std::fesetround(saved);
  return out;
}

// Mostly values near 1 with random signs (sums that cancel and round), some subnormals, and
// with `specials` a few infinities and NaNs.
std::vector<uint64_t> values(DType d, int64_t n, uint64_t seed, bool specials) {
  Gen g(seed);
  sf::Format f = fmt(d);
  std::vector<uint64_t> v(static_cast<size_t>(n));
  for (auto& x : v) {
    const uint64_t c = g.next() % 100;
    if (c < 4) x = (g.next() & 1 ? f.sign_bit() : 0) | (g.next() & f.man_mask());  // subnormal
    else if (specials && c < 6) x = g.bits(d);                                      // anything
    else if (d == DType::Float32 || d == DType::Float64)
      x = nearest_bits(d, (static_cast<double>(g.next() % 4097) / 2048.0 - 1) * (1 + 1.0 / (1 + g.next() % 977)));
    else x = encode(f, static_cast<double>(g.next() % 257) / 128.0 - 1);
  }
  return v;
}

struct Size { int64_t m, k, n; };

void check_matmul(DType d, Size s, Round r, bool specials, bool transposed) {
  const std::string what = std::string(dtype_name(d)) + " " + std::to_string(s.m) + "x" + std::to_string(s.k) +
                           "x" + std::to_string(s.n) + " " + std::string(round_name(r)) +
                           (specials ? " specials" : "") + (transposed ? " x^T" : "");
  SCOPED_TRACE(what);
  const std::vector<uint64_t> a = values(d, s.m * s.k, s.m * 7919 + s.k * 31 + s.n, specials);
  const std::vector<uint64_t> b = values(d, s.k * s.n, s.n * 104729 + s.k, specials);
  const std::vector<uint64_t> want = d == DType::Float32 ? fma_loop<float>(a, b, s.m, s.k, s.n, r)
                                                         : fma_loop<double>(a, b, s.m, s.k, s.n, r);
  auto build = [&] {
    Tensor x = tensor_of_bits(a, {s.m, s.k}, d);
    if (transposed) {  // the same values read through a permuted view
      std::vector<uint64_t> at(a.size());
      for (int64_t i = 0; i < s.m; ++i)
        for (int64_t k = 0; k < s.k; ++k) at[k * s.m + i] = a[i * s.k + k];
      x = tensor_of_bits(at, {s.k, s.m}, d).permute({1, 0});
    }
    RoundingScope scope(r);
    return x.matmul(tensor_of_bits(b, {s.k, s.n}, d), std::nullopt, true);
  };
  g_runs += compare_everywhere(what, want, build);
}

TEST(FusedMatmul, EqualsTheStdFmaLoopOnEveryTargetThreadCountAndMode) {
  const int before = g_runs;
  // One and several row/column blocks (96 x 256) and k blocks (256); odd sizes, k = 0 and 1.
  const Size sizes[] = {{1, 1, 1}, {3, 0, 5}, {4, 1, 7}, {7, 13, 5}, {13, 17, 33}, {33, 65, 17},
                        {100, 40, 130}, {20, 10, 300}, {5, 600, 3}};
  for (DType d : {DType::Float32, DType::Float64})
    for (Size s : sizes)
      for (Round r : kAllRounds) check_matmul(d, s, r, false, false);
  for (DType d : {DType::Float32, DType::Float64})
    for (Round r : kAllRounds) {
      check_matmul(d, {9, 21, 35}, r, true, false);  // inf, NaN (canonical), huge, subnormal
      check_matmul(d, {17, 19, 23}, r, false, true);
    }
  std::printf("fused matmul vs std::fma loop: %d backend runs equal\n", g_runs - before);
}

TEST(FusedMatmul, LargeKAndBlocksInNearestEven) {
  const int before = g_runs;
  for (DType d : {DType::Float32, DType::Float64}) check_matmul(d, {97, 300, 259}, Round::NearestEven, false, false);
  std::printf("fused matmul, large k: %d backend runs equal\n", g_runs - before);
}

// Batched, broadcast and conv2d contractions: against the reference executor (its fold is the
// std::fma loop's, shown above and in tests/core's special values).
TEST(FusedMatmul, BatchedBroadcastAndConvEqualTheReference) {
  const int before = g_runs;
  for (DType d : {DType::Float32, DType::Float64}) {
    const std::string dn(dtype_name(d));
    g_runs += compare_with_ref("batched " + dn, [&] {
      Tensor x = tensor_of_bits(values(d, 3 * 40 * 70, 1, false), {3, 40, 70}, d);
      Tensor y = tensor_of_bits(values(d, 3 * 70 * 50, 2, false), {3, 70, 50}, d);
      return x.matmul(y, std::nullopt, true);
    });
    g_runs += compare_with_ref("broadcast batch " + dn, [&] {
      Tensor x = tensor_of_bits(values(d, 2 * 30 * 20, 3, false), {2, 30, 20}, d);
      Tensor y = tensor_of_bits(values(d, 20 * 40, 4, false), {20, 40}, d);
      RoundingScope scope(Round::Up);
      return x.matmul(y, std::nullopt, true);
    });
    // Output columns not adjacent (b's axis comes first) and k over two axes of permuted views
    // (offsets that are not one arithmetic sequence).
    g_runs += compare_with_ref("columns first, two reduced axes " + dn, [&] {
      Tensor x = tensor_of_bits(values(d, 7 * 5 * 30, 13, false), {7, 5, 30}, d).permute({2, 1, 0});
      Tensor y = tensor_of_bits(values(d, 40 * 7 * 5, 14, false), {40, 7, 5}, d).permute({0, 2, 1});
      RoundingScope scope(Round::TowardZero);
      return prim::fused_reduce(x.reshape({1, 30, 5, 7}), y.reshape({40, 1, 5, 7}), {2, 3});
    });
    g_runs += compare_with_ref("vector dot " + dn, [&] {
      Tensor x = tensor_of_bits(values(d, 333, 5, false), {333}, d);
      return x.dot(tensor_of_bits(values(d, 333, 6, false), {333}, d), std::nullopt, true);
    });
    g_runs += compare_with_ref("conv2d " + dn, [&] {
      Tensor x = tensor_of_bits(values(d, 4 * 3 * 12 * 12, 7, false), {4, 3, 12, 12}, d);
      Tensor w = tensor_of_bits(values(d, 6 * 3 * 3 * 3, 8, false), {6, 3, 3, 3}, d);
      return x.conv2d(w, std::nullopt, 1, {1}, {1}, {1}, true);
    });
    g_runs += compare_with_ref("grouped strided conv2d " + dn, [&] {
      Tensor x = tensor_of_bits(values(d, 2 * 4 * 11 * 9, 9, false), {2, 4, 11, 9}, d);
      Tensor w = tensor_of_bits(values(d, 6 * 2 * 3 * 2, 10, false), {6, 2, 3, 2}, d);
      RoundingScope scope(Round::Down);
      return x.conv2d(w, std::nullopt, 2, {2, 1}, {1}, {1, 0}, true);
    });
  }
  for (DType d : {DType::Float16, DType::BFloat16}) {
    const std::string dn(dtype_name(d));
    // matmul widens half operands to float32 (exactly) and rounds the result back once.
    g_runs += compare_with_ref("half matmul " + dn, [&] {
      Tensor x = tensor_of_bits(values(d, 9 * 14, 11, false), {9, 14}, d);
      return x.matmul(tensor_of_bits(values(d, 14 * 6, 12, false), {14, 6}, d), std::nullopt, true);
    });
    // REDUCE_MULACC in the half format itself runs the reference fold on every backend.
    g_runs += compare_with_ref("half fused_reduce " + dn, [&] {
      Tensor x = tensor_of_bits(values(d, 9 * 14, 13, true), {9, 1, 14}, d);
      Tensor y = tensor_of_bits(values(d, 6 * 14, 14, true), {1, 6, 14}, d);
      RoundingScope scope(Round::TowardZero);
      return prim::fused_reduce(x, y, {2});
    });
  }
  std::printf("fused batched/broadcast/conv: %d backend runs equal\n", g_runs - before);
}

}  // namespace
}  // namespace maroon::test
