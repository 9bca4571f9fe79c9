// A fused kernel: a small DAG of elementwise ops over leaves (realized nodes read through their
// views), evaluated a tile of elements at a time so intermediates stay in cache.
#pragma once
#include <cstdint>
#include <vector>

#include "core/graph.h"
#include "cpu/fastops.h"

namespace maroon::cpu {

// Elements per tile (values of one DAG node). 256 measured faster than 512 and 1024 for
// memory-bound chains here (0.8-0.9 of memcpy against 0.6 and 0.5 on one thread): a tile pass
// keeps every input stream of the chain in flight at once.
constexpr int kTile = 256;
constexpr int kTilePad = 64;     // slack so SIMD loops may run past n

struct Instr {
  Op op;
  DType in, out;  // operand dtype (WHERE: the value dtype) and result dtype
  Round rnd;
  int src[3];     // value ids
  int nsrc;
};

// code[start..end) of a Program, evaluated in one pass: one instruction, or a chain (end - start
// >= 2) where each instruction reads the one before it, which nothing else reads, and a chain
// kernel (cpu/fastops.h) computes each: the running value stays in registers.
struct Segment {
  int start, end;
};
constexpr int kMaxChain = 32;  // instructions in a chain at most (its steps are on the stack)

struct Program {
  std::vector<const Node*> leaves;  // value ids 0..leaves.size()-1
  std::vector<Instr> code;          // code[i] defines value id leaves.size() + i
  std::vector<Segment> segments;    // covering code in order (build_program; empty: one by one)
  // Per instruction of a chain, its step and the value id of its other operand (-1: none),
  // decoded once per program (find_segments) instead of once per tile.
  std::vector<ChainOp> step_op;
  std::vector<int> step_other;
  // The whole program as one accumulator machine (fastops.h: AccStep; find_acc), when every
  // instruction is a chain op of one float dtype and its saved values fit in kAccSlots; then
  // TileEval runs it instead of the segments. A V or S step's leaf is a leaf's value id.
  std::vector<AccStep> acc;
  // Values the kernel writes besides `result` (a kernel of several outputs, cpu/plan.cpp: Adam's
  // new moments with the parameter): their ids, each an instruction's. No chain runs through one.
  std::vector<int> outputs;
  int result = 0;
  DType dtype = DType::Float32;
  int num_values() const { return static_cast<int>(leaves.size() + code.size()); }
};

// The DAG rooted at `root`, fusing every unrealized elementwise node under it (`root` itself may
// be a realized leaf, for a REDUCE straight over a buffer). `outputs`: unrealized nodes of that
// DAG whose values the kernel writes as well (Program::outputs, in that order).
Program build_program(const Node* root, const std::vector<Node*>& outputs = {});
// Fills p.segments from p.code (build_program does).
void find_segments(Program& p);
// How many kernels' tasks have run a chain (for the harness); ... one with an EXP2 step.
int64_t chain_runs();
int64_t chain_exp2_runs();
// Fills p.acc from p.code (find_segments does; acc_program.cpp), or leaves it empty.
void find_acc(Program& p);
// The V steps (of a copy of a Program's acc) reading a leaf marked in `scalar` (every position reads its one element)
// become S steps: the element broadcast where it lies, so that a kernel can run the program over
// more than a tile at once.
void broadcast_scalar_leaves(std::vector<AccStep>& steps, const std::vector<bool>& scalar);
// How many kernels' tasks have run an accumulator program (for the harness); how many runs of
// whole tiles run_elementwise gave it at once, leaves read in place.
int64_t acc_runs();
int64_t acc_range_runs();
// Whether build_program makes accumulator programs (on by default; the chain tests turn it off
// to reach the segment kernels). Not thread-safe against kernels running meanwhile.
void set_acc_programs(bool on);
void count_acc_run();
void count_acc_range_run();

// A position's coordinates, on the stack up to kInline axes: a std::vector per tile and leaf
// was most of the char GPT step's malloc/free time (about 8% of it), on kernels of a few tiles.
class Coords {
 public:
  explicit Coords(size_t nd) : p_(nd <= kInline ? small_ : (big_.resize(nd), big_.data())) {}
  Coords(const Coords&) = delete;
  Coords& operator=(const Coords&) = delete;
  int64_t& operator[](size_t i) { return p_[i]; }
  int64_t* data() { return p_; }

 private:
  static constexpr size_t kInline = 12;
  int64_t small_[kInline];
  std::vector<int64_t> big_;
  int64_t* p_;
};

// How a leaf maps a position to its buffer: affine (one view, no mask: offset + sum of
// coord * stride), batched (leading batch axes with `strides`, the rest from a table of the
// inner indices) or general (ShapeTracker::index).
struct LeafMap {
  const Node* node;
  bool affine;
  std::vector<int64_t> strides;
  int64_t offset = 0;
  int nbatch = 0;
  std::vector<int64_t> table;
  explicit LeafMap(const Node* n);
  int64_t index(const int64_t* coords) const;  // -1 for padding
  // index() of n consecutive positions along the last axis (not past its end), for a leaf
  // that is not affine.
  void row(const int64_t* coords, int n, int64_t* out) const;
};

// Fills idx[0..n) with leaf m's buffer indices for flat positions p0.. of `shape` (m's view has
// that rank; an axis of size 1 there reads coordinate 0).
void flat_indices(const LeafMap& m, const Shape& shape, int64_t p0, int n, int64_t* idx);

// Evaluates the program for n positions whose leaf buffer indices have been computed per leaf
// (idx[leaf][i], -1 = padding). Returns the result values (n elements of prog.dtype).
class TileEval {
 public:
  explicit TileEval(const Program& p);
  ~TileEval();
  TileEval(const TileEval&) = delete;
  TileEval& operator=(const TileEval&) = delete;
  // direct[l], if not null, points at leaf l's n elements in memory (read in place, no gather).
  // out, if not null, receives the result when it is the last instruction's (n elements, plus
  // whatever whole-vector stores write past them); the return value says where the result is.
  // outs, if not null, holds where each of Program::outputs goes (n elements and whole-vector
  // slack, as `out`); else they are left in tiles that at() finds.
  const void* eval(const std::vector<const int64_t*>& idx, int n,
                   const std::vector<const void*>* direct = nullptr, void* out = nullptr,
                   void* const* outs = nullptr);
  const void* at(int id) const { return ptr_[static_cast<size_t>(id)]; }
  const Program& program() const { return prog_; }

 private:
  uint64_t* value(int id) { return scratch_->data() + static_cast<size_t>(id) * (kTile + kTilePad); }

  void run_chain(const Segment& s, void* dst, int n);

  const Program& prog_;
  // One tile per value id, in memory this thread reuses from one kernel to the next (taken from
  // and returned to a per-thread pool: a task is only microseconds of work, and fresh tiles
  // cost more than that).
  std::vector<uint64_t>* scratch_;
  std::vector<const void*> ptr_;
};

void exec_instr(const Instr& ins, const void* const* srcs, void* dst, int n);

// Copies element idx[i] of `b` (or zero bits for -1) into dst[i].
void gather(const Buffer& b, const int64_t* idx, int n, void* dst);

// Runs an elementwise kernel producing node `out` (from `prog`, build_program(&out, also), when
// given), or a REDUCE node. `also`: unrealized nodes of out's kernel and shape that it writes as
// well, in the same pass (plan.cpp's kernels of several outputs); each gets a buffer as `out`
// does and is left for the caller to mark realized.
void run_elementwise(Node& out, const Program* prog = nullptr, const std::vector<Node*>& also = {});
// How many kernels have written more than one output (for the harness).
int64_t multi_output_runs();
// How many elementwise tasks filled a leaf broadcast along short rows run by run (a softmax's
// row maximum: interp.cpp's RowFill), for the harness.
int64_t row_fill_tasks();
// How many elementwise tasks filled a leaf constant over runs of positions run by run
// (interp.cpp, fill_run_segments: a per-channel value over a batch's planes), for the harness.
int64_t run_segment_tasks();
void run_reduce(Node& out);
// The packed matmul for REDUCE ADD over MUL, directly or through `chain` (movement nodes from
// out's source down to the MUL's consumer); false if the pattern differs, and then nothing was
// computed but possibly the MUL's elementwise sources. With an epilogue (cpu/epilogue.h) the
// result is the epilogue's node's, and `out` is left unrealized.
class Epilogue;
bool try_matmul(Node& out, const std::vector<Node*>& chain = {}, const Epilogue* epi = nullptr);
// How many products try_matmul has split into two column tasks because they had one block of
// outputs over a long k (for the harness).
int64_t matmul_column_splits();
// A sum (REDUCE ADD `out`) read through `chain` (movement nodes down to `mm`'s consumer) of a
// matmul's result (`mm`, over its MUL through `mm_chain`), computed tile by tile without
// writing the product out: conv2d's input gradient, whose product is the window tensor
// (matmul_fold.cpp). False if the pattern differs; then nothing was computed but possibly the
// MUL's elementwise sources. With an epilogue (cpu/epilogue.h), each unit's outputs (a
// contiguous run) are rewritten by it as soon as they are folded, the result is the epilogue's
// node's, and `out` is left unrealized.
bool try_matmul_fold(Node& out, const std::vector<Node*>& chain, Node& mm, const std::vector<Node*>& mm_chain,
                     const Epilogue* epi = nullptr);
// A sum over one axis of WHERE(mask, v, +0) whose mask's leaves are broadcast along some axes
// (GATHER's gradient): the mask evaluated on its own positions and only the selected values
// added, in order (select_reduce.cpp says why the bits are the fold's). False if the pattern
// differs; then nothing was computed.
bool try_select_reduce(Node& out);
// How many sums try_select_reduce has computed in this process (for the harness).
int64_t select_reduce_runs();
// A sum over at most 64 trailing positions of a compare cast to float32 or float64 (max-pool's
// count of maxima per window), its operands realized unmasked strided views: each output counts
// its true compares (count_reduce.cpp says why the bits are the fold's). False if the pattern
// differs; then nothing was computed.
bool try_count_reduce(Node& out);
int64_t count_reduce_runs();  // how many sums it has computed in this process (for the harness)
// A sum (REDUCE ADD, float32 or float64) of one buffer read through a stack of padded views
// whose leading axes are batch axes, over inner axes only (pool's gradient): the terms laid out
// once, each batch unit adding only its real ones (view_fold.cpp). False if the pattern differs;
// then nothing was computed. run_reduce tries it first.
bool try_view_fold(Node& out);
int64_t view_fold_runs();  // how many sums it has computed in this process (for the harness)
int64_t view_fold_gather_runs();  // of those, how many had at most one real term per output
int64_t view_fold_prefix_runs();  // of those, how many folded each row as running prefixes (cumsum)
// A sum (REDUCE ADD, float32 or float64) over trailing axes of at least 32 positions whose leaves
// are affine views, each stepping by one stride along them (batchnorm's per-channel statistics):
// evaluated a run of positions per output, outputs folded as interleaved chains
// (run_major_reduce.cpp). False if the pattern differs; then nothing was computed. run_reduce
// tries it after try_view_fold.
bool try_run_major_reduce(Node& out);
// A reduction (ADD, MUL or MAX of float32, float64, int32 or uint32) of one realized buffer read
// through an affine view whose kept axes run through at least 64 outputs one apart (a column
// sum, x.sum(0)): each block of outputs folds the rows in place (column_fold.cpp). False if the
// pattern differs; then nothing was computed. run_reduce tries it after try_run_major_reduce.
bool try_column_fold(Node& out);
int64_t column_fold_runs();  // how many reductions it has computed in this process (for the harness)
int64_t run_major_reduce_runs();  // how many sums it has computed in this process (for the harness)
// Of those, how many folded some of their values in place in their leaf (a plain sum's).
int64_t run_major_reduce_in_place_runs();
// How many sums it has built a program for (whose runs were long enough to try; for the harness).
int64_t run_major_reduce_plans();
// How many sums try_matmul_fold has computed in this process (the harness checks that its
// cases take that path).
int64_t matmul_fold_runs();
// Of those, how many folded every unit through plan_fold_vec's plan (cpu/fold_segs.h).
int64_t matmul_fold_planned_runs();

// dst[i] = src[i * stride] for i < n, elements of sz bytes (1, 2, 4 or 8): a copy for stride 1, a
// fill for 0. It moves bits, so every dtype's elements arrive unchanged (interp.cpp).
void copy_strided(const uint8_t* src, size_t sz, int64_t stride, int n, void* dst);

}  // namespace maroon::cpu
