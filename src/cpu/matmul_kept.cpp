#include "cpu/matmul_kept.h"

#include <mutex>
#include <vector>

namespace maroon::cpu {

namespace {

// Everything plan_matmul_node reads for a REDUCE over MUL of two realized factors, and its answer
// less the buffers' addresses (each call's own).
struct KeptMatmul {
  DType dtype, xdtype, ydtype;  // the REDUCE's, and the factors' buffers' (a dense copy's dtype)
  Round rnd;
  bool fused;  // a REDUCE_MULACC (product_shape is then its first source's)
  Shape out_shape, product_shape;
  std::vector<int64_t> kaxes;
  ShapeTracker xv, yv;
  Split split;
  std::shared_ptr<const MatmulLayout> layout;

  bool matches(const Node& out, const Node& x, const Node& y) const {
    return dtype == out.dtype && rnd == out.rnd && fused == (out.op == Op::REDUCE_MULACC) &&
           xdtype == x.buffer->dtype && ydtype == y.buffer->dtype && out_shape == out.shape &&
           kaxes == out.arg.ints && product_shape == out.src[0]->shape && xv == x.view && yv == y.view;
  }
};

// Bounded, oldest replaced first: a model's distinct products (a few per layer) fit. Never
// destroyed: a product may run during static destruction.
constexpr size_t kKeptMatmuls = 16;
constexpr size_t kMaxKeptOffsets = size_t{1} << 14;
struct KeptMatmuls {
  std::mutex m;
  std::vector<KeptMatmul> entries;
  size_t next = 0;
  int64_t hits = 0;
};
KeptMatmuls& kept_matmuls() {
  static auto* s = new KeptMatmuls;
  return *s;
}

}  // namespace

bool find_kept_matmul(const Node& out, const Node& x, const Node& y, MatmulPlan* plan) {
  KeptMatmuls& s = kept_matmuls();
  std::lock_guard<std::mutex> lock(s.m);
  for (const KeptMatmul& e : s.entries) {
    if (!e.matches(out, x, y)) continue;
    // The operands are read in place (keep_matmul keeps no other), at the offsets the layout
    // holds: only their addresses are this call's. Operand::strides and offset only ever fed
    // the layout's key, and are left empty.
    plan->x = Operand{x.buffer->bytes(), {}, 0, nullptr, x.buffer->count};
    plan->y = Operand{y.buffer->bytes(), {}, 0, nullptr, y.buffer->count};
    plan->split = e.split;
    plan->layout = e.layout;
    plan->fused = e.fused;
    const MatmulLayout& l = *e.layout;
    plan->kA = l.kA;
    plan->kB = l.kB;
    plan->rowA = l.rowA;
    plan->colB = l.colB;
    plan->rowC = l.rowC;
    plan->colC = l.colC;
    plan->batchA = l.batchA;
    plan->batchB = l.batchB;
    plan->batchC = l.batchC;
    ++s.hits;
    return true;
  }
  return false;
}

void keep_matmul(const Node& out, const Node& x, const Node& y, const MatmulPlan& plan) {
  if (plan.x.dense || plan.y.dense || !plan.layout) return;
  const MatmulLayout& l = *plan.layout;
  // As matmul_layouts.cpp's store: large products spend far longer in the kernel than planning.
  const size_t offsets = l.kA.size() + l.kB.size() + l.rowA.size() + l.colB.size() + l.rowC.size() +
                         l.colC.size() + l.batchA.size() + l.batchB.size() + l.batchC.size();
  if (offsets > kMaxKeptOffsets) return;
  KeptMatmul e{out.dtype, x.buffer->dtype, y.buffer->dtype, out.rnd, plan.fused, out.shape, out.src[0]->shape,
               out.arg.ints, x.view, y.view, plan.split, plan.layout};
  KeptMatmuls& s = kept_matmuls();
  std::lock_guard<std::mutex> lock(s.m);
  if (s.entries.size() < kKeptMatmuls) s.entries.push_back(std::move(e));
  else s.entries[s.next++ % kKeptMatmuls] = std::move(e);
}

void clear_kept_matmuls() {
  KeptMatmuls& s = kept_matmuls();
  std::lock_guard<std::mutex> lock(s.m);
  s.entries.clear();
  s.next = 0;
  s.hits = 0;
}

int64_t kept_matmul_hits() {
  KeptMatmuls& s = kept_matmuls();
  std::lock_guard<std::mutex> lock(s.m);
  return s.hits;
}

}  // namespace maroon::cpu
