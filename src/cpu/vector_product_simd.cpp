// vector_product.h's kernel, compiled once per SIMD target. Lane t of a vector is output t of a
// run; each lane's fold is the reference's: acc = +0, then for k in order acc + round(a * w)
// rounded (REDUCE ADD over MUL) or round(a * w + acc) once (REDUCE_MULACC, an FMA instruction),
// in the caller's hardware rounding mode, and a NaN made the canonical one at the end (a NaN
// anywhere in the chain stays a NaN, so only its payload could differ, and the reference's is
// canonical). Rows one apart are loaded whole, two apart as the even lanes of two vectors; other
// steps, a run's last vector where a whole one would read past the buffer, and rows at any
// offsets (vector_rows) are gathered.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/vector_product_simd.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cpu/lane_ops-inl.h"  // Canonical

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "cpu/vector_product.h"

HWY_BEFORE_NAMESPACE();
namespace maroon::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <bool kFma, class D, class V>
HWY_INLINE V Step(D d, V acc, V a, hn::TFromD<D> w) {
  if constexpr (kFma) {
#if HWY_NATIVE_FMA
    return hn::MulAdd(a, hn::Set(d, w), acc);
#else
    static_assert(sizeof(D) == 0, "no FMA instruction on this target: fused products are not run here");
#endif
  }
  return hn::Add(acc, hn::Mul(a, hn::Set(d, w)));
}

// The loads of one vector of outputs: Whole (one apart), Pairs (two apart: the even lanes of
// two vectors, as window_gather.cpp's pools), Strided (gathered), each where its reads stay in
// the buffer; else Partial (gathered, lanes past `m` reading lane 0's elements).
enum class Load { Whole, Pairs, Strided, Partial };

template <bool kFma, Load kLoad, class D, class DI, class T = hn::TFromD<D>>
HWY_INLINE hn::Vec<D> Fold(D d, DI di, const T* a, const int64_t* kA, const T* w, int K, hn::Vec<DI> idx) {
  auto acc = hn::Zero(d);
  for (int k = 0; k < K; ++k) {
    hn::Vec<D> v;
    if constexpr (kLoad == Load::Whole) {
      v = hn::LoadU(d, a + kA[k]);
    } else if constexpr (kLoad == Load::Pairs) {
#if HWY_TARGET != HWY_SCALAR
      v = hn::ConcatEven(d, hn::LoadU(d, a + kA[k] + hn::Lanes(d)), hn::LoadU(d, a + kA[k]));
#else
      v = hn::GatherIndex(d, a + kA[k], idx);  // not used: one lane has no pairs
#endif
    } else {
      v = hn::GatherIndex(d, a + kA[k], idx);
    }
    acc = Step<kFma>(d, acc, v, w[k]);
  }
  (void)di;
  return Canonical(d, acc);
}

// Four vectors of outputs folded together, each with its own accumulator, loads of one kind
// (Whole or Pairs): every output is still its own fold from +0 in increasing k, so which vectors
// go together changes no bit. One vector at a time waited on its accumulator's FMA latency every
// step (a 3x3 depthwise conv2d's nine steps ran at about a quarter of the FMA's throughput).
template <bool kFma, Load kLoad, class D, class T = hn::TFromD<D>>
HWY_INLINE hn::Vec<D> LoadAt(D d, const T* p) {
  if constexpr (kLoad == Load::Pairs) {
#if HWY_TARGET != HWY_SCALAR
    return hn::ConcatEven(d, hn::LoadU(d, p + hn::Lanes(d)), hn::LoadU(d, p));
#endif
  }
  return hn::LoadU(d, p);
}

template <bool kFma, Load kLoad, class D, class V, class T = hn::TFromD<D>>
HWY_INLINE void Fold4(D d, const T* const* a, const int64_t* kA, const T* w, int K, V& r0, V& r1, V& r2, V& r3) {
  auto c0 = hn::Zero(d), c1 = hn::Zero(d), c2 = hn::Zero(d), c3 = hn::Zero(d);
  const T *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3];
  for (int k = 0; k < K; ++k) {
    const int64_t o = kA[k];
    c0 = Step<kFma>(d, c0, LoadAt<kFma, kLoad>(d, a0 + o), w[k]);
    c1 = Step<kFma>(d, c1, LoadAt<kFma, kLoad>(d, a1 + o), w[k]);
    c2 = Step<kFma>(d, c2, LoadAt<kFma, kLoad>(d, a2 + o), w[k]);
    c3 = Step<kFma>(d, c3, LoadAt<kFma, kLoad>(d, a3 + o), w[k]);
  }
  r0 = Canonical(d, c0), r1 = Canonical(d, c1), r2 = Canonical(d, c2), r3 = Canonical(d, c3);
}

// Runs that share A, kA, K, w and their bounds (one task's: a channel's output rows), their
// vectors of Whole or Pairs loads four at a time across runs (a 16-wide image's run is one
// vector), the others (Strided, and Partial near the buffer's ends) one at a time.
template <class T, bool kFma>
void Runs(const VectorRun* rs, int count) {
  const hn::ScalableTag<T> d;
  const hn::RebindToSigned<decltype(d)> di;
  using TI = hn::TFromD<decltype(di)>;
  using V = hn::Vec<decltype(d)>;
  const int L = static_cast<int>(hn::Lanes(d));
  if (count == 0) return;
  const VectorRun& r0 = rs[0];
  const T* A = static_cast<const T*>(r0.A);
  const T* w = static_cast<const T*>(r0.w);
  auto store = [&](V acc, T* c, int m) {
    if (m == L) return hn::StoreU(acc, d, c);
    HWY_ALIGN T tmp[hn::MaxLanes(hn::ScalableTag<T>())];
    hn::Store(acc, d, tmp);
    std::memcpy(c, tmp, static_cast<size_t>(m) * sizeof(T));
  };
  const T* pa[4];
  T* pc[4];
  int pm[4], np = 0;
  bool pairs_pending = false;
  auto flush = [&] {
    if (np == 4) {
      V v0, v1, v2, v3;
      if (pairs_pending) Fold4<kFma, Load::Pairs>(d, pa, r0.kA, w, r0.K, v0, v1, v2, v3);
      else Fold4<kFma, Load::Whole>(d, pa, r0.kA, w, r0.K, v0, v1, v2, v3);
      store(v0, pc[0], pm[0]), store(v1, pc[1], pm[1]), store(v2, pc[2], pm[2]), store(v3, pc[3], pm[3]);
    } else {
      const auto lanes = hn::Iota(di, 0);  // (unused by Whole and Pairs)
      for (int j = 0; j < np; ++j)
        store(pairs_pending ? Fold<kFma, Load::Pairs>(d, di, pa[j], r0.kA, w, r0.K, lanes)
                            : Fold<kFma, Load::Whole>(d, di, pa[j], r0.kA, w, r0.K, lanes),
              pc[j], pm[j]);
    }
    np = 0;
  };
  for (int q = 0; q < count; ++q) {
    const VectorRun& r = rs[q];
    T* C = static_cast<T*>(r.C);
    const auto lanes = hn::Mul(hn::Iota(di, 0), hn::Set(di, static_cast<TI>(r.astep)));
    const bool pairs = r.astep == 2 && HWY_TARGET != HWY_SCALAR;
    const int64_t span = pairs ? 2 * L - 1 : (L - 1) * r.astep;
    const int64_t lo = std::min<int64_t>(0, span) + r.kmin, hi = std::max<int64_t>(0, span) + r.kmax;
    for (int t = 0; t < r.n; t += L) {
      const int m = std::min(L, r.n - t);
      const int64_t first = r.a0 + static_cast<int64_t>(t) * r.astep;
      const T* a = A + first;
      if (first + lo < 0 || first + hi >= r.acount) {
        const auto idx = hn::IfThenElseZero(hn::FirstN(di, static_cast<size_t>(m)), lanes);
        store(Fold<kFma, Load::Partial>(d, di, a, r.kA, w, r.K, idx), C + t, m);
      } else if (r.astep == 1 || pairs) {
        if (np > 0 && pairs_pending != pairs) flush();
        pairs_pending = pairs;
        pa[np] = a, pc[np] = C + t, pm[np] = m;
        if (++np == 4) flush();
      } else {
        store(Fold<kFma, Load::Strided>(d, di, a, r.kA, w, r.K, lanes), C + t, m);
      }
    }
  }
  flush();
}

// Up to kMaxBlendRuns runs of adjacent rows in one vector (a channel's 3x3 window positions:
// rows in three runs of three): each run's lanes loaded whole from where its first row's element
// is, less its first lane, and blended in.
constexpr int kMaxBlendRuns = 4;

// (The runs' masks are separate arguments: SVE's masks are sizeless types, which no array holds.)
template <bool kFma, class D, class M, class T = hn::TFromD<D>>
HWY_INLINE hn::Vec<D> FoldBlended(D d, const T* a, const int64_t* kA, const T* w, int K, const int64_t* off,
                                  M in1, M in2, M in3, int runs) {
  auto acc = hn::Zero(d);
  for (int k = 0; k < K; ++k) {
    const T* p = a + kA[k];
    auto v = hn::LoadU(d, p + off[0]);
    if (runs > 1) v = hn::IfThenElse(in1, hn::LoadU(d, p + off[1]), v);
    if (runs > 2) v = hn::IfThenElse(in2, hn::LoadU(d, p + off[2]), v);
    if (runs > 3) v = hn::IfThenElse(in3, hn::LoadU(d, p + off[3]), v);
    acc = Step<kFma>(d, acc, v, w[k]);
  }
  return Canonical(d, acc);
}

// Rows at any offsets (a depthwise conv2d's weight gradient: a channel's window positions, each
// summed over the batch and the image): L rows a vector; rows in a few runs of adjacent ones
// blended from whole loads where those stay in the buffer, else each lane's elements gathered;
// each output stored where rowC puts it.
template <class T, bool kFma>
void Rows(const VectorRows& r) {
  const hn::ScalableTag<T> d;
  const hn::RebindToSigned<decltype(d)> di;
  using TI = hn::TFromD<decltype(di)>;
  constexpr size_t kMax = hn::MaxLanes(hn::ScalableTag<T>());
  const int L = static_cast<int>(hn::Lanes(d));
  const T* A = static_cast<const T*>(r.A);
  const T* w = static_cast<const T*>(r.w);
  T* C = static_cast<T*>(r.C);
  for (int t = 0; t < r.n; t += L) {
    const int m = std::min(L, r.n - t);
    const int64_t first = r.a0 + r.rowA[t];
    hn::Vec<decltype(d)> acc;
    // The vector's runs: lanes [lane[q], lane[q + 1]) are adjacent rows; a whole load for run q
    // starts at off[q] from the first row's element, so that lane lane[q] reads its first row's.
    int runs = 0, lane[kMaxBlendRuns + 1];
    int64_t off[kMaxBlendRuns];
    for (int j = 0; j < m && runs <= kMaxBlendRuns; ++j)
      if (j == 0 || r.rowA[t + j] != r.rowA[t + j - 1] + 1) {
        if (runs < kMaxBlendRuns) lane[runs] = j, off[runs] = r.rowA[t + j] - r.rowA[t] - j;
        ++runs;
      }
    bool blend = HWY_TARGET != HWY_SCALAR && runs <= kMaxBlendRuns;
    if (blend) {
      const auto [lo, hi] = std::minmax_element(off, off + runs);
      blend = first + r.kmin + *lo >= 0 && first + r.kmax + *hi + L - 1 < r.acount;
    }
    if (blend) {
      lane[runs] = m;
      for (int q = runs; q < kMaxBlendRuns; ++q) lane[q + 1] = m;  // unused runs: empty masks
      auto in_run = [&](int q) {  // lanes [lane[q], lane[q + 1])
        return hn::RebindMask(d, hn::AndNot(hn::FirstN(di, static_cast<size_t>(std::min(lane[q], m))),
                                            hn::FirstN(di, static_cast<size_t>(lane[q + 1]))));
      };
      acc = FoldBlended<kFma>(d, A + first, r.kA, w, r.K, off, in_run(1), in_run(2), in_run(3), runs);
    } else {
      HWY_ALIGN TI idx[kMax] = {};  // lanes past m read lane 0's elements
      for (int j = 0; j < m; ++j) idx[j] = static_cast<TI>(r.rowA[t + j] - r.rowA[t]);
      acc = Fold<kFma, Load::Partial>(d, di, A + first, r.kA, w, r.K, hn::Load(di, idx));
    }
    HWY_ALIGN T tmp[kMax];
    hn::Store(acc, d, tmp);
    for (int j = 0; j < m; ++j) C[r.rowC[t + j]] = tmp[j];
  }
}

template <class T, bool kFma>
void OuterRowT(T s, const T* HWY_RESTRICT v, int64_t n, T* HWY_RESTRICT out) {
  const hn::ScalableTag<T> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  int64_t t = 0;
  for (; t + L <= n; t += L) hn::StoreU(Step<kFma>(d, hn::Zero(d), hn::LoadU(d, v + t), s), d, out + t);
  if (t < n) {  // the last lanes through a vector on the stack (no read or write past n)
    HWY_ALIGN T in[hn::MaxLanes(hn::ScalableTag<T>())] = {}, res[hn::MaxLanes(hn::ScalableTag<T>())];
    std::memcpy(in, v + t, static_cast<size_t>(n - t) * sizeof(T));
    hn::Store(Step<kFma>(d, hn::Zero(d), hn::Load(d, in), s), d, res);
    std::memcpy(out + t, res, static_cast<size_t>(n - t) * sizeof(T));
  }
}

// f(std::true_type) for a fused product, f(std::false_type) for the unfused one. The planner
// sends fused products here only where fused_native_fma() (matmul.cpp): elsewhere Highway's
// MulAdd would be two roundings, so a fused one reaching such a target is a planner bug.
template <class F>
HWY_INLINE void WithFma(bool fused, const char* what, F&& f) {
#if HWY_NATIVE_FMA
  if (fused) return f(std::true_type{});
#else
  if (fused) HWY_ABORT("%s: a fused product on a target without FMA", what);
#endif
  f(std::false_type{});
}

void OuterRowF32(bool fused, const void* s, const void* v, int64_t n, void* out) {
  WithFma(fused, "outer_row", [&](auto k) {
    OuterRowT<float, decltype(k)::value>(*static_cast<const float*>(s), static_cast<const float*>(v), n, static_cast<float*>(out));
  });
}
void OuterRowF64(bool fused, const void* s, const void* v, int64_t n, void* out) {
  WithFma(fused, "outer_row", [&](auto k) {
    OuterRowT<double, decltype(k)::value>(*static_cast<const double*>(s), static_cast<const double*>(v), n, static_cast<double*>(out));
  });
}
void VectorRunsF32(bool fused, const VectorRun* r, int n) { WithFma(fused, "vector_runs", [&](auto k) { Runs<float, decltype(k)::value>(r, n); }); }
void VectorRunsF64(bool fused, const VectorRun* r, int n) { WithFma(fused, "vector_runs", [&](auto k) { Runs<double, decltype(k)::value>(r, n); }); }
void VectorRowsF32(bool fused, const VectorRows& r) { WithFma(fused, "vector_rows", [&](auto k) { Rows<float, decltype(k)::value>(r); }); }
void VectorRowsF64(bool fused, const VectorRows& r) { WithFma(fused, "vector_rows", [&](auto k) { Rows<double, decltype(k)::value>(r); }); }

}  // namespace maroon::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace maroon::cpu {

HWY_EXPORT(VectorRunsF32);
HWY_EXPORT(VectorRunsF64);
void vector_runs(DType d, bool fused, const VectorRun* r, int n) {
  if (d == DType::Float32) HWY_DYNAMIC_DISPATCH(VectorRunsF32)(fused, r, n);
  else HWY_DYNAMIC_DISPATCH(VectorRunsF64)(fused, r, n);
}
HWY_EXPORT(OuterRowF32);
HWY_EXPORT(OuterRowF64);
void outer_row(DType d, bool fused, const void* s, const void* v, int64_t n, void* out) {
  if (d == DType::Float32) HWY_DYNAMIC_DISPATCH(OuterRowF32)(fused, s, v, n, out);
  else HWY_DYNAMIC_DISPATCH(OuterRowF64)(fused, s, v, n, out);
}
HWY_EXPORT(VectorRowsF32);
HWY_EXPORT(VectorRowsF64);
void vector_rows(DType d, bool fused, const VectorRows& r) {
  if (d == DType::Float32) HWY_DYNAMIC_DISPATCH(VectorRowsF32)(fused, r);
  else HWY_DYNAMIC_DISPATCH(VectorRowsF64)(fused, r);
}

}  // namespace maroon::cpu
#endif  // HWY_ONCE
