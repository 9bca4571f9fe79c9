// What the Tensor layer tells a capture in progress (core/jit.cpp; see maroon/jit.h).
#pragma once
#include <memory>
#include <vector>

#include "maroon/tensor.h"

namespace maroon {

// Called by Tensor::assign before it swaps `st`'s node: the capture notes the value the state
// had when the step first assigned it, and at the end the value the step left.
void jit_note_assign(const std::shared_ptr<TensorState>& st);
// Called by Tensor::assign(x) outside captures: when a live capture reads st's node as a leaf,
// leaves st on x's value, points the capture's copy of the leaf at it (so replays read it) and
// returns true; false otherwise (the assign is left to the caller).
bool jit_assign_in_place(const std::shared_ptr<TensorState>& st, const Tensor& x);
// Every live TensorState (src/api/autograd.cpp's registry): a capture finds the tensors a step
// left on the nodes it computed (a parameter's .grad) and moves them along on each replay.
std::vector<std::shared_ptr<TensorState>> live_tensor_states();
// Throws an Error naming `what` when a capture is recording on this thread.
void jit_refuse(const char* what);
// Called by the host reads (Tensor::bytes, copy_bytes_to) once `n` is realized: a capture notes a
// read of a value computed from its inputs (JitCapture::host_reads_of_inputs).
void jit_note_host_read(const Node& n);

}  // namespace maroon
