// Products whose rows fit one row block (conv2d's output channels, at most kGemmMC): each task
// packs the B panels it alone reads (gemm_local.cpp).
#pragma once
#include <cstdint>

#include "cpu/epilogue.h"
#include "cpu/gemm.h"

namespace maroon::cpu {

// Runs every task of g (g.tasks_m must be 1) over batches [0, NB), each packing its own columns
// of B, in rounding mode rnd; then epi, if any, on the task's block as try_matmul does.
void run_local_tasks(DType d, const GemmArgs& g, int64_t NB, Round rnd, const Epilogue* epi);

// How many products ran this way in this process (the harness checks that its cases did).
int64_t gemm_local_runs();

}  // namespace maroon::cpu
