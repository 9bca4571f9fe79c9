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

}  // namespace maroon::cpu
