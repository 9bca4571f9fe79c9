// A sum of a product over some axes, seen as a batched matmul over strided memory: shared by the
// default matmul (REDUCE ADD over MUL, matmul.cpp) and the opt-in fused one (REDUCE_MULACC,
// fused_matmul.cpp). Axes of the product where only x moves are rows, where only y moves are
// columns, where both move are batches; the reduced axes, row-major, are k.
#pragma once
#include <memory>
#include <span>
#include <vector>

#include "core/graph.h"
#include "cpu/gemm.h"

namespace maroon::cpu {

// An operand as strided memory over the product's shape. A stack padded only in its bottom view
// (conv2d with padding) is read over a copy of that padded view (padded_base); another view that
// strides cannot express is copied out densely, its broadcast (stride-0) axes kept at stride 0
// so the copy is no larger than the data it reads (for conv2d's windows, im2col).
struct Operand {
  const void* data = nullptr;
  // The layout's inputs (its key and offsets), read by nothing after plan_matmul: a kept plan
  // (matmul_kept.h) leaves them empty.
  std::vector<int64_t> strides;
  int64_t offset = 0;
  std::shared_ptr<Buffer> dense;  // owns the copy, if one was made
  int64_t count = 0;              // elements readable from data (the buffer's or the copy's)
};

// The rows, columns and batches of a product whose operands move along mx and my.
struct Split {
  std::vector<int64_t> rows, cols, batch;
  int64_t M = 1, N = 1, NB = 1, K = 1;
};
Split split_axes(const Shape& s, const std::vector<int64_t>& kaxes, const std::vector<bool>& mx,
                 const std::vector<bool>& my);
// Axes along which an operand read through `view` changes (its strides after the plan, != 0).
std::vector<bool> moving_axes(const ShapeTracker& view);

// Offsets of every k, row, column and batch coordinate in x, y and the contiguous output: a
// function of the shapes, axes and strides alone (no data, dtype, SIMD target or thread count),
// so it is kept between calls (matmul_layouts.h) and shared read-only by the plans that use it.
struct MatmulLayout {
  Split split;
  std::vector<int64_t> kA, kB, rowA, colB, rowC, colC, batchA, batchB, batchC;
};

struct MatmulPlan {
  Operand x, y;
  Split split;
  // Views of the offsets in `layout` (swapped by transpose()).
  std::span<const int64_t> kA, kB, rowA, colB, rowC, colC, batchA, batchB, batchC;
  std::shared_ptr<const MatmulLayout> layout;
  bool fused = false;  // a REDUCE_MULACC: the tiles' steps are FMAs (GemmArgs::fused)
  // The kernel's arguments, writing into C, nc columns per task.
  GemmArgs args(void* C, int64_t nc) const;
  // The same sums as the product of y and x: rows become columns. Each output is still the sum
  // over k, in order, of the same products (a * b and b * a are the same bits).
  void transpose();
};

// The plan for the sum over kaxes of x * y, both read through views of one shape (broadcast
// axes at stride 0), into a contiguous output of out_shape. False when an operand would need a
// dense copy larger than the engine allows.
bool plan_matmul(const Buffer& xb, const ShapeTracker& xv, const Buffer& yb, const ShapeTracker& yv,
                 const std::vector<int64_t>& kaxes, const Shape& out_shape, MatmulPlan* plan);

// The plan for REDUCE node `out` as a matmul, over a MUL directly or through `chain` (movement
// nodes from out's source down to the MUL's consumer, as try_matmul takes them); false if it is
// not one or is small enough for the generic fold. May compute the MUL's elementwise sources.
// A REDUCE_MULACC (its two realized sources broadcast to one shape, no chain) is planned the same
// way, fused, where the target has an FMA instruction (fused_native_fma, gemm_fused.h).
// Which products it takes: Matrix, at least two rows and two columns (the packed tiles); Vector,
// one row or one column and at least two of the other (vector_product.h: depthwise conv2d and
// its weight gradient). A Vector plan is never kept (matmul_kept.h): a kept plan is found by the
// node and its factors alone, and the tiles must never take a vector's.
enum class ProductForm { Matrix, Vector };
constexpr int64_t kVectorMaxK = int64_t{1} << 22;  // the Vector form's longest sum
bool plan_matmul_node(Node& out, const std::vector<Node*>& chain, MatmulPlan* plan,
                      ProductForm form = ProductForm::Matrix);
// Whether a product of that split is one `form` takes (and not too small for any kernel).
bool product_takes(const Split& sp, ProductForm form);

// How many operands' dense copies were laid out with the source's unit-step axis last (attention's
// values; matmul_plan.cpp, dense_order), in this process (for the harness).
int64_t matmul_reordered_copies();
// How many operands were read over a copy of their padded bottom view (conv2d with padding;
// matmul_plan.cpp, padded_base), in this process (for the harness).
int64_t matmul_padded_bases();
// How many of those, padded in more than their bottom view (conv_transpose2d), were written a
// view at a time by the plane copier (matmul_plan.cpp's padded_levels), in this process.
int64_t matmul_padded_levels();

}  // namespace maroon::cpu
