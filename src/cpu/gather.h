// GATHER on the CPU backend (docs/spec.md §15): whole rows copied with memcpy where the layout
// allows, element by element through the views elsewhere; bits always src/ref's.
#pragma once
#include "core/graph.h"

namespace maroon::cpu {

// Realizes a GATHER node from its realized sources.
void run_gather(Node& n);

}  // namespace maroon::cpu
