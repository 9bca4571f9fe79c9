// SIMD tile operations for the common (op, dtype) pairs, compiled for every Highway target and
// chosen at run time. Each is bit-equal to src/ref's meaning of the op (IEEE operations, one
// rounding each, canonical NaN); anything not listed runs through src/ref's scalar code.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/ops.h"
#include "maroon/dtype.h"

namespace maroon::cpu {

// out[i] = op(a[i], b[i], c[i]) for i < n; buffers may be read and written up to the next
// multiple of the vector length (tiles carry kTilePad elements of slack).
using FastFn = void (*)(const void* a, const void* b, const void* c, void* out, int n);
FastFn fast_op(Op op, DType in, DType out);

// acc[i] = acc[i] op x[i] for the REDUCE fold (same slack rule); null if none.
using FastReduceFn = void (*)(void* acc, const void* x, int n);
FastReduceFn fast_reduce(ReduceOp op, DType d);

// A chain (cpu/kernel.h: Program::segments): ops applied in turn to a running value, each to
// it and `other` (n elements, same slack rule) or to it alone. Square is MUL of the value by
// itself; ADD, MUL and MAX take `other` as their second operand, which changes no bit (ops.def:
// they commute bit for bit). Exp2 is EXP2 rounded to nearest (float32 only; fast_math.h's
// kernel on the running value).
enum class ChainOp : uint8_t { Add, Mul, Max, Square, Recip, Sqrt, Exp2 };
struct ChainStep {
  ChainOp op;
  const void* other;
};
// value = first[i], then each step; out[i] = value. Float32 or float64 elements.
using ChainFn = void (*)(const void* first, const ChainStep* steps, int nsteps, void* out, int n);
ChainFn fast_chain(DType d);
struct Instr;
// The chain op computing `ins` when its running value is its first operand (both, for Square);
// false if no chain kernel computes it.
bool chain_op(const Instr& ins, ChainOp* op);

// A whole program of chain ops (cpu/kernel.h: Program::acc) as an accumulator machine: one
// running value in registers, a few saved values (slots), leaves read where they lie. Each step
// applies one op to the running value (Load replaces it, Save copies it to a slot); a binary
// step's operand is a leaf's elements (V), a leaf's first element broadcast (S: a scalar read
// in place, or a splat tile), or a slot (R). The value is stored once, after the last step.
// Comparisons (CMPLT as a < x or x < a, CMPNE) make the running value a mask: all bits set where
// true; WHERE first sets the mask register from the running value (MaskA), a slot (MaskR) or a
// bool leaf's bytes (MaskV, MaskS), then picks lanes: Sel a = m ? x : a, SelN a = m ? a : x.
// Canon makes a NaN canonical (a WHERE copies its operands' bits, so a computed operand, whose
// NaN payload the steps leave as it falls, is made canonical before; and the result at the end).
// Out stores the running value into outs[slot] as well (a kernel of several outputs: Adam's new
// moments, written in the pass that computes the parameter from them; made canonical before).
enum class AccOp : uint8_t {
  LoadV, LoadS, LoadR, AddV, AddS, AddR, MulV, MulS, MulR, MaxV, MaxS, MaxR,
  Square, Recip, Sqrt, Exp2, Save,
  CltV, CltS, CltR, CgtV, CgtS, CgtR, CneV, CneS, CneR,
  MaskA, MaskV, MaskS, MaskR, SelV, SelS, SelR, SelNV, SelNS, SelNR, Canon, Out,
  Known  // first, if at all: the steps after it are a program the kernel knows (acc_known.h)
};
struct AccStep {
  AccOp op;
  uint8_t slot;  // LoadR, AddR, MulR, MaxR, Save; Out: an index into outs; Known: an AccKnownId
  int16_t leaf;  // the V and S steps: an index into the kernel's leaves
};
constexpr int kAccSlots = 4;
// value = the steps in turn; out[i] = value, for i < n (same slack rule as FastFn; leaves[l] for
// each leaf a V or S step reads; outs[k] for each Out step's k, null if none). Float32 or float64
// elements.
using AccFn = void (*)(const AccStep* steps, int nsteps, const void* const* leaves, void* const* outs, void* out,
                       int n);
AccFn fast_acc(DType d);

// The target the dispatcher uses now.
std::string current_target_name();

}  // namespace maroon::cpu
