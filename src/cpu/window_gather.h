// Window reductions whose outputs lie 2 or more elements apart in the source (softmax's row maxima
// and sums: each output a row of 64 adjacent elements, outputs 64 apart; 2x2 max-pools: outputs 2
// apart): SIMD across outputs (window_gather.cpp), for pool_reduce.cpp.
#pragma once
#include <cstdint>

#include "maroon/dtype.h"
#include "maroon/reduce.h"

namespace maroon::cpu {

// acc[t] = the left fold, from `identity`, of base[t * step + window[k]] for k < nwin, for t < n:
// each output in its own lane, combined as fastops' fold (fast_reduce) combines a lane, so the
// same bits. acc holds n elements (no slack needed); no element is read but the outputs' own.
// Only where 2 <= |step| and |step| * 64 < 2^31.
using WindowGatherFn = void (*)(const void* base, int64_t step, const int64_t* window, int nwin, int n,
                                uint64_t identity, void* acc);
// The kernel for (op, dtype), or null (float32 and float64 only).
WindowGatherFn window_gather(ReduceOp op, DType d);

// A 2 x 2 window at stride 2 (window {w0, w0 + 1, w1, w1 + 1}, outputs 2 apart: the CNN's
// max-pools), a task's runs of outputs in one call: run r's outputs [at[r], at[r + 1]) of acc
// start at element start[r] of base. Each output the same fold, so the same bits, as the
// WindowGatherFn's with step 2.
using Pool2x2RunsFn = void (*)(const void* base, const int64_t* window, const int64_t* start, const int* at,
                               int nruns, uint64_t identity, void* acc);
// The kernel for (op, dtype), or null (float32 and float64 only).
Pool2x2RunsFn pool2x2_runs(ReduceOp op, DType d);
// Whether window (nwin offsets) is such a window.
inline bool is_pool2x2(const int64_t* window, int nwin) {
  return nwin == 4 && window[1] == window[0] + 1 && window[3] == window[2] + 1;
}

}  // namespace maroon::cpu
