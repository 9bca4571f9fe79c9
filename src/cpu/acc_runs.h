// Accumulator programs over leaves read in place, broadcast, or constant over runs of positions,
// evaluated a run at a time (acc_runs.cpp).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "cpu/fastops.h"
#include "cpu/kernel.h"
#include "cpu/run_cursor.h"

namespace maroon::cpu {

// Whether run_acc_runs can evaluate `prog`: it is an accumulator program, every leaf is a
// broadcast scalar, contiguous, or constant over runs (runs[l].r > 0), and one is the last kind.
// *steps gets the program's steps with the scalar and run leaves read as S steps.
bool plan_acc_runs(const Program& prog, const std::vector<bool>& scalar, const std::vector<bool>& contiguous,
                   const std::vector<LeafRuns>& runs, std::vector<AccStep>* steps);

// Positions [p, end) of such a program into out (the kernel's buffer, at its start) and its other
// outputs into outs (each at its buffer's start), segment by segment between the run leaves' run
// boundaries.
void run_acc_runs(const Program& prog, const std::vector<AccStep>& steps, const std::vector<LeafMap>& maps,
                  const std::vector<bool>& scalar, const std::vector<LeafRuns>& runs, const Shape& shape, int64_t p,
                  int64_t end, Buffer& out, const std::vector<std::shared_ptr<Buffer>>& outs);

int64_t acc_run_tasks();  // how many tasks run_acc_runs has run (for the harness)

}  // namespace maroon::cpu
