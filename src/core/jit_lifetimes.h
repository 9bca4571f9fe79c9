// TinyJit's buffer lifetimes (tinygrad's memory planner, engine/memory.py, by other means): a
// replay knows every kernel of the step in advance, so each buffer the step computes can go back
// to the buffer cache as soon as the last kernel reading it has run, and the next kernel of the
// same size takes the same, already touched, pages. Nothing is placed by hand: a buffer is
// dropped by its node (a shared_ptr), so two buffers that are live at once never share memory,
// and a planning mistake is a null buffer (a crash in the tests), never a wrong bit.
#pragma once
#include <unordered_set>
#include <vector>

#include "core/graph.h"
#include "cpu/cpu.h"

namespace maroon::jit {

// One recorded realize of a captured step: its schedule (the capture's private nodes) and the
// plan that runs it.
struct PlannedRun {
  const std::vector<Node*>* order;
  cpu::Plan* plan;
};

// Sets each plan's releases (cpu::Plan::set_releases) for the runs replayed in this order, each
// schedule's nodes first made unrealized and bufferless (JitCaptureImpl::run_recorded). The
// nodes of `keep` (what the replay hands out: outputs, states, followed tensors, and what the
// step's own leaves alias) and nodes outside the schedules keep their buffers.
void plan_releases(const std::vector<PlannedRun>& runs, const std::unordered_set<const Node*>& keep);

}  // namespace maroon::jit
