// Products whose rows fit one row block (conv2d's output channels, at most kGemmMC), or two for a
// plain matmul: each task packs the B panels it alone reads (gemm_local.cpp).
#pragma once
#include <cstdint>

#include "cpu/epilogue.h"
#include "cpu/gemm.h"

namespace maroon::cpu {

// Row blocks a plain matmul (B's rows one stride apart along k) may have to run this way: up to
// two (an MLP's batch of 128 rows), B's panels packed by a task just before its row blocks read
// them, from cache; packed whole up front (1.6 MB for a 784 x 512 weight) they were read back
// from L3. conv2d's im2col B runs this way with one row block only (two are unmeasured).
constexpr int64_t kGemmLocalRowBlocks = 2;

// Whether g runs this way: one row block, or up to kGemmLocalRowBlocks of a plain matmul.
bool gemm_local_fits(const GemmArgs& g);
// Whether k steps through B by one stride (kB[k] - kB[k - 1] the same for every k).
bool k_affine(const int64_t* kB, int64_t K);

// Runs every task of g (gemm_local_fits) over batches [0, NB), a task per batch and column
// block, each packing its own columns of B and computing them for every row block, in rounding
// mode rnd; then epi, if any, on each of g's blocks as try_matmul does.
void run_local_tasks(DType d, const GemmArgs& g, int64_t NB, Round rnd, const Epilogue* epi);

// How many products ran this way in this process (the harness checks that its cases did).
int64_t gemm_local_runs();

}  // namespace maroon::cpu
