// x @ w.T, every linear layer's forward product: B's columns lie a row of w apart and each runs
// along k, so its panels are packed as a transpose (src/cpu/gemm_pack.h, pack_b_transposed).
// Against the reference executor, bit for bit, on every SIMD target and 1, 2 and 3 threads:
// one row block (each task packs its own panels) and several (panels packed up front), panels
// cut short (N not a multiple of any panel width, down to one live column, which takes the
// general path), K below and not a multiple of the 16-k block, float32 and float64, NaN,
// infinities, signed zeros and subnormals, two rounding modes. Each case checks the path ran.
#include <gtest/gtest.h>

#include "cpu/gemm.h"
#include "harness.h"

namespace maroon::test {
namespace {

TEST(CpuBackend, TransposedWeightPacking) {
  // (M, K, N): several row blocks with 784-like K; one row block; K under one 16-k block; N past
  // a whole number of panels by one column (65, 129) or by less than a panel (70, 100).
  const int64_t shapes[][3] = {{130, 50, 70}, {128, 100, 129}, {40, 37, 65}, {7, 9, 100}, {200, 16, 33}};
  for (DType d : {DType::Float32, DType::Float64})
    for (const auto& s : shapes)
      for (Round r : {Round::NearestEven, Round::Up}) {
        const std::string what = "x @ w.T " + std::string(dtype_name(d)) + " " + std::to_string(s[0]) + "x" +
                                 std::to_string(s[1]) + "x" + std::to_string(s[2]) + " " + std::string(round_name(r));
        const int64_t before = cpu::gemm_transposed_b_panels();
        const int runs = g_runs;
        check(what, [&] {
          const uint64_t seed = static_cast<uint64_t>(s[0] * 31 + s[1] * 7 + s[2]);
          Tensor x = near_one_tensor(d, {s[0], s[1]}, seed, true);
          Tensor w = near_one_tensor(d, {s[2], s[1]}, seed + 1, true);
          RoundingScope scope(r);
          return x.matmul(w.permute({1, 0}));
        });
        EXPECT_GE(cpu::gemm_transposed_b_panels() - before, g_runs - runs) << what << ": a run packed no transposed panel";
      }
}

// float32 on x86 with AVX2 or AVX-512 packs the transposed panels through 8 x 8 register
// transposes (gemm.cpp's PackBTransposed): every such run takes it, with the column and k tails
// (N = 70, 33; K = 37, 9, 50) left to the scalar loop; the bits are the reference's. The 6 x 4
// tile's A panels (N = 128, 192 with more than one row block) go through registers too
// (PackAPanel), k tails and the last rows left to pack_a_panel.
TEST(CpuBackend, TransposedWeightPackingInRegisters) {
  const int64_t shapes[][3] = {{130, 50, 70}, {128, 100, 129}, {40, 37, 65}, {7, 9, 100},
                               {200, 16, 33}, {96, 64, 8}, {130, 37, 128}, {100, 50, 192}};
  const int64_t a_before = cpu::gemm_register_a_panels();
  std::vector<std::string> simd;
  for (const std::string& t : available_simd_targets())
    if (t == "avx2" || t == "avx512") simd.push_back(t);
  if (simd.empty()) GTEST_SKIP() << "no AVX2 on this machine";
  BackendSettings keep;
  for (const auto& s : shapes) {
    const std::string what = "x @ w.T float32 " + std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" +
                             std::to_string(s[2]);
    const uint64_t seed = static_cast<uint64_t>(s[0] * 13 + s[1] * 5 + s[2]);
    auto build = [&] {
      // No specials: with one in eight a NaN or an infinity nearly every sum of 37 terms is one,
      // and a misplaced element of A went unseen.
      Tensor x = near_one_tensor(DType::Float32, {s[0], s[1]}, seed);
      Tensor w = near_one_tensor(DType::Float32, {s[2], s[1]}, seed + 1);
      return x.matmul(w.permute({1, 0}));
    };
    check(what, build);
    for (const std::string& t : simd)
      for (int threads : {1, 2}) {
        set_backend(Backend::Cpu);
        set_simd_target(t);
        set_num_threads(threads);
        const int64_t before = cpu::gemm_register_transposed_panels();
        build().bytes();
        EXPECT_GT(cpu::gemm_register_transposed_panels(), before) << what << " on " << t << ": no register transpose";
      }
  }
  EXPECT_GT(cpu::gemm_register_a_panels(), a_before) << "no A panel packed through registers";
}

// The A panels of AVX-512's 12 x 2 tile (16 to 63 columns: too few for its wide tiles) and of
// AVX2's 4 x 2 tile go through registers eight k at a time too, then four (gemm.cpp's
// PackAPanel, float32): every run on those targets must take it; the k tails (K = 100, 37, 9)
// and the last rows (M not a multiple of 12) are packed element by element. Also with specials
// (copies keep every bit). Small products with N a multiple of the vector are read in place
// (gemm_direct.cpp), so these have other widths.
TEST(CpuBackend, TwelveAndFourRowPanelsPackedInRegisters) {
  const int64_t shapes[][3] = {{150, 100, 20}, {130, 37, 26}, {100, 9, 17}, {200, 300, 31}, {99, 64, 42}};
  int checked = 0;
  for (const auto& s : shapes)
    for (bool specials : {false, true}) {
      const std::string what = "x @ w float32 " + std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" +
                               std::to_string(s[2]) + (specials ? " with specials" : "");
      const uint64_t seed = static_cast<uint64_t>(s[0] * 7 + s[1] * 11 + s[2]);
      checked += check_path_on(
          what,
          [&] {
            Tensor x = near_one_tensor(DType::Float32, {s[0], s[1]}, seed, specials);
            Tensor w = near_one_tensor(DType::Float32, {s[1], s[2]}, seed + 1, specials);
            return x.matmul(w);
          },
          [] { return cpu::gemm_register_a_panels(); }, "pack A through registers",
          // K of 64 or more in one column panel: AVX-512 reads A in place (RowMajorAReadInPlace).
          s[1] < 64 ? std::vector<std::string>{"avx2", "avx512"} : std::vector<std::string>{"avx2"});
    }
  if (checked == 0) GTEST_SKIP() << "no AVX2 on this machine: compared, path not checked";
}

// A row-major A read in place by the tiles (gemm.cpp's AInPlace) wherever a task has one column
// panel and K is at least 64: the ONNX transformer's x @ W of 64 columns. On AVX-512 (float32,
// its MicroA tiles) every run must take it: x @ w and x @ w.T, rows past the last whole tile
// (the tile's extra rows read the last row again), K across the 16-k and the k-block boundaries,
// specials in round-up, and the FMA tiles (fused); elsewhere compared only.
TEST(CpuBackend, RowMajorAReadInPlace) {
  const int64_t shapes[][3] = {{200, 64, 64}, {171, 300, 64}, {250, 97, 64}};
  int checked = 0;
  for (const auto& s : shapes)
    for (int mode = 0; mode < 3; ++mode) {  // default; round-up with specials; fused
      const bool specials = mode == 1, fused = mode == 2;
      const std::string tag = std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]) +
                              (specials ? " round-up with specials" : fused ? " fused" : "");
      const uint64_t seed = static_cast<uint64_t>(s[0] * 5 + s[1] * 3 + s[2]);
      for (bool transposed : {false, true})
        checked += check_path_on(
            (transposed ? "x @ w.T float32 " : "x @ w float32 ") + tag,
            [&] {
              Tensor x = near_one_tensor(DType::Float32, {s[0], s[1]}, seed, specials);
              Tensor w = transposed ? near_one_tensor(DType::Float32, {s[2], s[1]}, seed + 1, specials).permute({1, 0})
                                    : near_one_tensor(DType::Float32, {s[1], s[2]}, seed + 1, specials);
              RoundingScope scope(specials ? Round::Up : Round::NearestEven);
              const FusedScope products(fused);
              return x.matmul(w);
            },
            [] { return cpu::gemm_a_in_place_tasks(); }, "read A in place", {"avx512"});
    }
  if (checked == 0) GTEST_SKIP() << "no AVX-512 on this machine: compared, path not checked";
}

// Products narrower than 16 columns with at least 16 rows (a classifier's logits, h @ w.T + b)
// are computed transposed (try_matmul): the few columns become rows. x @ w and x @ w.T, with
// and without a bias in the epilogue, float32 and float64, specials, two rounding modes, 2 to 15
// columns, one and several row blocks of the transposed product; each run must take that path.
TEST(CpuBackend, NarrowProductComputedTransposed) {
  const int64_t shapes[][3] = {{128, 512, 10}, {100, 50, 15}, {200, 20, 2}, {64, 300, 7}, {32, 2048, 10}, {24, 300, 5}};
  for (DType d : {DType::Float32, DType::Float64})
    for (const auto& s : shapes)
      for (Round r : {Round::NearestEven, Round::Up}) {
        const std::string tag = std::string(dtype_name(d)) + " " + std::to_string(s[0]) + "x" + std::to_string(s[1]) +
                                "x" + std::to_string(s[2]) + " " + std::string(round_name(r));
        const uint64_t seed = static_cast<uint64_t>(s[0] * 3 + s[1] * 17 + s[2]);
        check_path("x @ w " + tag, [&] {
          Tensor x = near_one_tensor(d, {s[0], s[1]}, seed), w = near_one_tensor(d, {s[1], s[2]}, seed + 1, true);
          RoundingScope scope(r);
          return x.matmul(w);
        }, cpu::matmul_narrow_transposes, "compute the narrow product transposed");
        check_path("x @ w.T + b " + tag, [&] {
          Tensor x = near_one_tensor(d, {s[0], s[1]}, seed + 2), w = near_one_tensor(d, {s[2], s[1]}, seed + 3);
          Tensor b = near_one_tensor(d, {s[2]}, seed + 4, true);
          RoundingScope scope(r);
          return x.matmul(w.permute({1, 0})).add(b);
        }, cpu::matmul_narrow_transposes, "compute the narrow product transposed");
      }
}

}  // namespace
}  // namespace maroon::test
