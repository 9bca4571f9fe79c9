// Small products read where they are (gemm_direct.cpp): no packing of A or B.
#pragma once
#include <cstdint>

#include "cpu/epilogue.h"
#include "cpu/gemm.h"

namespace maroon::cpu {

// Whether the dispatched target computes g in place: a small product (M, N and K at most
// kGemmDirectMax, at most one column block per task, a whole number of vectors) whose B columns
// are adjacent in memory, or a stride apart and each contiguous along k (x @ w.T, attention's
// q @ k^T per head: each task packs its panels of B, A is still read in place), and a whole
// number of vectors. A function of the shape, the layout and the target; whichever path runs,
// every output is the same fold, so the choice never changes a bit.
constexpr int64_t kGemmDirectMax = 160;
bool gemm_direct_fits(DType d, const GemmArgs& g);

// Runs every task of g (as try_matmul numbers them: batch-major, then row blocks, then column
// blocks) over batches [0, NB) in rounding mode rnd, reading A and B in place; then epi, if any,
// on the task's block. g must fit (gemm_direct_fits).
void run_direct_tasks(DType d, const GemmArgs& g, int64_t NB, Round rnd, const Epilogue* epi);

// How many products ran this way in this process (the harness checks that its cases did).
int64_t gemm_direct_runs();
// How many tasks packed a B panel of columns a stride apart, and how many ran a panel of fewer
// vectors than the widest tile by a tile of more rows (8 x 1 on AVX-512: p @ v per head), in
// this process (for the harness).
int64_t gemm_direct_packed_tasks();
int64_t gemm_direct_tall_tasks();

}  // namespace maroon::cpu
