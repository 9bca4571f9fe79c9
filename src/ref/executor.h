// The scalar reference executor: the oracle every fast path is compared with, bit for bit.
// Portable C++ only: no intrinsics, no libm, no dependence on the FPU's state (floats are done in
// software, src/float/). Obviously correct beats fast here.
#pragma once
#include "core/graph.h"

namespace maroon::ref {

// Computes node `n` from its realized sources; sets n.buffer and n.view.
void execute(Node& n);
// The view movement node `n` makes of a source read through `v`.
ShapeTracker movement_view(const Node& n, const ShapeTracker& v);

}  // namespace maroon::ref
