// Products with one column: out[b, i] = the sum over k of A[b, i, k] * w[b, k] (depthwise conv2d:
// a batch per channel, a row per output position, k over the window; a matrix times a vector).
// The packed tiles need two rows and two columns, so these went to the generic fold, which
// evaluated the product element by element through the window's view: a 3x3 depthwise conv2d on
// (32, 64, 32, 32) took 67 ms on one thread, 181 ms padded (PyTorch: 1.7 and 6.2).
// Here a vector of rows is folded at a time, one lane per output, in the spec's order (from +0,
// increasing k; REDUCE ADD over MUL rounds the product then the sum, REDUCE_MULACC one FMA a
// step), so the bits are the reference's on every target (vector_product_simd.cpp).
#pragma once
#include <cstdint>
#include <vector>

#include "core/graph.h"
#include "maroon/dtype.h"

namespace maroon::cpu {

// Realizes REDUCE node `out` (ADD over a MUL, through `chain` as try_matmul takes it, or a
// REDUCE_MULACC with no chain) when it is a product of that form (ProductForm::Vector,
// matmul_plan.h) whose factors are realized; false otherwise, and then nothing was computed.
// With `epi` (epilogue.h: the elementwise kernel that reads this product, depthwise conv2d's bias
// and ReLU6), each task's rows are rewritten by it right after the task computed them, while they
// are in cache, and the epilogue's node holds the result instead of `out`.
class Epilogue;
bool try_vector_product(Node& out, const std::vector<Node*>& chain, const Epilogue* epi = nullptr);
// How many reductions it has computed in this process (the harness checks its cases took it).
int64_t vector_product_runs();
// How many of them gathered their rows a vector at a time (vector_rows: rows in short runs).
int64_t vector_product_gathered_rows();

// One run of n outputs: C[t] = fold over k < K of A[a0 + t * astep + kA[k]] * w[k], for t < n.
// A holds acount elements; a vector may read any of them (lanes past n are never stored), never
// past them. kmin and kmax bound kA. |astep| * lanes < 2^31.
struct VectorRun {
  const void* A;
  int64_t a0, astep, acount;
  const int64_t* kA;
  int64_t kmin, kmax;
  int K;
  const void* w;
  int n;
  void* C;
};
// The dispatched target's kernel for float32 or float64 (`fused` only where fused_native_fma()),
// for n runs that share A, kA, K, w, acount, kmin and kmax (one task's): their vectors folded
// several at a time (independent accumulators; the same bits as one vector at a time).
void vector_runs(DType d, bool fused, const VectorRun* r, int n);

// n outputs at any offsets: C[rowC[t]] = fold over k < K of A[a0 + rowA[t] + kA[k]] * w[k], for
// t < n. |rowA[t] - rowA[t']| < 2^31. A holds acount elements, kmin and kmax bound kA (as for
// VectorRun).
struct VectorRows {
  const void* A;
  int64_t a0, acount;
  const int64_t *rowA, *kA;
  int64_t kmin, kmax;
  int K;
  const void* w;
  int n;
  void* C;
  const int64_t* rowC;
};
void vector_rows(DType d, bool fused, const VectorRows& r);

// out[i] = base[off[i]] for i < n, elements of sz bytes (4 or 8): a factor's elements gathered
// into a contiguous column (a batch's weights, a tile row's operand), copied typed (a memcpy of a
// size known only at run time was a libc call per element: 7% of a depthwise weight gradient).
void gather_offsets(size_t sz, const void* base, const int64_t* off, int64_t n, void* out);

// A row of a product with k of one (matmul_fold.cpp's outer-product tiles): out[t] = +0 + round(s *
// v[t]) or, fused, fma(s, v[t], +0), for t < n, in the caller's hardware rounding mode; NaNs as
// the hardware leaves them (the fold that reads them makes them canonical).
void outer_row(DType d, bool fused, const void* s, const void* v, int64_t n, void* out);

}  // namespace maroon::cpu
