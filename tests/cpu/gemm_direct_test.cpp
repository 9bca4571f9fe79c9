// Small products read in place (src/cpu/gemm_direct.cpp) against the reference executor, bit for
// bit, on every SIMD target and 1, 2 and 3 threads: tiles whose rows all exist and the last
// rows of a task (repeated, their sums dropped), one to four vectors of columns, one and two row
// blocks, k from 1 to 160, A transposed, batches, output columns scattered (written through the
// scratch tile) and the same product computed transposed, a bias and ReLU epilogue; NaN,
// infinities, signed zeros and subnormals; every rounding mode. N is a multiple of 16, a whole
// number of vectors on every target, so each case also checks that the path ran; on AVX-512
// two-vector panels must run the tall 8-row tile.
#include <gtest/gtest.h>

#include "cpu/gemm_direct.h"
#include "harness.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

void check_direct(const std::string& what, const std::function<Tensor()>& build) {
  check_path(what, build, cpu::gemm_direct_runs, "read in place");
}

std::string shape_tag(DType d, int64_t m, int64_t k, int64_t n, Round r) {
  return std::string(dtype_name(d)) + " " + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n) +
         " " + std::string(round_name(r));
}

TEST(CpuBackend, MatmulDirect) {
  const int runs_before = g_runs;
  // {M, K, N}: partial last row tiles (7, 33, 100, 150), full ones (6, 96), two row blocks
  // (100, 128, 150, 160), 1 to 4 vectors in the last column panel, k = 1 and past 128; one row
  // block past 64^3 (91 x 100 x 128, 64 x 96 x 80) runs as two column tasks of 64, 48 and 32.
  const int64_t shapes[][3] = {{64, 64, 64}, {32, 32, 32}, {7, 40, 48}, {33, 65, 80}, {100, 17, 96},
                               {26, 1, 160}, {6, 150, 16}, {150, 3, 112}, {128, 128, 128}, {160, 160, 160},
                               {91, 100, 128}, {64, 96, 80}};
  for (DType d : {DType::Float32, DType::Float64})
    for (const auto& s : shapes)
      for (Round r : kAllRounds) {
        if (s[0] != 33 && r != Round::NearestEven && r != Round::Down) continue;
        if (d == DType::Float64 && s[0] == 160 && r != Round::NearestEven) continue;  // the reference is slow
        const uint64_t seed = static_cast<uint64_t>(s[0] * 13 + s[2] + static_cast<int>(r) * 7);
        check_direct("matmul " + shape_tag(d, s[0], s[1], s[2], r), [&] {
          Tensor x = near_one_tensor(d, {s[0], s[1]}, seed, true), y = near_one_tensor(d, {s[1], s[2]}, seed + 1, true);
          RoundingScope scope(r);
          return x.matmul(y);
        });
        if (s[0] == 33 || s[0] == 64)
          check_direct("matmul x^T " + shape_tag(d, s[0], s[1], s[2], r), [&] {
            Tensor x = near_one_tensor(d, {s[1], s[0]}, seed + 2).permute({1, 0});
            RoundingScope scope(r);
            return x.matmul(near_one_tensor(d, {s[1], s[2]}, seed + 3, true));
          });
      }
  check_direct("batched 3x(40x70 @ 70x32)", [] {
    return near_one_tensor(DType::Float32, {3, 40, 70}, 5, true).matmul(near_one_tensor(DType::Float32, {3, 70, 32}, 6));
  });
  // out[n, m] = sum over k of x[m, k] * y[k, n]: the product's rows (m) are adjacent in the
  // output, its columns (n) a row apart. With x stored m-major its rows are read along k and the output's
  // columns are scattered (the scratch tile); stored k-major, the product runs transposed.
  for (bool x_k_major : {false, true})
    for (Round r : {Round::NearestEven, Round::Up})
      check_direct(std::string("scattered output, x ") + (x_k_major ? "k-major " : "m-major ") +
                       std::string(round_name(r)),
                   [&] {
                     const int64_t M = 48, K = 36, N = 32;
                     Tensor x = x_k_major ? near_one_tensor(DType::Float32, {K, M}, 7, true)
                                          : near_one_tensor(DType::Float32, {M, K}, 7, true).permute({1, 0});
                     Tensor y = near_one_tensor(DType::Float32, {K, N}, 8, true).permute({1, 0});  // n adjacent
                     RoundingScope scope(r);
                     return prim::mul(x.reshape({1, K, M}).expand({N, K, M}), y.reshape({N, K, 1}).expand({N, K, M}))
                         .reduce(ReduceOp::ADD, {1});
                   });
  for (Round r : {Round::NearestEven, Round::Down})
    check_direct("bias and relu epilogue " + std::string(round_name(r)), [&] {
      Tensor x = near_one_tensor(DType::Float32, {50, 64}, 11, true), w = near_one_tensor(DType::Float32, {64, 96}, 12);
      Tensor b = near_one_tensor(DType::Float32, {96}, 13, true);
      RoundingScope scope(r);
      return x.matmul(w).add(b).relu();
    });
  // Two vectors of columns (32 on AVX-512) run the tall 8-row tile: whole tiles (32 rows), a
  // last tile of 6 live rows (30), the 32-column panel after a 64-column one (96), fused and not.
  const int64_t tall[][3] = {{32, 32, 32}, {30, 50, 32}, {44, 20, 96}};
  for (const auto& s : tall)
    for (bool fused : {false, true})
      for (Round r : {Round::NearestEven, Round::Up}) {
        const std::string what = std::string(fused ? "fused " : "") + "two-vector tile " +
                                 shape_tag(DType::Float32, s[0], s[1], s[2], r);
        check_path_on(
            what,
            [&] {
              Tensor x = near_one_tensor(DType::Float32, {s[0], s[1]}, 31, true);
              Tensor y = near_one_tensor(DType::Float32, {s[1], s[2]}, 32, true);
              RoundingScope scope(r);
              return x.matmul(y, std::nullopt, fused);
            },
            [] { return cpu::gemm_direct_tall_tasks(); }, "run the tall tile",
            {"avx512"});  // where two vectors are 32 columns
      }
  std::printf("matmul read in place: %d backend runs equal to the reference\n", g_runs - runs_before);
}

}  // namespace
}  // namespace maroon::test
