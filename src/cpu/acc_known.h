// Accumulator programs the kernel knows in advance (fastops.h: AccOp::Known): a step sequence
// that acc_kernel.cpp also compiles as straight-line code, with no per-step dispatch, its slots
// and masks in registers. find_acc marks a program whose steps are one of these (op for op, slot
// for slot; the leaves are the program's own, bound at run time), and the kernel runs that
// marked program so; every other program runs through the interpreter. Each step is still the
// interpreter's own code for that op (the same instruction on the same operands in the same
// order), so the bits are the interpreter's.
#pragma once
#include <cstddef>
#include <cstdint>

#include "cpu/fastops.h"

namespace maroon::cpu {

struct AccShape {
  AccOp op;
  uint8_t slot;  // as AccStep::slot, where the op reads or writes a slot; else 0
};

// The ONNX transformer's matmul epilogue: bias, then GELU as PyTorch 1.13 exports it (Div ->
// Erf -> Add -> Mul -> Mul) with Tensor::erf's Abramowitz-Stegun 7.1.26 (sign by compares and
// WHERE, written twice; 1 / (1 + p|u|); the polynomial; EXP2 of -u^2 log2(e)). About a sixth of
// the fused transformer's time on one thread went to this program through the interpreter.
inline constexpr AccShape kAccBiasGelu[] = {
    {AccOp::LoadV, 0}, {AccOp::AddV, 0},  {AccOp::Save, 0},  {AccOp::MulV, 0},  {AccOp::Save, 1},
    {AccOp::CneV, 0},  {AccOp::Save, 2},  {AccOp::LoadR, 1}, {AccOp::CltV, 0},  {AccOp::MaskA, 0},
    {AccOp::LoadV, 0}, {AccOp::SelV, 0},  {AccOp::MaskR, 2}, {AccOp::SelNV, 0}, {AccOp::Save, 2},
    {AccOp::LoadR, 1}, {AccOp::CneV, 0},  {AccOp::Save, 3},  {AccOp::LoadR, 1}, {AccOp::CltV, 0},
    {AccOp::MaskA, 0}, {AccOp::LoadV, 0}, {AccOp::SelV, 0},  {AccOp::MaskR, 3}, {AccOp::SelNV, 0},
    {AccOp::MulR, 1},  {AccOp::MulV, 0},  {AccOp::AddV, 0},  {AccOp::Recip, 0}, {AccOp::Save, 3},
    {AccOp::MulV, 0},  {AccOp::AddV, 0},  {AccOp::MulR, 3},  {AccOp::AddV, 0},  {AccOp::MulR, 3},
    {AccOp::AddV, 0},  {AccOp::MulR, 3},  {AccOp::AddV, 0},  {AccOp::MulR, 3},  {AccOp::Save, 3},
    {AccOp::LoadR, 1}, {AccOp::Square, 0}, {AccOp::MulV, 0}, {AccOp::MulV, 0},  {AccOp::Exp2, 0},
    {AccOp::MulR, 3},  {AccOp::MulV, 0},  {AccOp::AddV, 0},  {AccOp::MulR, 2},  {AccOp::AddV, 0},
    {AccOp::MulR, 0},  {AccOp::MulV, 0},  {AccOp::Canon, 0},
};

// The known programs, by the id a Known step carries in its slot field.
enum class AccKnownId : uint8_t { BiasGelu = 0 };

// A step that reads a leaf's elements (a V step; find_acc builds no S step, and a known program
// has no bool leaf).
constexpr bool acc_reads_leaf(AccOp op) {
  switch (op) {
    case AccOp::LoadV: case AccOp::AddV: case AccOp::MulV: case AccOp::MaxV: case AccOp::CltV:
    case AccOp::CgtV: case AccOp::CneV: case AccOp::SelV: case AccOp::SelNV:
      return true;
    default:
      return false;
  }
}
template <size_t N>
constexpr int acc_leaf_steps(const AccShape (&p)[N]) {
  int k = 0;
  for (const AccShape& s : p) k += acc_reads_leaf(s.op);
  return k;
}

// The comparisons: their result, the running value, is a mask (all bits set or none).
constexpr bool acc_compare(AccOp op) {
  switch (op) {
    case AccOp::CltV: case AccOp::CltS: case AccOp::CltR: case AccOp::CgtV: case AccOp::CgtS: case AccOp::CgtR:
    case AccOp::CneV: case AccOp::CneS: case AccOp::CneR:
      return true;
    default:
      return false;
  }
}
// Whether after step k of p the running value is still a comparison's result (the steps since
// leave it as it is; -1: before the first step, no).
template <size_t N>
constexpr bool acc_run_is_mask(const AccShape (&p)[N], int k) {
  bool mask = false;
  for (int j = 0; j <= k; ++j) {
    const AccOp op = p[j].op;
    const bool keeps = op == AccOp::Save || op == AccOp::MaskA || op == AccOp::MaskR || op == AccOp::MaskV ||
                       op == AccOp::MaskS || op == AccOp::Out;
    mask = acc_compare(op) || (keeps && mask);
  }
  return mask;
}
// Whether slot s, as step k reads it, holds a comparison's result (its last Save saved one).
template <size_t N>
constexpr bool acc_slot_is_mask(const AccShape (&p)[N], int k, int s) {
  for (int j = k - 1; j >= 0; --j)
    if (p[j].op == AccOp::Save && p[j].slot == s) return acc_run_is_mask(p, j - 1);
  return false;
}

// How many kernel calls ran a known program (every thread's, for the tests), and one more.
int64_t acc_known_runs();
void count_acc_known_run();
// Whether the kernel runs known programs as such (on by default; off, it interprets them: the
// benchmark's A/B in one process). Read at each kernel call.
void set_acc_known_programs(bool on);
bool acc_known_programs();

}  // namespace maroon::cpu
