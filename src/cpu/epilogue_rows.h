// A matmul epilogue of adds and an optional ReLU (conv2d's bias, a residual, ReLU: every conv of
// the ONNX CNN and ResNet) run over a run of the output in registers, instead of a tile at a time
// through the tile interpreter (epilogue.cpp). Same instructions in the same order, each rounded
// to nearest as the program says, so the same bits.
#pragma once
#include <cstdint>
#include <vector>

#include "cpu/kernel.h"

namespace maroon::cpu {

// Steps of MAX or MUL with a scalar (RowEpilogue::steps): their count, kind and the scalars' bits
// (of the program's dtype).
struct RowSteps {
  static constexpr int kMax = 4;
  int n = 0;
  bool max[kMax] = {};  // MAX; else MUL
  uint64_t bits[kMax] = {};
};

// The program t = self + x1 (+ x2 ...), then, with relu, WHERE(CMPLT(0, t), t, z); or
// WHERE(CMPLT(0, m), self, z) for a leaf m read as a stream (RowEpilogue::mask). An operand
// x may itself be a sum of two leaves (y + b, added before it joins t): a residual branch's bias
// left to this epilogue (the ONNX ResNet's downsampling blocks: relu((conv + b) + (conv1x1 + b1))).
struct RowEpilogue {
  static constexpr int kMaxAdds = 3;
  DType dtype = DType::Float32;
  int adds = 0;
  int leaf[kMaxAdds] = {};   // each add's other operand, a leaf of the program
  int leaf2[kMaxAdds] = {};  // or, where >= 0, that leaf + this one (the program's ADD order)
  bool relu = false;
  int zero = -1;            // relu: the leaf WHERE takes where t is not above zero
  // relu over another leaf's sign, with no adds: WHERE(CMPLT(0, m), self, z), ReLU's gradient
  // (m the ReLU's input or output, self the gradient coming in: conv2d's input gradient, folded).
  int mask = -1;
  // After the adds (and instead of a ReLU), steps of MAX or MUL with one element everywhere:
  // ONNX's Clip(t, lo, hi) is MAX(t, lo), then min(., hi) as -MAX(-., -hi), a MUL by -1 each way
  // (MobileNet's ReLU6).
  RowSteps steps;
  // Those steps are such a Clip, bounds neither NaN nor -0, after at most one add of one element:
  // run by ClipRun (decided once, by match_row_epilogue).
  bool clip = false;
};

// How each leaf of an epilogue's program reads the output's positions.
enum class LeafRead : uint8_t { kOther, kSelf, kScalar, kRunScalar, kStream, kRowStream };

// Whether prog is such a program over leaves read as `reads` says (the product kSelf; kScalar:
// one element everywhere, at scalar[l]; kRunScalar: one element along a run; kStream: the
// output's layout; kRowStream: moving only along the output's last axis, by one, so a run within
// a row reads adjacent elements, as a linear layer's bias), float32 or float64, every add rounded
// to nearest, CMPLT's 0 either zero; fills *e.
bool match_row_epilogue(const Program& prog, const std::vector<LeafRead>& reads,
                        const std::vector<const void*>& scalar, RowEpilogue* e);

// c[i] = the program at n positions from c's: src[2a] is add a's operand (n elements, or the one
// element where `stream[2a]` is false) and src[2a + 1] its second leaf where e.leaf2[a] >= 0 (the
// same way), src[kMaskSlot] the mask's n elements where e.mask >= 0, z the value a ReLU writes
// where t (or the mask) is not above 0. The caller's hardware rounding mode is round to nearest.
constexpr int kMaskSlot = 2 * RowEpilogue::kMaxAdds;
constexpr int kRowSlots = kMaskSlot + 1;
void run_row_epilogue(const RowEpilogue& e, void* c, int64_t n, const void* const* src, const bool* stream,
                      const void* z);

// How many epilogue tasks have run a row of it this way (for the harness).
int64_t row_epilogue_tasks();
void count_row_epilogue_task();
// How many of those tasks ran a row as one add of one element and the ReLU (conv2d's bias and
// ReLU) by that case's own loop.
int64_t bias_relu_row_tasks();
// How many of those tasks ran a row with an operand that is a sum of two leaves (RowEpilogue::leaf2).
int64_t pair_row_tasks();
// How many of those tasks ran a row as ReLU's gradient mask (RowEpilogue::mask).
int64_t mask_row_tasks();
// How many of those tasks ran a row with MAX or MUL steps (RowEpilogue::steps: a Clip).
int64_t step_row_tasks();
// How many of those ran a Clip (MAX, MUL by -1, MAX, MUL by -1 after at most a one-element add)
// by its own loop.
int64_t clip_row_tasks();

}  // namespace maroon::cpu
