// GATHER on the CPU backend (docs/spec.md §15): whole rows copied with memcpy where the layout
// allows, element by element through the views elsewhere; bits always src/ref's.
#pragma once
#include "core/graph.h"

namespace maroon::cpu {

// Realizes a GATHER node from its realized sources.
void run_gather(Node& n);
// How many gathers ran as rows of one element remapped by a table of the axis's offsets (the
// index depending on the position along the last axis alone: interpolate's), in this process.
int64_t gather_last_axis_remaps();

}  // namespace maroon::cpu
