// A program of chain ops as accumulator steps (cpu/kernel.h: Program::acc; the kernel is
// acc_kernel.cpp): the code in its order, one running value, values read again kept in slots.
#include <atomic>

#include "cpu/kernel.h"

namespace maroon::cpu {

namespace {

std::atomic<bool> g_acc_on{true};
std::atomic<int64_t> g_acc_runs{0};
std::atomic<int64_t> g_acc_range_runs{0};

bool unary(ChainOp op) {
  return op == ChainOp::Square || op == ChainOp::Recip || op == ChainOp::Sqrt || op == ChainOp::Exp2;
}

// Turns p.code into steps; false where it does not fit (a slot too many, a leaf index too large).
class AccBuilder {
 public:
  explicit AccBuilder(const Program& p)
      : p_(p), L_(static_cast<int>(p.leaves.size())), uses_(static_cast<size_t>(p.num_values()), 0),
        slot_of_(static_cast<size_t>(p.num_values()), -1) {
    for (const Instr& ins : p.code)
      for (int k = 0; k < ins.nsrc; ++k) ++uses_[ins.src[k]];
  }

  bool build(std::vector<AccStep>* out) {
    if (L_ > INT16_MAX) return false;
    for (int i = 0; i < static_cast<int>(p_.code.size()); ++i)
      if (!instr(i)) return false;
    *out = std::move(steps_);
    return true;
  }

 private:
  // Instruction i on the running value: its operand already there, or loaded (the value there
  // before saved first if something reads it later), then saved again if it is read after i.
  bool instr(int i) {
    const Instr& ins = p_.code[i];
    ChainOp op;
    if (!chain_op(ins, &op) || ins.in != p_.code[0].in) return false;
    const int x = ins.src[0], y = ins.nsrc > 1 ? ins.src[1] : -1;
    int run = x, other = y;
    if (!unary(op) && acc_ >= 0 && y == acc_) run = y, other = x;
    if (run != acc_) {
      if (!keep(acc_)) return false;
      if (!push_operand(AccOp::LoadV, AccOp::LoadR, run)) return false;
      acc_ = run;
    }
    // The op replaces the running value: keep it if read again (x + x reads it as `other`).
    const int reads_here = (x == run) + (y == run);
    if ((uses_[run] > reads_here || (!unary(op) && other == run)) && !keep(run)) return false;
    switch (op) {
      case ChainOp::Add: if (!push_operand(AccOp::AddV, AccOp::AddR, other)) return false; break;
      case ChainOp::Mul: if (!push_operand(AccOp::MulV, AccOp::MulR, other)) return false; break;
      case ChainOp::Max: if (!push_operand(AccOp::MaxV, AccOp::MaxR, other)) return false; break;
      case ChainOp::Square: steps_.push_back({AccOp::Square, 0, -1}); break;
      case ChainOp::Recip: steps_.push_back({AccOp::Recip, 0, -1}); break;
      case ChainOp::Sqrt: steps_.push_back({AccOp::Sqrt, 0, -1}); break;
      case ChainOp::Exp2: steps_.push_back({AccOp::Exp2, 0, -1}); break;
    }
    for (int k = 0; k < ins.nsrc; ++k) release(ins.src[k]);
    acc_ = L_ + i;
    return true;
  }

  // A computed value still to be read, not yet in a slot: saved into a free one.
  bool keep(int v) {
    if (v < L_ || uses_[v] == 0 || slot_of_[v] >= 0) return true;
    for (int k = 0; k < kAccSlots; ++k)
      if (!busy_[k]) {
        busy_[k] = true;
        slot_of_[v] = k;
        steps_.push_back({AccOp::Save, static_cast<uint8_t>(k), -1});
        return true;
      }
    return false;
  }

  // A step reading v: a leaf's elements, or the slot holding a computed value.
  bool push_operand(AccOp leaf_op, AccOp slot_op, int v) {
    if (v < 0) return false;
    if (v < L_) {
      steps_.push_back({leaf_op, 0, static_cast<int16_t>(v)});
      return true;
    }
    if (slot_of_[v] < 0) return false;
    steps_.push_back({slot_op, static_cast<uint8_t>(slot_of_[v]), -1});
    return true;
  }

  // One read of v done; its slot is free after the last.
  void release(int v) {
    if (--uses_[v] == 0 && v >= L_ && slot_of_[v] >= 0) busy_[slot_of_[v]] = false;
  }

  const Program& p_;
  const int L_;
  std::vector<int> uses_, slot_of_;
  bool busy_[kAccSlots] = {};
  std::vector<AccStep> steps_;
  int acc_ = -1;  // the value id the running value holds
};

}  // namespace

void find_acc(Program& p) {
  p.acc.clear();
  if (!g_acc_on.load(std::memory_order_relaxed) || p.code.size() < 2) return;
  const DType d = p.code[0].in;
  if ((d != DType::Float32 && d != DType::Float64) || p.dtype != d) return;
  // The result is the last instruction's value (build_program's root, last in post order).
  if (p.result != p.num_values() - 1) return;
  std::vector<AccStep> steps;
  if (AccBuilder(p).build(&steps)) p.acc = std::move(steps);
}

void broadcast_scalar_leaves(std::vector<AccStep>& steps, const std::vector<bool>& scalar) {
  for (AccStep& s : steps) {
    if (s.leaf < 0 || !scalar[static_cast<size_t>(s.leaf)]) continue;
    switch (s.op) {
      case AccOp::LoadV: s.op = AccOp::LoadS; break;
      case AccOp::AddV: s.op = AccOp::AddS; break;
      case AccOp::MulV: s.op = AccOp::MulS; break;
      case AccOp::MaxV: s.op = AccOp::MaxS; break;
      default: break;
    }
  }
}

int64_t acc_runs() { return g_acc_runs.load(); }
int64_t acc_range_runs() { return g_acc_range_runs.load(); }
void count_acc_run() { g_acc_runs.fetch_add(1, std::memory_order_relaxed); }
void count_acc_range_run() { g_acc_range_runs.fetch_add(1, std::memory_order_relaxed); }
void set_acc_programs(bool on) { g_acc_on.store(on); }

}  // namespace maroon::cpu
