// One table-driven harness: every elementwise op x dtype x shape class, reductions, matmuls and
// fused chains (a bias broadcast over planes among them), run on the CPU backend for every SIMD
// target this machine has and 1, 2 and 3 threads, compared with the reference executor by memcmp
// of the result bytes.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "harness.h"
#include "core/alu.h"
#include "maroon/backend.h"
#include "util.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

// Shape classes: how an operand of the logical shape (R, C) is made from a buffer.
enum class Cls { Contiguous, Broadcast, Permuted, Padded, Flipped, Shrunk, Zero, One, Large };
constexpr Cls kClasses[] = {Cls::Contiguous, Cls::Broadcast, Cls::Permuted, Cls::Padded,
                            Cls::Flipped, Cls::Shrunk, Cls::Zero, Cls::One};
const char* cls_name(Cls c) {
  static const char* n[] = {"contiguous", "broadcast", "permuted", "padded", "flipped",
                            "shrunk", "size0", "size1", "large"};
  return n[static_cast<int>(c)];
}
Shape cls_shape(Cls c) {
  switch (c) {
    case Cls::Zero: return {0, 13};
    case Cls::One: return {1, 1};
    case Cls::Large: return {3, 24001};
    default: return {7, 13};
  }
}

// An operand of class c and dtype d with random bits (operand k varies the broadcast axis).
Tensor operand(Cls c, DType d, uint64_t seed, int k) {
  Gen g(seed);
  auto data = [&](const Shape& s) {
    std::vector<uint64_t> v(static_cast<size_t>(numel(s)));
    for (auto& x : v) x = g.bits(d);
    return tensor_of_bits(v, s, d);
  };
  switch (c) {
    case Cls::Contiguous: case Cls::Zero: case Cls::One: case Cls::Large: return data(cls_shape(c));
    case Cls::Broadcast: return k % 2 ? data({7, 1}).expand({7, 13}) : data({1, 13}).expand({7, 13});
    case Cls::Permuted: return data({13, 7}).permute({1, 0});
    case Cls::Padded: return data({5, 11}).pad({{1, 1}, {2, 0}});
    case Cls::Flipped: return data({7, 13}).flip({0, 1});
    case Cls::Shrunk: return data({9, 15}).shrink({{1, 8}, {2, 15}});
  }
  return data({1});
}

Tensor apply(Op op, const std::vector<Tensor>& x, DType d) {
  switch (op) {
    case Op::CAST: return x[0].cast(is_float(d) ? DType::Int32 : DType::Float32);
    case Op::BITCAST: return x[0].bitcast(is_unsigned(d) || is_float(d) ? (bitwidth(d) == 8 ? DType::Int8 : bitwidth(d) == 16 ? DType::Int16 : bitwidth(d) == 32 ? DType::Int32 : DType::Int64) : (bitwidth(d) == 8 ? DType::UInt8 : bitwidth(d) == 16 ? DType::UInt16 : bitwidth(d) == 32 ? DType::Float32 : DType::Float64));
    case Op::WHERE: return prim::where(x[0].cast(DType::Bool), x[1], x[2]);
    default: return alu(op, x);
  }
}

TEST(CpuBackend, EveryElementwiseOpDtypeAndShapeClass) {
  int combos = 0;
  for (const OpInfo& info : all_ops()) {
    if (!is_elementwise(info.kind)) continue;
    for (DType d : kConcreteDTypes) {
      if (!op_accepts(info.op, d)) continue;
      std::vector<Cls> classes(std::begin(kClasses), std::end(kClasses));
      if (d == DType::Float32 || d == DType::Int32) classes.push_back(Cls::Large);
      for (Cls c : classes) {
        std::vector<Round> modes{Round::NearestEven};
        // Ops whose float results depend on the rounding mode (maroon/ops.def ROUNDS) run in
        // all four modes.
        if (is_float(d) && info.rounds && c == Cls::Contiguous)
          modes = {Round::NearestEven, Round::TowardZero, Round::Up, Round::Down};
        for (Round r : modes) {
          std::string what = std::string(info.name) + " " + std::string(dtype_name(d)) + " " +
                             cls_name(c) + " " + std::string(round_name(r));
          check(what, [&] {
            std::vector<Tensor> x;
            for (int k = 0; k < info.arity; ++k) x.push_back(operand(c, d, 1000 * combos + k, k));
            RoundingScope scope(r);
            return apply(info.op, x, d);
          });
          ++combos;
        }
      }
    }
  }
  EXPECT_GT(combos, 1500);
  std::printf("elementwise: %d op/dtype/shape/mode combinations x targets x threads = %d runs, all equal\n",
              combos, g_runs);
}

TEST(CpuBackend, ReductionsOverEveryAxisSet) {
  const int runs_before = g_runs;
  int combos = 0;
  for (DType d : kConcreteDTypes)
    for (ReduceOp op : kAllReduceOps)
      for (Cls c : kClasses)
        for (std::vector<int64_t> axes : {std::vector<int64_t>{0}, {1}, {0, 1}, {}}) {
          check(std::string("REDUCE ") + std::string(reduce_op_name(op)) + " " +
                    std::string(dtype_name(d)) + " " + cls_name(c) + " axes " + shape_str(axes),
                [&] { return operand(c, d, 77 + combos, 0).reduce(op, axes); });
          ++combos;
        }
  // Long folds, few outputs, each rounding mode; and a fused elementwise source.
  for (Round r : kAllRounds)
    for (DType d : {DType::Float32, DType::Float64, DType::Float16})
      check("long sum " + std::string(dtype_name(d)) + " " + std::string(round_name(r)), [&] {
        Tensor x = operand(Cls::Large, d, 5, 0);
        RoundingScope scope(r);
        return prim::mul(x, x).reduce(ReduceOp::ADD, {1});
      });
  EXPECT_EQ(combos, 13 * 3 * 8 * 4);
  std::printf("reductions: %d backend runs equal to the reference\n", g_runs - runs_before);
}

// Matmuls as the Tensor API writes them: x[M,K,1] * y[1,K,N] summed over K.
Tensor matmul(const Tensor& x, const Tensor& y) {
  int64_t M = x.shape()[0], K = x.shape()[1], N = y.shape()[1];
  return prim::mul(x.reshape({M, K, 1}).expand({M, K, N}), y.reshape({1, K, N}).expand({M, K, N}))
      .reduce(ReduceOp::ADD, {1})
      .reshape({M, N});
}

TEST(CpuBackend, MatmulEqualsTheFoldInEveryTargetAndThreadCount) {
  const int runs_before = g_runs;
  struct Size { int64_t m, k, n; };
  for (DType d : {DType::Float32, DType::Float64}) {
    // Sizes cover one and several row/column blocks (96 x 256) and k blocks (256), register
    // tiles kept in the output and edge tiles kept aside.
    // 32 x 40 x 96: 96 columns take narrow tiles in float32 on wide-tile targets (wide ones
    // would be half zeros) and wide ones in float64.
    for (Size s : {Size{1, 1, 1}, Size{7, 13, 5}, Size{33, 65, 17}, Size{32, 40, 96}, Size{100, 300, 130},
                   Size{20, 10, 300}, Size{5, 600, 3}, Size{110, 520, 270},
                   Size{800, 8, 520}}) {  // 9 row blocks: a task spans two column blocks
      for (bool transposed : {false, true}) {
        for (Round r : {Round::NearestEven, Round::Up}) {
          check("matmul " + std::string(dtype_name(d)) + " " + std::to_string(s.m) + "x" +
                    std::to_string(s.k) + "x" + std::to_string(s.n) + (transposed ? " x^T" : "") +
                    " " + std::string(round_name(r)),
                [&] {
                  Gen g(s.m * 1000 + s.n);
                  std::vector<uint64_t> xv(s.m * s.k), yv(s.k * s.n);
                  sf::Format f = fmt(d);
                  // Values near 1 with random signs (plus a few specials) keep sums interesting.
                  for (auto& v : xv) v = g.next() % 50 ? (encode(f, (g.next() % 2049) / 1024.0 - 1)) : g.bits(d);
                  yv = near_one(g, yv.size(), f);
                  Tensor x = transposed ? tensor_of_bits(xv, {s.k, s.m}, d).permute({1, 0})
                                        : tensor_of_bits(xv, {s.m, s.k}, d);
                  Tensor y = tensor_of_bits(yv, {s.k, s.n}, d);
                  RoundingScope scope(r);
                  return matmul(x, y);
                });
        }
      }
    }
  }
  // An operand no unmasked strided view expresses (padding, as padded conv2d windows have): the
  // kernel copies it out densely first.
  for (DType d : {DType::Float32, DType::Float64}) {
    check("matmul with a padded, reshaped operand " + std::string(dtype_name(d)), [&] {
      Gen g(4);
      const std::vector<uint64_t> xv = near_one(g, 40 * 36, fmt(d)), yv = near_one(g, 36 * 70, fmt(d));
      Tensor x = tensor_of_bits(xv, {40, 36}, d).pad({{2, 2}, {0, 0}}).reshape({44 * 36}).reshape({44, 36});
      return matmul(x, tensor_of_bits(yv, {36, 70}, d));
    });
  }
  // conv2d itself: unpadded windows are one strided view read in place, padded ones are copied
  // out; both in every rounding direction that matters, with a bias and batch.
  for (int64_t pad : {0, 1})
    for (Round r : {Round::NearestEven, Round::Up}) {
      check("conv2d 3->5 3x3 pad " + std::to_string(pad) + " " + std::string(round_name(r)), [&] {
        Gen g(9 + pad);
        const std::vector<uint64_t> xv = near_one(g, 2 * 3 * 11 * 9), wv = near_one(g, 5 * 3 * 3 * 3);
        RoundingScope scope(r);
        return tensor_of_bits(xv, {2, 3, 11, 9}, DType::Float32)
            .conv2d(tensor_of_bits(wv, {5, 3, 3, 3}, DType::Float32), std::nullopt, 1, {1}, {1}, {pad});
      });
    }
  // Wide images: 18 positions a row is computed transposed (weights times windows, whole output
  // rows written in place, the image packed in runs); 14 is not, and its 12-row register panels
  // within one output row are packed as adjacent elements.
  for (int64_t width : {20, 16})
    for (Round r : {Round::NearestEven, Round::Down}) {
      check("conv2d 2->8 3x3 on 6x" + std::to_string(width) + " " + std::string(round_name(r)), [&] {
        Gen g(20 + width);
        const std::vector<uint64_t> xv = near_one(g, 2 * 2 * 6 * width), wv = near_one(g, 8 * 2 * 3 * 3);
        RoundingScope scope(r);
        return tensor_of_bits(xv, {2, 2, 6, width}, DType::Float32)
            .conv2d(tensor_of_bits(wv, {8, 2, 3, 3}, DType::Float32));
      });
    }
  // conv2d's gradients: the input's is a matmul of a permuted product (the movement ops are
  // pushed onto its factors), pool's gradient a sum through a stack of padded views.
  for (Round r : {Round::NearestEven, Round::Down}) {
    check("conv2d and max_pool2d gradients " + std::string(round_name(r)), [&] {
      Gen g(12);
      const std::vector<uint64_t> xv = near_one(g, 2 * 3 * 12 * 12), wv = near_one(g, 8 * 3 * 3 * 3);
      RoundingScope scope(r);
      Tensor x = tensor_of_bits(xv, {2, 3, 12, 12}, DType::Float32);
      Tensor w = tensor_of_bits(wv, {8, 3, 3, 3}, DType::Float32);
      Tensor y = x.conv2d(w).relu().max_pool2d();
      (y * y).sum().backward();
      return x.grad()->flatten().cat({w.grad()->flatten()});
    });
  }
  // Several reduced axes are one k, in row-major order (conv2d's (cin, kh, kw)).
  for (Round r : {Round::NearestEven, Round::Down}) {
    check("matmul over three reduced axes " + std::string(round_name(r)), [&] {
      Gen g(8);
      const std::vector<uint64_t> xv = near_one(g, 40 * 3 * 5 * 5), wv = near_one(g, 6 * 3 * 5 * 5);
      Tensor x = tensor_of_bits(xv, {40, 1, 3, 5, 5}, DType::Float32).expand({40, 6, 3, 5, 5});
      Tensor w = tensor_of_bits(wv, {1, 6, 3, 5, 5}, DType::Float32).expand({40, 6, 3, 5, 5});
      RoundingScope scope(r);
      return prim::mul(x, w).reduce(ReduceOp::ADD, {2, 3, 4});
    });
  }
  // An operand that is itself an unrealized expression (a backward pass's relu'(h) * grad).
  check("matmul over a fused expression operand", [] {
    Gen g(6);
    const std::vector<uint64_t> xv = near_one(g, 50 * 80), yv = near_one(g, 80 * 30);
    Tensor x = tensor_of_bits(xv, {50, 80}, DType::Float32);
    Tensor relu = prim::where(prim::cmplt(Tensor::full({}, 0.0, DType::Float32), x), prim::mul(x, 3.0), 0.0);
    return matmul(relu, tensor_of_bits(yv, {80, 30}, DType::Float32));
  });
  // Batched: [B, M, K] @ [B, K, N].
  check("batched matmul float32", [] {
    Gen g(9);
    const std::vector<uint64_t> xv = near_one(g, 3 * 40 * 70), yv = near_one(g, 3 * 70 * 50);
    Tensor x = tensor_of_bits(xv, {3, 40, 70, 1}, DType::Float32).expand({3, 40, 70, 50});
    Tensor y = tensor_of_bits(yv, {3, 1, 70, 50}, DType::Float32).expand({3, 40, 70, 50});
    return prim::mul(x, y).reduce(ReduceOp::ADD, {2});
  });
  // Batch innermost: neither the output's rows nor its columns are adjacent, so every result
  // is scattered from the kernel's scratch tile (conv2d's output, computed transposed, is the
  // case with adjacent rows; the conv2d cases above take it).
  check("matmul with the batch axis innermost", [] {
    Gen g(10);
    const std::vector<uint64_t> xv = near_one(g, 40 * 70 * 2), yv = near_one(g, 70 * 50 * 2);
    Tensor x = tensor_of_bits(xv, {40, 70, 1, 2}, DType::Float32).expand({40, 70, 50, 2});
    Tensor y = tensor_of_bits(yv, {1, 70, 50, 2}, DType::Float32).expand({40, 70, 50, 2});
    return prim::mul(x, y).reduce(ReduceOp::ADD, {1});
  });
  std::printf("matmul: %d backend runs equal to the reference\n", g_runs - runs_before);
}

// A layer's forward and backward pass (products, a bias, ReLU, sums) while another thread keeps a
// core busy: the pool's threads then start late, are preempted mid-region and steal each other's
// tasks (src/cpu/threads.cpp), and the bits must still be the reference's on 1, 2 and 3 threads.
TEST(CpuBackend, LayerGradientsBesideABusyThread) {
  std::atomic<bool> stop{false};
  std::thread busy([&] {
    volatile uint64_t x = 0;
    while (!stop.load(std::memory_order_relaxed)) x = x + 1;
  });
  check("layer gradients beside a busy thread", [&] {
    Gen g(31);
    const std::vector<uint64_t> xv = near_one(g, 100 * 300), wv = near_one(g, 300 * 130), bv = near_one(g, 130);
    Tensor x = tensor_of_bits(xv, {100, 300}, DType::Float32);
    Tensor w = tensor_of_bits(wv, {300, 130}, DType::Float32);
    Tensor b = tensor_of_bits(bv, {130}, DType::Float32);
    Tensor y = (matmul(x, w) + b).relu();
    (y * y).sum().backward();
    return w.grad()->flatten().cat({b.grad()->flatten(), x.grad()->flatten()});
  });
  stop = true;
  busy.join();
}

TEST(CpuBackend, FusedChains) {
  const int runs_before = g_runs;
  for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    check("fused chain " + std::string(dtype_name(d)), [&] {
      Tensor a = operand(Cls::Large, d, 1, 0), b = operand(Cls::Large, d, 2, 1);
      // relu(a*b + 1) then sqrt of it, a comparison and a select: one kernel, no intermediates.
      Tensor h = prim::add(prim::mul(a, b), 1.0);
      Tensor relu = prim::where(prim::cmplt(Tensor::full({}, 0.0, d), h), h, 0.0);
      return prim::where(prim::cmpne(relu, 0.0), relu.sqrt().reciprocal(), prim::maximum(a, b));
    });
  }
  check("chain through a view of a reduction", [] {
    Tensor a = operand(Cls::Contiguous, DType::Float32, 3, 0);
    Tensor m = a.reduce(ReduceOp::MAX, {1});  // (7,1)
    return prim::add(a, prim::mul(m.expand({7, 13}), -1.0)).exp2().reduce(ReduceOp::ADD, {1});  // softmax-like
  });
  // A per-channel bias over planes (conv2d's bias add, then relu): the leaf is constant over runs
  // of a plane, read as one filled tile when a tile lies inside a run. Planes of 16x16 (runs of
  // one tile), 17x17 (tiles straddling runs), 40x40 (several tiles per run) and 5x5 (shorter runs
  // than a tile: gathered as before), with a bias that holds NaN, infinities and signed zeros.
  for (DType d : {DType::Float32, DType::Float64, DType::Int32})
    for (int64_t hw : {16, 17, 40, 5})
      check("bias over " + std::to_string(hw) + "x" + std::to_string(hw) + " planes " + std::string(dtype_name(d)), [&] {
        Gen g(40 + hw);
        std::vector<uint64_t> xb(static_cast<size_t>(3 * 5 * hw * hw)), bb(5);
        for (auto& v : xb) v = g.bits(d);
        for (auto& v : bb) v = g.bits(d);
        Tensor x = tensor_of_bits(xb, {3, 5, hw, hw}, d), b = tensor_of_bits(bb, {1, 5, 1, 1}, d);
        Tensor h = prim::add(x, b.expand({3, 5, hw, hw}));
        return prim::where(prim::cmplt(Tensor::full({}, 0.0, d), h), h, 0.0);
      });
  // Leaves through one masked view (pads), copied row by row: the gradient of a chunk (the
  // GPT's q, k, v split: three permuted pieces padded back along an outer axis and added) and
  // pads on the last axis (segments partly inside) and on both, with tiles straddling rows, on
  // elements of 1, 2, 4 and 8 bytes.
  for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::UInt8})
    check("padded pieces added " + std::string(dtype_name(d)), [&] {
      Gen g(7);
      auto piece = [&](int64_t at) {
        std::vector<uint64_t> v(static_cast<size_t>(6 * 4 * 10 * 9));
        for (auto& x : v) x = g.bits(d);
        // (6,4,10,9) -> (6,10,4,9) -> (6,10,1,4,9), padded to 3 along axis 2
        return tensor_of_bits(v, {6, 4, 10, 9}, d).permute({0, 2, 1, 3}).reshape({6, 10, 1, 4, 9})
            .pad({{0, 0}, {0, 0}, {at, 2 - at}, {0, 0}, {0, 0}});
      };
      std::vector<uint64_t> w(static_cast<size_t>(7 * 33 * 5));
      for (auto& x : w) x = g.bits(d);
      Tensor edge = tensor_of_bits(w, {7, 33, 5}, d).pad({{1, 2}, {0, 0}, {3, 1}}).reshape({10, 33, 9}).shrink({{0, 10}, {0, 33}, {0, 9}});
      Tensor sum = prim::add(prim::add(piece(0), piece(1)), piece(2)).reshape({6 * 10 * 3 * 4, 9});
      return prim::add(sum.shrink({{0, 330}, {0, 9}}).reshape({10, 33, 9}), edge);
    });
  std::printf("fused chains: %d backend runs equal to the reference\n", g_runs - runs_before);
}

// GATHER's index operand for x of shape xs along `axis` (5 positions), values in [-2, size + 2):
// kind 0 the same along the rest of the row (int32, stretched: the row-copy path), kind 1 one per
// element (int64), kind 2 one per element through a permuted view (uint8), kind 3 padded (int16:
// padding reads as index 0).
Tensor gather_index(int kind, const Shape& xs, int64_t axis, uint64_t seed) {
  Gen g(seed);
  Shape is = xs;
  is[axis] = 5;
  auto values = [&](int64_t n) {
    std::vector<int64_t> v(static_cast<size_t>(n));
    for (auto& x : v) x = static_cast<int64_t>(g.next() % static_cast<uint64_t>(xs[axis] + 4)) - 2;
    return v;
  };
  auto as = [&](DType d, const Shape& s) {
    std::vector<uint64_t> bits;
    for (int64_t x : values(numel(s))) bits.push_back(static_cast<uint64_t>(x) & (~uint64_t{0} >> (64 - bitwidth(d))));
    return tensor_of_bits(bits, s, d);
  };
  switch (kind) {
    case 0: { Shape s(xs.size(), 1); s[axis] = 5; return as(DType::Int32, s); }
    case 1: return as(DType::Int64, is);
    case 2: return as(DType::UInt8, {is[1], is[0]}).permute({1, 0});
    default: return as(DType::Int16, {is[0], is[1] - 1}).pad({{0, 0}, {1, 0}});
  }
}

// Every op of kind Index (GATHER) on every dtype, x shape class, axis and index layout, then a
// table drawn by rows large enough to split into several tasks.
TEST(CpuBackend, GatherEveryDtypeShapeClassAndIndexLayout) {
  const int runs_before = g_runs;
  int combos = 0;
  for (const OpInfo& info : all_ops()) {
    if (info.kind != OpKind::Index) continue;
    ASSERT_EQ(info.op, Op::GATHER) << "no harness case for " << info.name;
    for (DType d : kConcreteDTypes)
      for (Cls c : kClasses)
        for (int64_t axis : {0, 1})
          for (int kind = 0; kind < 4; ++kind) {
            check("GATHER " + std::string(dtype_name(d)) + " " + cls_name(c) + " axis " + std::to_string(axis) +
                      " index " + std::to_string(kind), [&] {
              Tensor x = operand(c, d, 500 + combos, 0);
              return prim::gather(x, gather_index(kind, x.shape(), axis, 900 + combos), axis);
            });
            ++combos;
          }
  }
  EXPECT_EQ(combos, 13 * 8 * 2 * 4);
  for (DType d : {DType::Float32, DType::UInt8, DType::Float64})
    check("GATHER rows of a large table " + std::string(dtype_name(d)), [&] {
      Gen g(11);
      std::vector<uint64_t> xv(3000 * 40), iv(2000);
      for (auto& v : xv) v = g.bits(d);
      for (auto& v : iv) v = g.next() % 3000;
      Tensor x = tensor_of_bits(xv, {3000, 40}, d);
      return prim::gather(x, tensor_of_bits(iv, {2000, 1}, DType::Int64), 0);
    });
  std::printf("gather: %d backend runs equal to the reference\n", g_runs - runs_before);
}

// Gathers whose rows run over several axes (rank 4) and are one element long (along the last
// axis) or 300 (along the third): interpolate's, nearest and linear, and a gather along the
// third axis; tasks of 16,384 rows start inside a row of coordinates, so the row copier's
// running coordinates (gather.cpp) start from a division and carry across axes.
TEST(CpuBackend, GatherRowsOverSeveralAxes) {
  for (const char* mode : {"nearest", "linear"})
    check(std::string("interpolate ") + mode, [&] {
      return near_one_tensor(DType::Float32, {3, 5, 7, 11}, 40).interpolate({13, 300}, mode);
    });
  check("gather along axis 2 of (3,5,7,300)", [] {
    Tensor x = near_one_tensor(DType::Float32, {3, 5, 7, 300}, 41);
    std::vector<uint64_t> iv;
    for (int64_t i = 0; i < 9; ++i) iv.push_back(static_cast<uint64_t>((i * 5 + 3) % 9 - 1) & 0xffffffffu);
    return prim::gather(x, tensor_of_bits(iv, {1, 1, 9, 1}, DType::Int32), 2);
  });
}

// binary32 CMPLT, CMPEQ, CMPNE and WHERE run a vector at a time (src/cpu/fastops.cpp): every pair
// of NaN, signed zeros, infinities, a subnormal and ordinary values (NaN != NaN is true, NaN < x
// and NaN == NaN false), over more than a tile, and WHERE choosing by each result.
TEST(CpuBackend, FloatComparisonsOnSpecials) {
  const uint32_t specials[] = {0x7FC00000u, 0xFFC00001u, 0x7F800001u, 0x00000000u, 0x80000000u, 0x7F800000u,
                               0xFF800000u, 0x00000001u, 0x3F800000u, 0xBF800000u, 0x3F800001u};
  std::vector<uint64_t> a, b;
  for (int rep = 0; rep < 5; ++rep)
    for (uint32_t x : specials)
      for (uint32_t y : specials) a.push_back(x), b.push_back(y);
  const Shape s{static_cast<int64_t>(a.size())};
  for (Op op : {Op::CMPLT, Op::CMPEQ, Op::CMPNE})
    check(std::string(op_name(op)) + " float32 specials, and WHERE by it", [&] {
      Tensor x = tensor_of_bits(a, s, DType::Float32), y = tensor_of_bits(b, s, DType::Float32);
      Tensor c = alu(op, {x, y});
      return c.where(x, y).add(c.cast(DType::Float32));
    });
}

}  // namespace
}  // namespace maroon::test
