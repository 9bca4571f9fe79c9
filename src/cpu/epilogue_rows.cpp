// Row epilogues (epilogue_rows.h): `t = self + x1 + ...` then ReLU's WHERE(CMPLT(0, t), t, z), a
// vector at a time. Through the tile interpreter (a staged bias tile, the accumulator machine's
// steps, the per-tile leaf setup) the bias + ReLU of the ONNX CNN's first conv cost about as much
// as the conv itself (0.29 against 0.37 ms at batch 32). Each add is the IEEE add the program's
// ADD is (rounded to nearest, the caller's mode), in the program's order; CMPLT(0, t) is false for
// a NaN and for either zero, so those lanes take z, as WHERE does; without the ReLU a NaN sum is
// made the canonical NaN, as a kernel stores it. So the bits of the tile interpreter's pass.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/epilogue_rows.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cpu/lane_ops-inl.h"  // Canonical

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "cpu/epilogue_rows.h"

HWY_BEFORE_NAMESPACE();
namespace maroon::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// One element as the vector loop computes it (the tail, and every element on HWY_SCALAR alike).
template <class T>
HWY_INLINE T CanonicalOne(T t) {
  if (t == t) return t;
  if constexpr (sizeof(T) == 4) { const uint32_t q = 0x7FC00000u; std::memcpy(&t, &q, 4); }
  else { const uint64_t q = 0x7FF8000000000000ull; std::memcpy(&t, &q, 8); }
  return t;
}

// MAX as docs/spec.md §7 defines it (IEEE maximum: a NaN wins, made canonical; +0 above -0),
// one element: Maximum's lanes (lane_ops-inl.h).
template <class T>
HWY_INLINE T MaximumOne(T a, T b) {
  if (a != a || b != b) return CanonicalOne(a + b);
  if (a == b) {  // equal values: the AND of their bits (+0 of +0 and -0; else the same bits)
    using U = hwy::MakeUnsigned<T>;
    U x, y;
    std::memcpy(&x, &a, sizeof(T));
    std::memcpy(&y, &b, sizeof(T));
    x &= y;
    std::memcpy(&a, &x, sizeof(T));
    return a;
  }
  return a < b ? b : a;
}

template <class T>
HWY_INLINE T StepScalar(const RowSteps& st, int s) {
  T v;
  std::memcpy(&v, &st.bits[s], sizeof(T));
  return v;
}

template <class T>
HWY_INLINE T RowOne(T t, int adds, const T* const* src, const bool* stream, const bool* pair, int64_t i, bool relu,
                    T z, const RowSteps& st) {
  for (int a = 0; a < adds; ++a) {
    T x = stream[2 * a] ? src[2 * a][i] : src[2 * a][0];
    if (pair[a]) x = x + (stream[2 * a + 1] ? src[2 * a + 1][i] : src[2 * a + 1][0]);
    t = t + x;
  }
  for (int s = 0; s < st.n; ++s) t = st.max[s] ? MaximumOne(t, StepScalar<T>(st, s)) : t * StepScalar<T>(st, s);
  if (relu) return T(0) < t ? t : z;
  if (t != t) {  // NaN: the canonical one
    if constexpr (sizeof(T) == 4) { const uint32_t q = 0x7FC00000u; std::memcpy(&t, &q, 4); }
    else { const uint64_t q = 0x7FF8000000000000ull; std::memcpy(&t, &q, 8); }
  }
  return t;
}

// One add of one element along the run (conv2d's bias) and the ReLU: the CNN's convs. RowRun's
// loop below without its tests of each add's kind and of relu in the loop (callgrind: about 24
// instructions a vector of 8 on AVX2, for a load, an add, a compare, a blend and a store).
template <class T>
void BiasReluRun(T* HWY_RESTRICT c, int64_t n, T bias, T z) {
  const hn::ScalableTag<T> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const auto zero = hn::Zero(d), zv = hn::Set(d, z), b = hn::Set(d, bias);
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    const auto t = hn::Add(hn::LoadU(d, c + i), b);
    hn::StoreU(hn::IfThenElse(hn::Lt(zero, t), t, zv), d, c + i);
  }
  for (; i < n; ++i) {
    const T t = c[i] + bias;
    c[i] = T(0) < t ? t : z;
  }
}

// ONNX's Clip after an optional bias of one element (MobileNet's conv, bias, ReLU6): t = c + bias,
// MAX(t, lo), MUL by -1, MAX with -hi, MUL by -1: RowRun's steps without their loop and tests (the
// generic loop ran this at 0.6 ms more than a ReLU on a (32,64,32,32) conv). lo and -hi are
// neither NaN nor -0 (is_clip). Then, for t not NaN: MAX(t, s) is t where s < t, else s (equal,
// they are the same bits, or t = -0 against s = +0, whose MAX is +0 = s); a MUL by -1 flips the
// sign exactly; no step makes a NaN. For t NaN every step's result is a NaN and the result is
// the canonical NaN: that lane is set last. So the program's bits.
template <class T>
void ClipRun(T* HWY_RESTRICT c, int64_t n, bool has_bias, T bias, T lo, T nhi) {
  const hn::ScalableTag<T> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const auto b = hn::Set(d, bias), l = hn::Set(d, lo), h = hn::Set(d, nhi);
  const auto nan = Canonical(d, hn::NaN(d));
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    auto t = hn::LoadU(d, c + i);
    if (has_bias) t = hn::Add(t, b);
    const auto is_nan = hn::IsNaN(t);
    t = hn::IfThenElse(hn::Lt(l, t), t, l);
    t = hn::Neg(t);
    t = hn::Neg(hn::IfThenElse(hn::Lt(h, t), t, h));
    hn::StoreU(hn::IfThenElse(is_nan, nan, t), d, c + i);
  }
  for (; i < n; ++i) {
    T t = has_bias ? c[i] + bias : c[i];
    c[i] = CanonicalOne(-MaximumOne(-MaximumOne(t, lo), nhi));
  }
}

// ReLU's gradient mask (RowEpilogue::mask): c[i] = 0 < m[i] ? c[i] : z, WHERE over CMPLT as the
// program has them (false for a NaN and either zero in m).
template <class T>
void MaskRun(T* HWY_RESTRICT c, int64_t n, const T* HWY_RESTRICT m, T z) {
  const hn::ScalableTag<T> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const auto zero = hn::Zero(d), zv = hn::Set(d, z);
  int64_t i = 0;
  for (; i + L <= n; i += L)
    hn::StoreU(hn::IfThenElse(hn::Lt(zero, hn::LoadU(d, m + i)), hn::LoadU(d, c + i), zv), d, c + i);
  for (; i < n; ++i) c[i] = T(0) < m[i] ? c[i] : z;
}

template <class T>
void RowRun(T* HWY_RESTRICT c, int64_t n, int adds, const T* const* src, const bool* stream, const bool* pair,
            bool relu, T z, const RowSteps& st) {
  const hn::ScalableTag<T> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const auto zero = hn::Zero(d), zv = hn::Set(d, z);
  auto operand = [&](int s, int64_t i) { return stream[s] ? hn::LoadU(d, src[s] + i) : hn::Set(d, src[s][0]); };
  int64_t i = 0;
  for (; i + L <= n; i += L) {  // (no arrays of vectors: SVE's are sizeless)
    auto t = hn::LoadU(d, c + i);
    for (int a = 0; a < adds; ++a) {
      auto x = operand(2 * a, i);
      if (pair[a]) x = hn::Add(x, operand(2 * a + 1, i));
      t = hn::Add(t, x);
    }
    for (int s = 0; s < st.n; ++s) {  // a NaN from an add or a MUL is made canonical below or by a MAX
      const auto v = hn::Set(d, StepScalar<T>(st, s));
      t = st.max[s] ? Maximum(d, t, v) : hn::Mul(t, v);
    }
    t = relu ? hn::IfThenElse(hn::Lt(zero, t), t, zv) : Canonical(d, t);
    hn::StoreU(t, d, c + i);
  }
  for (; i < n; ++i) c[i] = RowOne(c[i], adds, src, stream, pair, i, relu, z, st);
}

void RowF32(void* c, int64_t n, int adds, const void* const* src, const bool* stream, const bool* pair, bool relu,
            const void* z, const RowSteps* st) {
  RowRun(static_cast<float*>(c), n, adds, reinterpret_cast<const float* const*>(src), stream, pair, relu,
         relu ? *static_cast<const float*>(z) : 0.0f, *st);
}
void RowF64(void* c, int64_t n, int adds, const void* const* src, const bool* stream, const bool* pair, bool relu,
            const void* z, const RowSteps* st) {
  RowRun(static_cast<double*>(c), n, adds, reinterpret_cast<const double* const*>(src), stream, pair, relu,
         relu ? *static_cast<const double*>(z) : 0.0, *st);
}

// The Clip's bounds are steps 0 and 2 (MAX with lo, MAX with -hi).
template <class T>
void ClipTyped(void* c, int64_t n, const void* bias, const RowSteps* st) {
  T b = 0, lo, nhi;
  if (bias) std::memcpy(&b, bias, sizeof(T));
  std::memcpy(&lo, &st->bits[0], sizeof(T));
  std::memcpy(&nhi, &st->bits[2], sizeof(T));
  ClipRun(static_cast<T*>(c), n, bias != nullptr, b, lo, nhi);
}
void ClipF32(void* c, int64_t n, const void* bias, const RowSteps* st) { ClipTyped<float>(c, n, bias, st); }
void ClipF64(void* c, int64_t n, const void* bias, const RowSteps* st) { ClipTyped<double>(c, n, bias, st); }

void MaskF32(void* c, int64_t n, const void* m, const void* z) {
  MaskRun(static_cast<float*>(c), n, static_cast<const float*>(m), *static_cast<const float*>(z));
}
void MaskF64(void* c, int64_t n, const void* m, const void* z) {
  MaskRun(static_cast<double*>(c), n, static_cast<const double*>(m), *static_cast<const double*>(z));
}

void BiasReluF32(void* c, int64_t n, const void* bias, const void* z) {
  BiasReluRun(static_cast<float*>(c), n, *static_cast<const float*>(bias), *static_cast<const float*>(z));
}
void BiasReluF64(void* c, int64_t n, const void* bias, const void* z) {
  BiasReluRun(static_cast<double*>(c), n, *static_cast<const double*>(bias), *static_cast<const double*>(z));
}

}  // namespace maroon::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace maroon::cpu {
HWY_EXPORT(RowF32);
HWY_EXPORT(RowF64);
HWY_EXPORT(BiasReluF32);
HWY_EXPORT(BiasReluF64);
HWY_EXPORT(MaskF32);
HWY_EXPORT(ClipF32);
HWY_EXPORT(ClipF64);
HWY_EXPORT(MaskF64);

namespace {
std::atomic<int64_t> g_tasks{0}, g_bias_relu_tasks{0}, g_pair_tasks{0}, g_mask_tasks{0}, g_step_tasks{0},
    g_clip_tasks{0};
// Whether this thread's task has run a row by BiasReluRun, or with an operand that is a sum of two
// leaves (counted once per task, in count_row_epilogue_task: an atomic add per row would be
// shared by the threads).
thread_local bool t_bias_relu = false, t_pair = false, t_mask = false, t_steps = false, t_clip = false;

// The steps MAX(lo), MUL(-1), MAX(-hi), MUL(-1) with lo and -hi neither NaN nor -0: ClipRun's.
bool is_clip(const RowSteps& st, DType dtype) {
  if (st.n != 4 || !st.max[0] || st.max[1] || !st.max[2] || st.max[3]) return false;
  const bool f32 = dtype == DType::Float32;
  const uint64_t minus_one = f32 ? 0xBF800000ull : 0xBFF0000000000000ull;
  const uint64_t minus_zero = f32 ? 0x80000000ull : 0x8000000000000000ull;
  auto plain = [&](uint64_t bits) {  // neither NaN nor -0
    const bool nan = f32 ? (bits & 0x7FFFFFFFull) > 0x7F800000ull : (bits & ~minus_zero) > 0x7FF0000000000000ull;
    return !nan && bits != minus_zero;
  };
  return st.bits[1] == minus_one && st.bits[3] == minus_one && plain(st.bits[0]) && plain(st.bits[2]);
}

bool is_zero(const void* p, DType d) {  // bits of +0 or -0
  const size_t sz = itemsize(d);
  uint64_t b = 0;
  std::memcpy(&b, p, sz);
  return (b << (64 - 8 * sz) << 1) == 0;
}
}  // namespace

bool match_row_epilogue(const Program& prog, const std::vector<LeafRead>& reads,
                        const std::vector<const void*>& scalar, RowEpilogue* e) {
  const DType d = prog.dtype;
  const int L = static_cast<int>(prog.leaves.size()), n = static_cast<int>(prog.code.size());
  if ((d != DType::Float32 && d != DType::Float64) || !prog.outputs.empty() || n == 0 ||
      reads.size() != prog.leaves.size() || scalar.size() != prog.leaves.size())
    return false;
  int cur = -1;  // the running value: the product, then each add's result
  for (int l = 0; l < L; ++l)
    if (reads[l] == LeafRead::kSelf) cur = l;
  if (cur < 0) return false;
  auto readable = [&](int v) { return v >= 0 && v < L && reads[v] != LeafRead::kOther && reads[v] != LeafRead::kSelf; };
  RowEpilogue r;
  r.dtype = d;
  // Per instruction: an ADD of two leaves not yet added to t (each must be, once).
  std::vector<char> pending(static_cast<size_t>(n), 0);
  int i = 0;
  for (; i < n && prog.code[i].op == Op::ADD; ++i) {
    const Instr& ins = prog.code[i];
    if (ins.in != d || ins.out != d || ins.rnd != Round::NearestEven || ins.nsrc != 2) return false;
    if (ins.src[0] != cur && ins.src[1] != cur) {  // y + b beside the chain, added to t later
      if (!readable(ins.src[0]) || !readable(ins.src[1])) return false;
      pending[i] = 1;
      continue;
    }
    const int other = ins.src[0] == cur ? ins.src[1] : ins.src[0];
    if (r.adds == RowEpilogue::kMaxAdds) return false;
    r.leaf2[r.adds] = -1;
    if (other >= L && other - L < i && pending[other - L]) {
      const Instr& y = prog.code[other - L];
      pending[other - L] = 0;  // used once: its value is computed where t takes it
      r.leaf[r.adds] = y.src[0];
      r.leaf2[r.adds] = y.src[1];
    } else if (readable(other)) {
      r.leaf[r.adds] = other;
    } else {
      return false;
    }
    ++r.adds;
    cur = L + i;
  }
  if (std::find(pending.begin(), pending.end(), 1) != pending.end()) return false;
  // MAX or MUL of the running value and one element everywhere (a Clip), each rounded to nearest.
  RowSteps& st = r.steps;
  for (; i < n && st.n < RowSteps::kMax; ++i) {
    const Instr& ins = prog.code[i];
    if ((ins.op != Op::MAX && ins.op != Op::MUL) || ins.in != d || ins.out != d || ins.nsrc != 2 ||
        (ins.op == Op::MUL && ins.rnd != Round::NearestEven))
      break;
    if (ins.src[0] != cur && ins.src[1] != cur) break;
    const int other = ins.src[0] == cur ? ins.src[1] : ins.src[0];
    if (other < 0 || other >= L || reads[other] != LeafRead::kScalar || !scalar[other] ||
        prog.leaves[other]->dtype != d)
      break;
    st.max[st.n] = ins.op == Op::MAX;
    std::memcpy(&st.bits[st.n], scalar[other], itemsize(d));
    ++st.n;
    cur = L + i;
  }
  if (i + 2 == n && st.n == 0) {  // ReLU: CMPLT(0, t), then WHERE(that, t, z); or its gradient, CMPLT(0, m)
    const Instr& cmp = prog.code[i];
    const Instr& sel = prog.code[i + 1];
    const int zc = cmp.src[0];
    if (cmp.op != Op::CMPLT || cmp.in != d || cmp.nsrc != 2 || zc >= L || reads[zc] != LeafRead::kScalar ||
        !scalar[zc] || !is_zero(scalar[zc], d))
      return false;
    if (cmp.src[1] != cur) {  // the mask: a leaf in the output's layout, and no adds before
      const int m = cmp.src[1];
      if (r.adds != 0 || m < 0 || m >= L || reads[m] != LeafRead::kStream || prog.leaves[m]->dtype != d) return false;
      r.mask = m;
    }
    if (sel.op != Op::WHERE || sel.in != d || sel.out != d || sel.nsrc != 3 || sel.src[0] != L + i ||
        sel.src[1] != cur || sel.src[2] >= L || reads[sel.src[2]] != LeafRead::kScalar)
      return false;
    r.relu = true;
    r.zero = sel.src[2];
    cur = L + i + 1;
  } else if (i != n) {
    return false;
  }
  if (prog.result != cur) return false;
  // (The bias is a one-element add where its leaf reads one element along the run or everywhere.)
  r.clip = is_clip(st, d) && (r.adds == 0 || (r.adds == 1 && r.leaf2[0] < 0 &&
                                              (reads[r.leaf[0]] == LeafRead::kScalar ||
                                               reads[r.leaf[0]] == LeafRead::kRunScalar)));
  *e = r;
  return true;
}

void run_row_epilogue(const RowEpilogue& e, void* c, int64_t n, const void* const* src, const bool* stream,
                      const void* z) {
  if (e.mask >= 0) {
    t_mask = true;
    if (e.dtype == DType::Float32) HWY_DYNAMIC_DISPATCH(MaskF32)(c, n, src[kMaskSlot], z);
    else HWY_DYNAMIC_DISPATCH(MaskF64)(c, n, src[kMaskSlot], z);
    return;
  }
  if (e.adds == 1 && !stream[0] && e.leaf2[0] < 0 && e.relu) {
    t_bias_relu = true;
    if (e.dtype == DType::Float32) HWY_DYNAMIC_DISPATCH(BiasReluF32)(c, n, src[0], z);
    else HWY_DYNAMIC_DISPATCH(BiasReluF64)(c, n, src[0], z);
    return;
  }
  bool pair[RowEpilogue::kMaxAdds] = {};
  for (int a = 0; a < e.adds; ++a) t_pair |= pair[a] = e.leaf2[a] >= 0;
  t_steps |= e.steps.n > 0;
  if (e.clip) {
    t_clip = true;
    if (e.dtype == DType::Float32) HWY_DYNAMIC_DISPATCH(ClipF32)(c, n, e.adds ? src[0] : nullptr, &e.steps);
    else HWY_DYNAMIC_DISPATCH(ClipF64)(c, n, e.adds ? src[0] : nullptr, &e.steps);
    return;
  }
  if (e.dtype == DType::Float32) HWY_DYNAMIC_DISPATCH(RowF32)(c, n, e.adds, src, stream, pair, e.relu, z, &e.steps);
  else HWY_DYNAMIC_DISPATCH(RowF64)(c, n, e.adds, src, stream, pair, e.relu, z, &e.steps);
}

int64_t row_epilogue_tasks() { return g_tasks.load(std::memory_order_relaxed); }
void count_row_epilogue_task() {
  g_tasks.fetch_add(1, std::memory_order_relaxed);
  if (t_bias_relu) g_bias_relu_tasks.fetch_add(1, std::memory_order_relaxed);
  if (t_pair) g_pair_tasks.fetch_add(1, std::memory_order_relaxed);
  if (t_mask) g_mask_tasks.fetch_add(1, std::memory_order_relaxed);
  if (t_steps) g_step_tasks.fetch_add(1, std::memory_order_relaxed);
  if (t_clip) g_clip_tasks.fetch_add(1, std::memory_order_relaxed);
  t_bias_relu = t_pair = t_mask = t_steps = t_clip = false;
}
int64_t mask_row_tasks() { return g_mask_tasks.load(std::memory_order_relaxed); }
int64_t step_row_tasks() { return g_step_tasks.load(std::memory_order_relaxed); }
int64_t clip_row_tasks() { return g_clip_tasks.load(std::memory_order_relaxed); }
int64_t pair_row_tasks() { return g_pair_tasks.load(std::memory_order_relaxed); }
int64_t bias_relu_row_tasks() { return g_bias_relu_tasks.load(std::memory_order_relaxed); }

}  // namespace maroon::cpu
#endif
