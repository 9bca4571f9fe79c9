// A long sum onto few outputs: conv2d's first-layer weight gradient (beautiful_mnist: 32 output
// channels by 25 window positions, k = 295k over the batch's positions at batch 512).
#pragma once
#include <cstdint>

#include "cpu/gemm.h"
#include "maroon/dtype.h"
#include "maroon/round.h"

namespace maroon::cpu {

// Whether g (one batch, float32 or float64) runs here: few outputs (M * N at most kLongKOutputs)
// over a long k (at least kLongKMinK), with at least 8 rows of one operand a stride apart, each
// contiguous along k in runs (the lanes' side: conv2d's output gradient). The packed kernels' tiles held
// two vectors of columns for 13 (the columns split in two tasks), and each task packed its
// columns for the whole k (37.7 MB at batch 512) and read every row of the other operand.
// Up to 4,096 outputs: a padded 16 -> 16 3x3 conv2d's weight gradient (16 x 144 outputs over
// k = 32,768 at batch 32), one task of one vector here on AVX-512 split in two, took 2.47 ms on
// one thread and 1.36 on two against 2.80 and 2.74 through the packed tiles (fused; 50 x 50 over
// 4,200 and 64 x 64 over 8,192 were level or faster too, /tmp drivers, session 28); 2,048 had
// been the first layer's bound.
constexpr int64_t kLongKOutputs = 4096, kLongKMinK = 4096;
bool gemm_longk_fits(DType d, const GemmArgs& g, int64_t NB);

// Computes g (gemm_longk_fits) in rounding mode rnd: a task per vector of the lanes' rows, which
// packs them a k block at a time into cache and runs tiles of up to 13 of the other operand's
// rows over each block. Every output is the same fold as the packed kernel's (from +0, in k
// order, one step per k: multiply then add, or one FMA when g.fused), NaN made canonical at the
// end, so not a bit differs from any other path.
void run_longk_tasks(DType d, const GemmArgs& g, Round rnd);

// How many products ran this way in this process (the harness checks that its cases did).
int64_t gemm_longk_runs();

}  // namespace maroon::cpu
