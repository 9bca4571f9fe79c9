// A program of chain ops as accumulator steps (cpu/kernel.h: Program::acc; the kernel is
// acc_kernel.cpp): the code in its order, one running value, values read again kept in slots.
#include <atomic>

#include "cpu/acc_known.h"
#include "cpu/kernel.h"

namespace maroon::cpu {

namespace {

std::atomic<bool> g_acc_on{true};
std::atomic<int64_t> g_acc_runs{0};
std::atomic<int64_t> g_acc_range_runs{0};

bool unary(ChainOp op) {
  return op == ChainOp::Square || op == ChainOp::Recip || op == ChainOp::Sqrt || op == ChainOp::Exp2;
}

// Turns p.code into steps; false where it does not fit (a slot too many, a leaf index too large,
// a bool value read other than as a WHERE's condition).
class AccBuilder {
 public:
  explicit AccBuilder(const Program& p)
      : p_(p), L_(static_cast<int>(p.leaves.size())), T_(p.dtype), uses_(static_cast<size_t>(p.num_values()), 0),
        slot_of_(static_cast<size_t>(p.num_values()), -1), exact_(static_cast<size_t>(p.num_values()), true),
        picked_(static_cast<size_t>(p.num_values()), false) {
    for (const Instr& ins : p.code)
      for (int k = 0; k < ins.nsrc; ++k) {
        ++uses_[ins.src[k]];
        if (ins.op == Op::WHERE && k > 0) picked_[ins.src[k]] = true;
      }
  }

  bool build(std::vector<AccStep>* out) {
    if (L_ > INT16_MAX || !types_fit()) return false;
    for (int i = 0; i < static_cast<int>(p_.code.size()); ++i) {
      const Instr& ins = p_.code[i];
      const bool ok = ins.op == Op::WHERE ? where(i) : ins.op == Op::CMPLT || ins.op == Op::CMPNE ? compare(i) : chain(i);
      if (!ok) return false;
      // A computed value a WHERE copies: its NaN canonical now, as the one-op kernel stored it.
      if (!exact_[acc_] && picked_[acc_]) canon();
      // Another output of the kernel (Program::outputs): stored as its own kernel stored it,
      // and read on as the next kernel read it back, NaN canonical.
      for (size_t k = 0; k < p_.outputs.size(); ++k)
        if (p_.outputs[k] == acc_) {
          if (!exact_[acc_]) canon();
          steps_.push_back({AccOp::Out, static_cast<uint8_t>(k), -1});
        }
    }
    if (!exact_[acc_]) canon();  // the result as the one-op kernels store it
    *out = std::move(steps_);
    return true;
  }

 private:
  bool is_mask(int v) const {
    return v < L_ ? p_.leaves[v]->dtype == DType::Bool : p_.code[v - L_].out == DType::Bool;
  }
  // Every value of dtype T but the masks: compare results and bool leaves, read only as a
  // WHERE's condition (a mask lives as a vector of T with all bits set or none).
  bool types_fit() const {
    if (is_mask(p_.result) || p_.outputs.size() > UINT8_MAX) return false;
    for (int o : p_.outputs)
      if (o < L_ || is_mask(o)) return false;
    for (const Instr& ins : p_.code) {
      if (ins.in != T_) return false;
      const bool cmp = ins.op == Op::CMPLT || ins.op == Op::CMPNE;
      if (ins.out != (cmp ? DType::Bool : T_)) return false;
      for (int k = 0; k < ins.nsrc; ++k) {
        const int v = ins.src[k];
        const bool cond = ins.op == Op::WHERE && k == 0;
        if (cond != is_mask(v)) return false;
        if (!cond && v < L_ && p_.leaves[v]->dtype != T_) return false;
      }
    }
    return true;
  }

  void canon() {
    steps_.push_back({AccOp::Canon, 0, -1});
    exact_[acc_] = true;
  }

  // Makes `run` the running value (the value there before saved first if read later), and keeps
  // `run` itself if read after this instruction or as another operand of it (`reads_here`).
  bool take(int run, int reads_here, bool other_is_run) {
    if (run != acc_) {
      if (!keep(acc_)) return false;
      if (!push_operand(AccOp::LoadV, AccOp::LoadR, run)) return false;
      acc_ = run;
    }
    return !((uses_[run] > reads_here || other_is_run) && !keep(run));
  }

  // Instruction i of chain ops on the running value: its operand already there, or loaded.
  bool chain(int i) {
    const Instr& ins = p_.code[i];
    ChainOp op;
    if (!chain_op(ins, &op)) return false;
    const int x = ins.src[0], y = ins.nsrc > 1 ? ins.src[1] : -1;
    int run = x, other = y;
    if (!unary(op) && acc_ >= 0 && y == acc_) run = y, other = x;
    if (!take(run, (x == run) + (y == run), !unary(op) && other == run)) return false;
    switch (op) {
      case ChainOp::Add: if (!push_operand(AccOp::AddV, AccOp::AddR, other)) return false; break;
      case ChainOp::Mul: if (!push_operand(AccOp::MulV, AccOp::MulR, other)) return false; break;
      case ChainOp::Max: if (!push_operand(AccOp::MaxV, AccOp::MaxR, other)) return false; break;
      case ChainOp::Square: steps_.push_back({AccOp::Square, 0, -1}); break;
      case ChainOp::Recip: steps_.push_back({AccOp::Recip, 0, -1}); break;
      case ChainOp::Sqrt: steps_.push_back({AccOp::Sqrt, 0, -1}); break;
      case ChainOp::Exp2: steps_.push_back({AccOp::Exp2, 0, -1}); break;
    }
    return finish(i);
  }

  // CMPLT x < y as a < x (the running value is x) or x < a (it is y); CMPNE either way. The
  // comparisons ignore NaN payloads, so a computed operand needs no Canon.
  bool compare(int i) {
    const Instr& ins = p_.code[i];
    const int x = ins.src[0], y = ins.src[1];
    const bool swap = acc_ >= 0 && y == acc_ && x != y;
    const int run = swap ? y : x, other = swap ? x : y;
    if (!take(run, (x == run) + (y == run), other == run)) return false;
    const bool lt = ins.op == Op::CMPLT;
    const bool ok = lt && !swap ? push_operand(AccOp::CltV, AccOp::CltR, other)
                    : lt        ? push_operand(AccOp::CgtV, AccOp::CgtR, other)
                                : push_operand(AccOp::CneV, AccOp::CneR, other);
    return ok && finish(i);
  }

  // WHERE(c, a, b): the mask register from c, then the lanes of a over the running value b
  // (Sel), or of b over the running value a (SelN), b loaded if neither is there.
  bool where(int i) {
    const Instr& ins = p_.code[i];
    const int c = ins.src[0], a = ins.src[1], b = ins.src[2];
    if (c == acc_) {
      steps_.push_back({AccOp::MaskA, 0, -1});
    } else if (!push_operand(AccOp::MaskV, AccOp::MaskR, c)) {
      return false;
    }
    release(c);
    const bool over_a = acc_ == a && a != b;
    const int run = over_a ? a : b, other = over_a ? b : a;
    if (!take(run, (a == run) + (b == run), other == run)) return false;
    if (!(over_a ? push_operand(AccOp::SelNV, AccOp::SelNR, other) : push_operand(AccOp::SelV, AccOp::SelR, other)))
      return false;
    release(a), release(b);
    acc_ = L_ + i;
    exact_[acc_] = exact_[a] && exact_[b];  // true: every computed operand was made canonical
    return true;
  }

  // The reads of instruction i done; its value is the running value (not exact: NaN payloads).
  bool finish(int i) {
    const Instr& ins = p_.code[i];
    for (int k = 0; k < ins.nsrc; ++k) release(ins.src[k]);
    acc_ = L_ + i;
    exact_[acc_] = false;
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
  const DType T_;
  std::vector<int> uses_, slot_of_;
  std::vector<bool> exact_;   // the value's bits are the one-op kernels' (else: but a NaN's payload)
  std::vector<bool> picked_;  // a WHERE copies the value (its second or third operand)
  bool busy_[kAccSlots] = {};
  std::vector<AccStep> steps_;
  int acc_ = -1;  // the value id the running value holds
};

// The steps are P's: the same ops, the same slots where a step uses one, a leaf where P's step
// reads one (and only there).
template <size_t N>
bool known(const std::vector<AccStep>& steps, const AccShape (&P)[N]) {
  if (steps.size() != N) return false;
  for (size_t k = 0; k < N; ++k) {
    const AccStep& s = steps[k];
    if (s.op != P[k].op || s.slot != P[k].slot || (s.leaf >= 0) != acc_reads_leaf(P[k].op)) return false;
  }
  return true;
}

// Per-thread counts on their own cache lines: a kernel call counts without contention.
struct alignas(64) KnownCount {
  std::atomic<int64_t> n{0};
};
constexpr int kKnownCounts = 16;
KnownCount g_known[kKnownCounts];
std::atomic<int> g_known_next{0};
std::atomic<bool> g_known_on{true};

}  // namespace

int64_t acc_known_runs() {
  int64_t sum = 0;
  for (const KnownCount& c : g_known) sum += c.n.load(std::memory_order_relaxed);
  return sum;
}
void count_acc_known_run() {
  thread_local const int k = g_known_next.fetch_add(1, std::memory_order_relaxed) % kKnownCounts;
  g_known[k].n.fetch_add(1, std::memory_order_relaxed);
}

void set_acc_known_programs(bool on) { g_known_on.store(on); }
bool acc_known_programs() { return g_known_on.load(std::memory_order_relaxed); }

void find_acc(Program& p) {
  p.acc.clear();
  if (!g_acc_on.load(std::memory_order_relaxed) || p.code.size() < 2) return;
  const DType d = p.code[0].in;
  if ((d != DType::Float32 && d != DType::Float64) || p.dtype != d) return;
  // The result is the last instruction's value (build_program's root, last in post order).
  if (p.result != p.num_values() - 1) return;
  std::vector<AccStep> steps;
  if (!AccBuilder(p).build(&steps)) return;
  // A program the kernel knows (acc_known.h) is marked so, found from its steps alone.
  if (d == DType::Float32 && known(steps, kAccBiasGelu))
    steps.insert(steps.begin(), {AccOp::Known, static_cast<uint8_t>(AccKnownId::BiasGelu), -1});
  p.acc = std::move(steps);
}

void broadcast_scalar_leaves(std::vector<AccStep>& steps, const std::vector<bool>& scalar) {
  for (AccStep& s : steps) {
    if (s.leaf < 0 || !scalar[static_cast<size_t>(s.leaf)]) continue;
    switch (s.op) {
      case AccOp::LoadV: s.op = AccOp::LoadS; break;
      case AccOp::AddV: s.op = AccOp::AddS; break;
      case AccOp::MulV: s.op = AccOp::MulS; break;
      case AccOp::MaxV: s.op = AccOp::MaxS; break;
      case AccOp::CltV: s.op = AccOp::CltS; break;
      case AccOp::CgtV: s.op = AccOp::CgtS; break;
      case AccOp::CneV: s.op = AccOp::CneS; break;
      case AccOp::MaskV: s.op = AccOp::MaskS; break;
      case AccOp::SelV: s.op = AccOp::SelS; break;
      case AccOp::SelNV: s.op = AccOp::SelNS; break;
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
