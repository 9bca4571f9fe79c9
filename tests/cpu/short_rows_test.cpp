// Elementwise kernels over leaves whose rows along the last axis are short (under 16): a pool
// window's (..., 2, 2) read through a permute, a broadcast maximum, a 6-wide image with a
// per-channel value, flips; every element size (bool, uint8, float16, int32, float32, float64),
// against the reference executor on every SIMD target and 1, 2 and 3 threads (harness.h). These
// leaves are copied a block of trailing axes at a time from a table of offsets
// (src/cpu/interp.cpp, AffineBlock; the pool windows' 4-byte elements two at a time, their
// offsets in adjacent pairs).
#include <gtest/gtest.h>

#include "cpu/acc_runs.h"
#include "cpu/kernel.h"
#include "harness.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

// Accumulator programs off for the scope: a float program then runs the tile loop, whose fills
// these tests check (with them on, a program whose leaves are all in place, broadcast or
// constant over runs goes a run at a time instead: cpu/acc_runs.h).
struct TileLoopOnly {
  TileLoopOnly() { cpu::set_acc_programs(false); }
  ~TileLoopOnly() { cpu::set_acc_programs(true); }
};

// Either path through a leaf broadcast over runs, counted: the tile loop's `fills`, or a run at
// a time.
std::function<int64_t()> or_by_runs(int64_t (*fills)()) {
  return [fills] { return fills() + cpu::acc_run_tasks(); };
}

TEST(CpuBackend, ElementwiseOverShortRows) {
  const int runs_before = g_runs;
  int cases = 0;
  for (DType d : {DType::Bool, DType::UInt8, DType::Float16, DType::Int32, DType::Float32, DType::Float64}) {
    const uint64_t seed = 900 + static_cast<uint64_t>(cases);
    // Pool windows: (n, c, h, w) cut into (n, c, h/2, w/2, 2, 2), compared with a broadcast
    // per window (max_pool2d's gradient mask), and the window product with a per-window value.
    check(std::string("pool windows ") + std::string(dtype_name(d)), [&] {
      Tensor x = random_bits_tensor({3, 5, 10, 14}, d, seed);
      Tensor m = random_bits_tensor({3, 5, 5, 7, 1, 1}, d, seed + 1);
      Tensor win = x.reshape({3, 5, 5, 2, 7, 2}).permute({0, 1, 2, 4, 3, 5});
      return win.eq(m.expand({3, 5, 5, 7, 2, 2})).cast(DType::Float32) + win.cast(DType::Float32);
    });
    // A 6-wide image plus a per-channel value (rows of 6, a block of 36 repeating one value),
    // and a flipped one (negative strides).
    check(std::string("6x6 planes ") + std::string(dtype_name(d)), [&] {
      Tensor x = random_bits_tensor({7, 9, 6, 6}, d, seed + 2);
      Tensor c = random_bits_tensor({1, 9, 1, 1}, d, seed + 3);
      return x.flip({2, 3}).cast(DType::Bool).where(x, c.expand({7, 9, 6, 6})).cast(DType::Float64) +
             x.permute({0, 1, 3, 2}).cast(DType::Float64);
    });
    // Rows of 3 under a permute, the whole tensor one block, an odd total (a partial last tile).
    check(std::string("rows of 3 ") + std::string(dtype_name(d)), [&] {
      Tensor x = random_bits_tensor({11, 13, 3}, d, seed + 4);
      return x.permute({1, 0, 2}).cast(DType::Float32) * x.flip({0}).permute({1, 0, 2}).cast(DType::Float32);
    });
    cases += 3;
  }
  std::printf("short rows: %d cases, %d backend runs equal to the reference\n", cases, g_runs - runs_before);
}

// Leaves broadcast along short rows (a softmax's row maximum and sum, a layernorm's mean) are
// filled run by run from the tile's number, no coordinates (src/cpu/interp.cpp, RowFill): rows of
// 2 to 128 (a partial last tile; rows of 2 and 4 by the unrolled fill, stepping forwards and,
// flipped, backwards), a broadcast over two trailing axes, a flipped leaf stepping
// backwards, every element size; each CPU run must fill by runs. Leaves whose outer axes do not
// step as one (a transposed or half-flipped row maximum) keep the copy and only compare bits.
TEST(CpuBackend, ElementwiseRowBroadcastFilledByRuns) {
  const int runs_before = g_runs;
  int cases = 0;
  auto fills = [] { return cpu::row_fill_tasks(); };
  for (DType d : {DType::Bool, DType::Float16, DType::Int32, DType::Float32, DType::Float64}) {
    const uint64_t seed = 950 + static_cast<uint64_t>(cases);
    const std::string dn(dtype_name(d));
    struct Rows { Shape x, m; };
    for (const Rows& r : {Rows{{5, 7, 64}, {5, 7, 1}}, Rows{{3, 5, 32}, {3, 5, 1}}, Rows{{7, 13, 2}, {7, 13, 1}},
                          Rows{{9, 5, 4}, {9, 5, 1}}, Rows{{3, 3, 128}, {3, 3, 1}}, Rows{{5, 8, 8}, {5, 1, 1}}}) {
      auto build = [&] {
        Tensor x = random_bits_tensor(r.x, d, seed);
        Tensor m = random_bits_tensor(r.m, d, seed + 1);
        return x.cast(DType::Float64) + m.expand(r.x).cast(DType::Float64) * m.flip({0, 1}).expand(r.x).cast(DType::Float64);
      };
      check_path_on("row broadcast " + shape_str(r.x) + " " + dn, build, or_by_runs(cpu::row_fill_tasks),
                    "fill a row broadcast by runs or go a run at a time", targets_to_test());
      {
        TileLoopOnly tiles;
        check_path_on("row broadcast, tile loop, " + shape_str(r.x) + " " + dn, build, fills,
                      "fill a row broadcast by runs", targets_to_test());
      }
      cases += 2;
    }
    check("row broadcast transposed " + dn, [&] {
      Tensor x = random_bits_tensor({5, 7, 64}, d, seed + 2);
      Tensor m = random_bits_tensor({7, 5, 1}, d, seed + 3);
      return x.cast(DType::Float32) * m.permute({1, 0, 2}).expand({5, 7, 64}).cast(DType::Float32) +
             m.permute({1, 0, 2}).flip({0}).expand({5, 7, 64}).cast(DType::Float32);
    });
    ++cases;
  }
  // The softmax itself, specials included. A float32 softmax of realized scores is one kernel
  // (row_softmax_test.cpp); scores scaled as they are read keep the four kernels filled by runs.
  for (DType d : {DType::Float32, DType::Float64}) {
    check_path_on("softmax rows of 64 " + std::string(dtype_name(d)), [&] {
      return (near_one_tensor(d, {6, 9, 64}, 960, true) * 2.0).softmax(-1);
    }, or_by_runs(cpu::row_fill_tasks), "fill a row broadcast by runs or go a run at a time", targets_to_test());
    ++cases;
  }
  std::printf("row broadcast: %d cases, %d backend runs equal to the reference\n", cases, g_runs - runs_before);
}

// Sums with few outputs over many terms (batchnorm's statistics) run as several tasks of at
// least 16 outputs (src/cpu/interp.cpp, ReducePlan): every reduce op, a fused source, float
// sums in the other rounding modes, 16 to 64 outputs.
TEST(CpuBackend, FewOutputReductionsSplitIntoTasks) {
  const int runs_before = g_runs;
  struct Few { Shape in; std::vector<int64_t> axes; };
  const Few fews[] = {{{40, 32, 8, 8}, {0, 2, 3}}, {{64, 48, 6, 6}, {0, 2, 3}}, {{3, 64, 700}, {0, 2}}, {{17, 2000}, {0}}};
  int cases = 0;
  for (DType d : {DType::Float32, DType::Float64, DType::Int32})
    for (ReduceOp op : kAllReduceOps)
      for (const Few& f : fews) {
        std::vector<Round> modes{Round::NearestEven};
        if (is_float(d) && op == ReduceOp::ADD) modes = {Round::NearestEven, Round::Down, Round::TowardZero};
        for (Round r : modes) {
          check(std::string("few outputs ") + shape_str(f.in) + " " + std::string(reduce_op_name(op)) + " " +
                    std::string(dtype_name(d)) + " " + std::string(round_name(r)),
                [&] {
                  Tensor x = random_bits_tensor(f.in, d, 1200 + static_cast<uint64_t>(cases));
                  RoundingScope scope(r);
                  return (op == ReduceOp::ADD ? x * x : x).reduce(op, f.axes);
                });
          ++cases;
        }
      }
  std::printf("few-output reductions: %d cases, %d backend runs equal to the reference\n", cases, g_runs - runs_before);
}

// A per-channel leaf over a batch's planes ((1, C, 1, 1) broadcast over (N, C, H, W): a bias, a
// batchnorm's mean), whose outer axes do not step as one, is filled a run of H * W positions at
// a time (src/cpu/interp.cpp, fill_run_segments): planes of 64 (four a tile) and of 400 (tiles
// across two planes), every element size, a flipped leaf, the ReLU as WHERE; each CPU run must
// fill by segments.
TEST(CpuBackend, ElementwiseChannelBroadcastFilledByRunSegments) {
  const int runs_before = g_runs;
  int cases = 0;
  auto segs = [] { return cpu::run_segment_tasks(); };
  for (DType d : {DType::Float16, DType::Int32, DType::Float32, DType::Float64}) {
    const uint64_t seed = 1210 + static_cast<uint64_t>(cases);
    const std::string dn(dtype_name(d));
    for (const Shape& s : {Shape{3, 5, 8, 8}, Shape{2, 3, 20, 20}, Shape{2, 4, 16, 17}}) {
      auto build = [&] {
        Tensor x = random_bits_tensor(s, d, seed);
        Tensor b = random_bits_tensor({1, s[1], 1, 1}, d, seed + 1);
        Tensor v = x.cast(DType::Float32) + b.expand(s).cast(DType::Float32) * b.flip({1}).expand(s).cast(DType::Float32);
        return prim::where(prim::cmplt(Tensor::full({}, 0.0, DType::Float32), v), v, 0.0);
      };
      check_path_on("channel broadcast " + shape_str(s) + " " + dn, build, or_by_runs(cpu::run_segment_tasks),
                    "fill a channel broadcast by run segments or go a run at a time", targets_to_test());
      {
        TileLoopOnly tiles;
        check_path_on("channel broadcast, tile loop, " + shape_str(s) + " " + dn, build, segs,
                      "fill a channel broadcast by run segments", targets_to_test());
      }
      cases += 2;
    }
  }
  std::printf("channel broadcast: %d cases, %d backend runs equal to the reference\n", cases, g_runs - runs_before);
}

}  // namespace
}  // namespace maroon::test
