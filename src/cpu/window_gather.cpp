// Window reductions across outputs 2 or more elements apart (window_gather.h). pool_reduce.cpp's
// general path loads one window position for a tile of outputs at a time (a strided pass over
// the tile's rows: 64 passes for softmax's rows of 64, each missing L1 once the rows outgrow it;
// four passes of 4-lane shuffles for a 2x2 max-pool) and then folds it. Here a vector of outputs
// is folded in registers: lane t takes base[t * step + window[k]] for each k in turn, from rows
// transposed in registers (windows of adjacent elements), from even and odd lanes (step 2), or
// gathered (the rest). Each lane's fold is the one fastops' RAdd, RMul and RMax apply to a lane
// (the same IEEE operation, the same canonical NaN, IEEE maximum with +0 over -0), from the same
// identity over the same positions in the same order, so the bits are the same on every target.
// The hardware rounding mode is the caller's (parallel_for sets it for ADD and MUL, as for
// fastops' folds).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/window_gather.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cpu/lane_ops-inl.h"  // Canonical, Maximum, TransposeLanes

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

HWY_BEFORE_NAMESPACE();
namespace maroon::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

struct AddOp {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V a, V b) const { return Canonical(d, hn::Add(a, b)); }
};
struct MulOp {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V a, V b) const { return Canonical(d, hn::Mul(a, b)); }
};
struct MaxOp {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V a, V b) const { return Maximum(d, a, b); }
};

#if HWY_TARGET != HWY_SCALAR && !HWY_HAVE_SCALABLE
// Windows of adjacent elements (window[k] == k, at least a vector long): a vector of outputs
// reads L rows a vector at a time and transposes them in registers, so lane t gets row t's
// positions k0 .. k0 + L - 1, folded in order; the last nwin mod L positions are gathered.
// Gathers alone were about as slow as the strided passes on AMD's AVX-512.
template <class T, class Op>
bool RowsFold(const T* base, int64_t step, const int64_t* window, int nwin, int n, T id, T* acc) {
  const hn::ScalableTag<T> d;
  constexpr size_t kL = hn::MaxLanes(hn::ScalableTag<T>());
  if (nwin < static_cast<int>(kL)) return false;
  for (int k = 0; k < nwin; ++k)
    if (window[k] != k) return false;
  const hn::RebindToSigned<decltype(d)> di;
  using TI = hn::TFromD<decltype(di)>;
  const auto lanes = hn::Mul(hn::Iota(di, 0), hn::Set(di, static_cast<TI>(step)));
  const int L = static_cast<int>(kL), full = nwin / L * L;
  const Op op;
  for (int t = 0; t < n; t += L) {
    const int m = std::min(L, n - t);
    const T* rows[kL];  // lanes past the last output read the first output's row, not stored
    for (int j = 0; j < L; ++j) rows[j] = base + static_cast<int64_t>(t + (j < m ? j : 0)) * step;
    auto a = hn::Set(d, id);
    for (int k0 = 0; k0 < full; k0 += L) {
      hn::Vec<decltype(d)> v[kL];
      for (int j = 0; j < L; ++j) v[j] = hn::LoadU(d, rows[j] + k0);
      TransposeLanes(d, v);
      for (int c = 0; c < L; ++c) a = op(d, a, v[c]);
    }
    const auto idx = m == L ? lanes : hn::IfThenElseZero(hn::FirstN(di, static_cast<size_t>(m)), lanes);
    for (int k = full; k < nwin; ++k) a = op(d, a, hn::GatherIndex(d, rows[0] + k, idx));
    if (m == L) {
      hn::StoreU(a, d, acc + t);
    } else {
      HWY_ALIGN T tmp[kL];
      hn::Store(a, d, tmp);
      std::memcpy(acc + t, tmp, static_cast<size_t>(m) * sizeof(T));
    }
  }
  return true;
}

// Outputs 2 apart (the pools' 2 x k windows at stride 2): lane t of window position o is
// row[2t + o]. Positions o, o + 1 (a window row's pair) are the even and odd lanes of the 2L
// elements from row + o, whose last is the last output's element o + 1; a position without its
// pair takes the even lanes of row[o, o + L) and the odd ones of row[o + L - 1, o + 2L - 1), so
// no read goes past the last output's element either.
template <class D, class Op, class T = hn::TFromD<D>>
HWY_INLINE void PairsVector(D d, const T* row, const int64_t* window, int nwin, T id, T* out) {
  const size_t L = hn::Lanes(d);
  const Op op;
  auto a = hn::Set(d, id);
  for (int k = 0; k < nwin;) {
    const T* p = row + window[k];
    if (k + 1 < nwin && window[k + 1] == window[k] + 1) {
      const auto lo = hn::LoadU(d, p), hi = hn::LoadU(d, p + L);
      a = op(d, a, hn::ConcatEven(d, hi, lo));
      a = op(d, a, hn::ConcatOdd(d, hi, lo));
      k += 2;
    } else {
      const auto lo = hn::LoadU(d, p), hi = hn::LoadU(d, p + L - 1);
      a = op(d, a, hn::ConcatUpperLower(d, hn::ConcatOdd(d, hi, lo), hn::ConcatEven(d, hi, lo)));
      k += 1;
    }
  }
  hn::StoreU(a, d, out);
}

// Outputs [0, n) at step 2: whole vectors, then half vectors where a vector holds 8 or more;
// returns how many outputs it folded (the rest are gathered).
template <class T, class Op>
int PairsFold(const T* base, const int64_t* window, int nwin, int n, T id, T* acc) {
  const hn::ScalableTag<T> d;
  const int L = static_cast<int>(hn::Lanes(d));
  int t = 0;
  for (; t + L <= n; t += L) PairsVector<decltype(d), Op>(d, base + 2 * static_cast<int64_t>(t), window, nwin, id, acc + t);
  if constexpr (hn::MaxLanes(hn::ScalableTag<T>()) >= 8) {
    const hn::Half<decltype(d)> dh;
    for (; t + L / 2 <= n; t += L / 2)
      PairsVector<decltype(dh), Op>(dh, base + 2 * static_cast<int64_t>(t), window, nwin, id, acc + t);
  }
  return t;
}
// Maximum (lane_ops-inl.h) of two operands neither of which is a NaN: the larger, and of equal
// ones (+0 and -0 among them) their AND, +0 over -0. Max's choice between equal operands differs
// by target; the AND makes it the same.
template <class D, class V>
HWY_INLINE V MaxOrdered(D, V a, V b) {
  return hn::IfThenElse(hn::Eq(a, b), hn::And(a, b), hn::Max(a, b));
}

// A 2 x 2 window at stride 2 (offsets w0, w0 + 1, w1, w1 + 1: the CNN's max-pools): the same
// lanes and the same fold order as PairsVector, with the window's shape known, so no loop over
// it and no test of each position's pair.
// Lanes [0, L/2) are the outputs from `row`, lanes [L/2, L) those from `next`: row + L for a run
// of L outputs, the next run's start for two runs of L/2 (the CNN's second pool: rows of 8).
// least: id is -inf, so its MAX step returns the first position's value unless that is a NaN.
template <class D, class Op, class T = hn::TFromD<D>>
HWY_INLINE void Pairs2x2Vector(D d, const T* row, const T* next, int64_t w0, int64_t w1, hn::Vec<D> id, bool least,
                               T* out) {
  const Op op;
  const auto lo0 = hn::LoadU(d, row + w0), hi0 = hn::LoadU(d, next + w0);
  const auto lo1 = hn::LoadU(d, row + w1), hi1 = hn::LoadU(d, next + w1);
  if constexpr (std::is_same_v<Op, MaxOp>) {
    // Without a NaN, each step is MaxOrdered: the larger under the order -inf < ... < -0 < +0 <
    // ... < +inf, which does not depend on the order of the operands: the window's rows first
    // (lanes in place), then its pairs (one lane move for two rows), the same value as the fold
    // in order below, with half its compares and permutes (the fold runs in the CNN's conv
    // epilogue, epilogue_pool.cpp). A sum is NaN if an element is (or for +inf + -inf: the fold).
    const auto sum = hn::Add(hn::Add(lo0, lo1), hn::Add(hi0, hi1));
    if (least && hn::AllFalse(d, hn::IsNaN(sum))) {
      const auto vlo = MaxOrdered(d, lo0, lo1), vhi = MaxOrdered(d, hi0, hi1);
      hn::StoreU(MaxOrdered(d, hn::ConcatEven(d, vhi, vlo), hn::ConcatOdd(d, vhi, vlo)), d, out);
      return;
    }
  }
  const auto e0 = hn::ConcatEven(d, hi0, lo0), e1 = hn::ConcatOdd(d, hi0, lo0);
  const auto e2 = hn::ConcatEven(d, hi1, lo1), e3 = hn::ConcatOdd(d, hi1, lo1);
  if constexpr (std::is_same_v<Op, MaxOp>) {
    // Maximum's fold with its NaN rule applied once: a NaN anywhere in a lane's fold makes every
    // later step, so the result, the canonical NaN; without one each step is the larger
    // operand, +0 over -0 (MaxOrdered), in the same order.
    auto a = MaxOrdered(d, MaxOrdered(d, MaxOrdered(d, MaxOrdered(d, id, e0), e1), e2), e3);
    const auto nan = hn::Or(hn::Or(hn::IsNaN(id), hn::IsNaN(e0)),
                            hn::Or(hn::Or(hn::IsNaN(e1), hn::IsNaN(e2)), hn::IsNaN(e3)));
    a = hn::IfThenElse(nan, Canonical(d, hn::NaN(d)), a);
    hn::StoreU(a, d, out);
  } else {
    auto a = op(d, op(d, op(d, op(d, id, e0), e1), e2), e3);
    hn::StoreU(a, d, out);
  }
}
#endif

template <class T, class Op>
void GatherFold(const void* pbase, int64_t step, const int64_t* window, int nwin, int n, uint64_t identity,
                void* pacc) {
  const hn::ScalableTag<T> d;
  const hn::RebindToSigned<decltype(d)> di;
  using TI = hn::TFromD<decltype(di)>;
  const T* base = static_cast<const T*>(pbase);
  T* acc = static_cast<T*>(pacc);
  T id;
  std::memcpy(&id, &identity, sizeof(T));  // the low bytes, as fastops' folds read them
#if HWY_TARGET != HWY_SCALAR && !HWY_HAVE_SCALABLE
  if (step == 2) {  // whole (and half) vectors here, the last few outputs gathered below
    const int done = PairsFold<T, Op>(base, window, nwin, n, id, acc);
    base += 2 * static_cast<int64_t>(done);
    acc += done;
    n -= done;
  } else if (RowsFold<T, Op>(base, step, window, nwin, n, id, acc)) {
    return;
  }
#endif
  const int L = static_cast<int>(hn::Lanes(d));
  // Lane t reads t * step past the vector's first output (|step| * L < 2^31: the caller's check).
  const auto lanes = hn::Mul(hn::Iota(di, 0), hn::Set(di, static_cast<TI>(step)));
  const Op op;
  for (int t = 0; t < n; t += L) {
    const int m = std::min(L, n - t);
    // Lanes past the last output read the first one's elements (valid) and are not stored.
    const auto idx = m == L ? lanes : hn::IfThenElseZero(hn::FirstN(di, static_cast<size_t>(m)), lanes);
    const T* row = base + static_cast<int64_t>(t) * step;
    auto a = hn::Set(d, id);
    for (int k = 0; k < nwin; ++k) a = op(d, a, hn::GatherIndex(d, row + window[k], idx));
    if (m == L) {
      hn::StoreU(a, d, acc + t);
    } else {
      HWY_ALIGN T tmp[hn::MaxLanes(d)];
      hn::Store(a, d, tmp);
      std::memcpy(acc + t, tmp, static_cast<size_t>(m) * sizeof(T));
    }
  }
}

// Every run of a task's outputs of a 2 x 2 pool at stride 2 (window_gather.h): whole vectors,
// then half vectors, then the last few gathered, as GatherFold folds them; one call a task, so a
// run (8 or 16 outputs in the CNN) costs a loop step, not a dispatched call and a window loop.
template <class T, class Op>
void Pool2x2Runs(const void* pbase, const int64_t* window, const int64_t* start, const int* at, int nruns,
                 uint64_t identity, void* pacc) {
  const T* base = static_cast<const T*>(pbase);
  T* acc = static_cast<T*>(pacc);
#if HWY_TARGET != HWY_SCALAR && !HWY_HAVE_SCALABLE
  T id;
  std::memcpy(&id, &identity, sizeof(T));
  const hn::ScalableTag<T> d;
  const hn::Half<decltype(d)> dh;
  const int L = static_cast<int>(hn::Lanes(d));
  const auto idv = hn::Set(d, id);
  const auto idh = hn::Set(dh, id);
  const bool least = id == -std::numeric_limits<T>::infinity();
  const int64_t w0 = window[0], w1 = window[2];
  for (int r = 0; r < nruns; ++r) {
    const T* row = base + start[r];
    T* out = acc + at[r];
    const int n = at[r + 1] - at[r];
    if (n == L / 2 && r + 1 < nruns && at[r + 2] - at[r + 1] == L / 2) {  // two half runs in one vector
      Pairs2x2Vector<decltype(d), Op>(d, row, base + start[r + 1], w0, w1, idv, least, out);
      ++r;
      continue;
    }
    int t = 0;
    for (; t + L <= n; t += L) {
      const T* p = row + 2 * static_cast<int64_t>(t);
      Pairs2x2Vector<decltype(d), Op>(d, p, p + L, w0, w1, idv, least, out + t);
    }
    if constexpr (hn::MaxLanes(hn::ScalableTag<T>()) >= 8) {
      for (; t + L / 2 <= n; t += L / 2) {
        const T* p = row + 2 * static_cast<int64_t>(t);
        Pairs2x2Vector<decltype(dh), Op>(dh, p, p + L / 2, w0, w1, idh, least, out + t);
      }
    }
    if (t < n) GatherFold<T, Op>(row + 2 * static_cast<int64_t>(t), 2, window, 4, n - t, identity, out + t);
  }
#else
  for (int r = 0; r < nruns; ++r)
    GatherFold<T, Op>(base + start[r], 2, window, 4, at[r + 1] - at[r], identity, acc + at[r]);
#endif
}

void GAddF32(const void* b, int64_t s, const int64_t* w, int nw, int n, uint64_t i, void* a) { GatherFold<float, AddOp>(b, s, w, nw, n, i, a); }
void GMulF32(const void* b, int64_t s, const int64_t* w, int nw, int n, uint64_t i, void* a) { GatherFold<float, MulOp>(b, s, w, nw, n, i, a); }
void GMaxF32(const void* b, int64_t s, const int64_t* w, int nw, int n, uint64_t i, void* a) { GatherFold<float, MaxOp>(b, s, w, nw, n, i, a); }
void GAddF64(const void* b, int64_t s, const int64_t* w, int nw, int n, uint64_t i, void* a) { GatherFold<double, AddOp>(b, s, w, nw, n, i, a); }
void GMulF64(const void* b, int64_t s, const int64_t* w, int nw, int n, uint64_t i, void* a) { GatherFold<double, MulOp>(b, s, w, nw, n, i, a); }
void GMaxF64(const void* b, int64_t s, const int64_t* w, int nw, int n, uint64_t i, void* a) { GatherFold<double, MaxOp>(b, s, w, nw, n, i, a); }

#define MAROON_POOL_RUNS(NAME, T, OP)                                                                         \
  void NAME(const void* b, const int64_t* w, const int64_t* s, const int* at, int nr, uint64_t i, void* a) { \
    Pool2x2Runs<T, OP>(b, w, s, at, nr, i, a);                                                              \
  }
MAROON_POOL_RUNS(PAddF32, float, AddOp) MAROON_POOL_RUNS(PMulF32, float, MulOp) MAROON_POOL_RUNS(PMaxF32, float, MaxOp)
MAROON_POOL_RUNS(PAddF64, double, AddOp) MAROON_POOL_RUNS(PMulF64, double, MulOp) MAROON_POOL_RUNS(PMaxF64, double, MaxOp)
#undef MAROON_POOL_RUNS

}  // namespace maroon::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "cpu/window_gather.h"

namespace maroon::cpu {

HWY_EXPORT(GAddF32);
HWY_EXPORT(GMulF32);
HWY_EXPORT(GMaxF32);
HWY_EXPORT(GAddF64);
HWY_EXPORT(GMulF64);
HWY_EXPORT(GMaxF64);
HWY_EXPORT(PAddF32);
HWY_EXPORT(PMulF32);
HWY_EXPORT(PMaxF32);
HWY_EXPORT(PAddF64);
HWY_EXPORT(PMulF64);
HWY_EXPORT(PMaxF64);

namespace {
#define MAROON_GATHER_DISPATCH(NAME)                                                              \
  void NAME##_d(const void* b, int64_t s, const int64_t* w, int nw, int n, uint64_t i, void* a) { \
    HWY_DYNAMIC_DISPATCH(NAME)(b, s, w, nw, n, i, a);                                             \
  }
MAROON_GATHER_DISPATCH(GAddF32) MAROON_GATHER_DISPATCH(GMulF32) MAROON_GATHER_DISPATCH(GMaxF32)
MAROON_GATHER_DISPATCH(GAddF64) MAROON_GATHER_DISPATCH(GMulF64) MAROON_GATHER_DISPATCH(GMaxF64)
#undef MAROON_GATHER_DISPATCH
#define MAROON_POOL_DISPATCH(NAME)                                                                             \
  void NAME##_d(const void* b, const int64_t* w, const int64_t* s, const int* at, int nr, uint64_t i, void* a) { \
    HWY_DYNAMIC_DISPATCH(NAME)(b, w, s, at, nr, i, a);                                                           \
  }
MAROON_POOL_DISPATCH(PAddF32) MAROON_POOL_DISPATCH(PMulF32) MAROON_POOL_DISPATCH(PMaxF32)
MAROON_POOL_DISPATCH(PAddF64) MAROON_POOL_DISPATCH(PMulF64) MAROON_POOL_DISPATCH(PMaxF64)
#undef MAROON_POOL_DISPATCH
}  // namespace

WindowGatherFn window_gather(ReduceOp op, DType d) {
  if (d == DType::Float32) return op == ReduceOp::ADD ? GAddF32_d : op == ReduceOp::MUL ? GMulF32_d : GMaxF32_d;
  if (d == DType::Float64) return op == ReduceOp::ADD ? GAddF64_d : op == ReduceOp::MUL ? GMulF64_d : GMaxF64_d;
  return nullptr;
}

Pool2x2RunsFn pool2x2_runs(ReduceOp op, DType d) {
  if (d == DType::Float32) return op == ReduceOp::ADD ? PAddF32_d : op == ReduceOp::MUL ? PMulF32_d : PMaxF32_d;
  if (d == DType::Float64) return op == ReduceOp::ADD ? PAddF64_d : op == ReduceOp::MUL ? PMulF64_d : PMaxF64_d;
  return nullptr;
}

}  // namespace maroon::cpu
#endif  // HWY_ONCE
