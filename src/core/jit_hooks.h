// What the Tensor layer tells a capture in progress (core/jit.cpp; see maroon/jit.h).
#pragma once
#include <memory>

#include "maroon/tensor.h"

namespace maroon {

// Called by Tensor::assign before it swaps `st`'s node: the capture notes the value the state
// had when the step first assigned it, and at the end the value the step left.
void jit_note_assign(const std::shared_ptr<TensorState>& st);
// Called by Tensor::assign(x) outside captures: when a live capture reads st's node as a leaf,
// writes x's value into that leaf's buffer and returns true (st keeps its node), so replays
// see it; false otherwise (the assign swaps the node as usual).
bool jit_assign_in_place(const std::shared_ptr<TensorState>& st, const Tensor& x);
// Throws an Error naming `what` when a capture is recording on this thread.
void jit_refuse(const char* what);

}  // namespace maroon
