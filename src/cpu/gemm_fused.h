// The fused matmul (issue 10): REDUCE_MULACC on the CPU backend. Each output is a chain of fused
// multiply-adds from +0 in increasing k, exactly src/ref's fold of MULACC: hardware FMA on targets
// that have it (AVX2, AVX-512, NEON/SVE), the reference soft-float MULACC on those that do not
// (SSE4, scalar): slower, never different.
#pragma once
#include <cstdint>

#include "core/graph.h"
#include "cpu/gemm.h"

namespace maroon::cpu {

// Columns per task: a task's B block (kGemmKC x NC) and C tile stay in L2 for both dtypes. Fixed
// per dtype, never per target or thread count.
constexpr int64_t fused_nc(DType d) { return d == DType::Float32 ? 256 : 128; }

// Realizes a REDUCE_MULACC node: the packed kernel for float32/float64, src/ref otherwise.
void run_fused_reduce(Node& out);

// The register tile of the dispatched target for the fused kernel: MR rows, NR columns.
void fused_panel_sizes(DType d, int64_t* mr, int64_t* nr);
// Whether the dispatched target multiplies and adds with one hardware rounding.
bool fused_native_fma();
// Computes task `task` (batch-major, then row blocks of kGemmMC, then column blocks of fused_nc)
// of batch `b` from A panels ([k][MR], rows past M zero) and B panels ([k][NR]) packed for that
// batch, rounding in `r` (the caller has set the hardware mode to r).
void fused_task(DType d, const GemmArgs& g, const void* ap, const void* bp, int64_t task, Round r);

}  // namespace maroon::cpu
