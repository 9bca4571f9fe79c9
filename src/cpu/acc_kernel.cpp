// The accumulator machine's kernel (cpu/fastops.h: AccStep): a whole program of chain ops a few
// vectors at a time, compiled for every Highway target and chosen at run time.
//
// Why: Adam's parameter update is 11 ops in three segments (a MUL alone, then two chains), each
// a pass over a 256-element tile whose result went through memory for the next; with the tile
// loop's own work that was ~3.5 cycles an element on AVX-512 where SQRT and the division need
// ~1. Here the running value stays in registers from the first step to the store, values read
// twice wait in slots (a few vectors in L1), and scalars are broadcast where they lie.
//
// The same bits as the one-op kernels, op by op: the argument of fastops.cpp's chain (a NaN is
// made canonical once, by the Canon step the program ends with) holds for every step here, slots being values
// no other instruction reads.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/acc_kernel.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <iterator>
#include <type_traits>
#include <utility>

#include "cpu/acc_known.h"
#include "cpu/exp2_lanes-inl.h"  // Exp2Span
#include "cpu/fastops.h"
#include "cpu/kernel.h"          // kTilePad
#include "cpu/lane_ops-inl.h"    // Canonical, Maximum, NotEqual

HWY_BEFORE_NAMESPACE();
namespace maroon::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

HWY_NOINLINE void AccExp2(const float* in, uint32_t* out, int count) { Exp2Span(in, out, count, Round::NearestEven); }

// AVX-512: EXP2 on each held vector in registers (exp2_lanes-inl.h, Exp2RnVec), without the
// store, the call and the reload of Exp2Span (the transformer's GELU: about a fifth of its
// exp2 time). The same bits: both are exp2 correctly rounded to nearest.
#if HWY_TARGET == HWY_AVX3
constexpr bool kExp2InRegisters = true;
using Exp2Consts = Exp2RnData;
HWY_INLINE const Exp2Consts& exp2_consts() { return exp2_rn_data(); }
HWY_INLINE hn::Vec512<float> Exp2InRegisters(hn::Vec512<float> a, const Exp2Consts& c) {
  return hn::Vec512<float>{Exp2RnVec(a.raw, c)};
}
#else
constexpr bool kExp2InRegisters = false;
struct Exp2Consts {};
HWY_INLINE const Exp2Consts& exp2_consts() {
  static const Exp2Consts c;
  return c;
}
template <class V>
HWY_INLINE V Exp2InRegisters(V a, const Exp2Consts&) { return a; }  // never called
#endif

// A bool leaf's bytes (1 or 0; any nonzero is true, as in the one-op WHERE) as a mask over T.
template <class D>
HWY_INLINE hn::Mask<D> BoolMask(D d, const uint8_t* p) {
  const hn::Rebind<uint32_t, D> d32;
  const hn::Rebind<uint8_t, D> d8;
  const auto w = hn::PromoteTo(d32, hn::LoadU(d8, p));
  if constexpr (sizeof(hn::TFromD<D>) == 4) {
    return hn::RebindMask(d, hn::Ne(w, hn::Zero(d32)));
  } else {  // u8 -> u32 -> u64: Highway 1.0 has no u8 -> u64 promotion
    const hn::RebindToUnsigned<D> d64;
    return hn::RebindMask(d, hn::Ne(hn::PromoteTo(d64, w), hn::Zero(d64)));
  }
}

// One step on the running value, for each of its vectors (EACH binds `a` and its offset `o`).
// `b` is the step's leaf, `sl` its slot's memory; both only where the step reads them.
#define MAROON_ACC_STEP(EACH)                                                                  \
  switch (st.op) {                                                                             \
    case AccOp::LoadV: EACH(a = hn::LoadU(d, bi + o)); break;                                  \
    case AccOp::LoadS: EACH(a = hn::Set(d, *b)); break;                                        \
    case AccOp::LoadR: EACH(a = hn::Load(d, sl + o)); break;                                   \
    case AccOp::AddV: EACH(a = hn::Add(a, hn::LoadU(d, bi + o))); break;                       \
    case AccOp::AddS: { const auto x = hn::Set(d, *b); EACH(a = hn::Add(a, x)); break; }       \
    case AccOp::AddR: EACH(a = hn::Add(a, hn::Load(d, sl + o))); break;                        \
    case AccOp::MulV: EACH(a = hn::Mul(a, hn::LoadU(d, bi + o))); break;                       \
    case AccOp::MulS: { const auto x = hn::Set(d, *b); EACH(a = hn::Mul(a, x)); break; }       \
    case AccOp::MulR: EACH(a = hn::Mul(a, hn::Load(d, sl + o))); break;                        \
    case AccOp::MaxV: EACH(a = Maximum(d, a, hn::LoadU(d, bi + o))); break;                    \
    case AccOp::MaxS: { const auto x = hn::Set(d, *b); EACH(a = Maximum(d, a, x)); break; }    \
    case AccOp::MaxR: EACH(a = Maximum(d, a, hn::Load(d, sl + o))); break;                     \
    case AccOp::Square: EACH(a = hn::Mul(a, a)); break;                                        \
    case AccOp::Recip: { const auto one = hn::Set(d, T(1)); EACH(a = hn::Div(one, a)); break; } \
    case AccOp::Sqrt: EACH(a = hn::Sqrt(a)); break;                                            \
    case AccOp::Save: EACH(hn::Store(a, d, sl + o)); break;                                    \
    case AccOp::CltV: EACH(a = hn::VecFromMask(d, hn::Lt(a, hn::LoadU(d, bi + o)))); break;    \
    case AccOp::CltS: { const auto x = hn::Set(d, *b); EACH(a = hn::VecFromMask(d, hn::Lt(a, x))); break; } \
    case AccOp::CltR: EACH(a = hn::VecFromMask(d, hn::Lt(a, hn::Load(d, sl + o)))); break;     \
    case AccOp::CgtV: EACH(a = hn::VecFromMask(d, hn::Lt(hn::LoadU(d, bi + o), a))); break;    \
    case AccOp::CgtS: { const auto x = hn::Set(d, *b); EACH(a = hn::VecFromMask(d, hn::Lt(x, a))); break; } \
    case AccOp::CgtR: EACH(a = hn::VecFromMask(d, hn::Lt(hn::Load(d, sl + o), a))); break;     \
    /* != as C++'s: true on NaN (lane_ops-inl.h) */                                          \
    case AccOp::CneV: EACH(a = hn::VecFromMask(d, NotEqual(d, a, hn::LoadU(d, bi + o)))); break; \
    case AccOp::CneS: { const auto x = hn::Set(d, *b); EACH(a = hn::VecFromMask(d, NotEqual(d, a, x))); break; } \
    case AccOp::CneR: EACH(a = hn::VecFromMask(d, NotEqual(d, a, hn::Load(d, sl + o)))); break; \
    case AccOp::MaskA: EACH(m = hn::MaskFromVec(a)); break;                                    \
    case AccOp::MaskV: EACH(m = BoolMask(d, c + i + o)); break;                                \
    case AccOp::MaskS: { const auto x = *c ? hn::Eq(zero, zero) : hn::Lt(zero, zero); EACH(m = x); break; } \
    case AccOp::MaskR: EACH(m = hn::MaskFromVec(hn::Load(d, sl + o))); break;                  \
    case AccOp::SelV: EACH(a = hn::IfThenElse(m, hn::LoadU(d, bi + o), a)); break;             \
    case AccOp::SelS: { const auto x = hn::Set(d, *b); EACH(a = hn::IfThenElse(m, x, a)); break; } \
    case AccOp::SelR: EACH(a = hn::IfThenElse(m, hn::Load(d, sl + o), a)); break;              \
    case AccOp::SelNV: EACH(a = hn::IfThenElse(m, a, hn::LoadU(d, bi + o))); break;            \
    case AccOp::SelNS: { const auto x = hn::Set(d, *b); EACH(a = hn::IfThenElse(m, a, x)); break; } \
    case AccOp::SelNR: EACH(a = hn::IfThenElse(m, a, hn::Load(d, sl + o))); break;             \
    case AccOp::Canon: EACH(a = Canonical(d, a)); break;                                       \
    case AccOp::Out: EACH(hn::StoreU(a, d, static_cast<T*>(outs[st.slot]) + i + o)); break;    \
    case AccOp::Known: break; /* a mark (AccT reads it) */                                    \
    case AccOp::Exp2:                                                                          \
      if constexpr (std::is_same_v<T, float> && kExp2InRegisters) { /* AVX-512: on registers */ \
        EACH(a = Exp2InRegisters(a, e2c));                                                     \
        ran_exp2 = true;                                                                       \
      } else if constexpr (std::is_same_v<T, float>) { /* the vectors through memory and back */ \
        EACH(hn::Store(a, d, x2 + o));                                                         \
        AccExp2(x2, e2, G * L);                                                                \
        EACH(a = hn::BitCast(d, hn::Load(du, e2 + o)));                                        \
      }                                                                                        \
      break;                                                                                   \
  }

// STMT on vector k of the group: `a` its running value, `m` its mask, `o` its offset.
#define MAROON_ACC_LANE(k, STMT) \
  { [[maybe_unused]] auto& a = a##k; [[maybe_unused]] auto& m = m##k; [[maybe_unused]] const int o = (k) * L; STMT; }
#define MAROON_ACC_EACH1(STMT) do MAROON_ACC_LANE(0, STMT) while (0)
#define MAROON_ACC_EACH4(STMT) \
  do { MAROON_ACC_LANE(0, STMT) MAROON_ACC_LANE(1, STMT) MAROON_ACC_LANE(2, STMT) MAROON_ACC_LANE(3, STMT) } while (0)
#define MAROON_ACC_EACH8(STMT)                                                                             \
  do { MAROON_ACC_LANE(0, STMT) MAROON_ACC_LANE(1, STMT) MAROON_ACC_LANE(2, STMT) MAROON_ACC_LANE(3, STMT) \
       MAROON_ACC_LANE(4, STMT) MAROON_ACC_LANE(5, STMT) MAROON_ACC_LANE(6, STMT) MAROON_ACC_LANE(7, STMT) } while (0)

// G vectors a pass (4, or 1 for vectors so wide that four would run past the kTilePad elements
// of slack tiles and direct leaves have).
template <int G, class T>
HWY_INLINE void AccGroups(const AccStep* steps, int nsteps, const void* const* leaves, void* const* outs, T* out,
                          int i0, int n) {
  const hn::ScalableTag<T> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  using U = hn::TFromD<decltype(du)>;
  const int L = static_cast<int>(hn::Lanes(d));
  constexpr size_t kMax = G * hn::MaxLanes(hn::ScalableTag<T>());
  HWY_ALIGN T slots[kAccSlots * kMax];
  HWY_ALIGN T x2[kMax];
  HWY_ALIGN U e2[kMax];
  (void)x2, (void)e2, (void)du;
  const Exp2Consts& e2c = exp2_consts();  // a static's guard: no scan of the steps for EXP2
  [[maybe_unused]] bool ran_exp2 = false;  // counted after the loop: a call in it would spill the held vectors
  const auto zero = hn::Zero(d);
  for (int i = i0; i < n; i += G * L) {
    auto a0 = zero;
    [[maybe_unused]] auto a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    auto m0 = hn::Lt(zero, zero);  // the mask register (WHERE's condition)
    [[maybe_unused]] auto m1 = m0, m2 = m0, m3 = m0, m4 = m0, m5 = m0, m6 = m0, m7 = m0;
    for (int s = 0; s < nsteps; ++s) {
      const AccStep& st = steps[s];
      // A leaf's pointer for the V and S steps only (the others' leaf is -1); a slot's memory.
      const T* b = st.leaf >= 0 ? static_cast<const T*>(leaves[st.leaf]) : nullptr;
      const T* bi = st.leaf >= 0 ? b + i : nullptr;  // a V step's elements of this pass
      const uint8_t* c = st.leaf >= 0 ? static_cast<const uint8_t*>(leaves[st.leaf]) : nullptr;  // a bool leaf
      T* sl = slots + st.slot * kMax;
      if constexpr (G == 8) {
        MAROON_ACC_STEP(MAROON_ACC_EACH8)
      } else if constexpr (G == 4) {
        MAROON_ACC_STEP(MAROON_ACC_EACH4)
      } else {
        MAROON_ACC_STEP(MAROON_ACC_EACH1)
      }
    }
    if constexpr (G == 8) {
      MAROON_ACC_EACH8(hn::StoreU(a, d, out + i + o));
    } else if constexpr (G == 4) {
      MAROON_ACC_EACH4(hn::StoreU(a, d, out + i + o));
    } else {
      MAROON_ACC_EACH1(hn::StoreU(a, d, out + i + o));
    }
  }
  if constexpr (kExp2InRegisters && std::is_same_v<T, float>) {
    if (ran_exp2) ++exp2_rn_calls();
  }
}

// The same for the known programs, which also hold a comparison's result as a mask (`mr`) and
// keep it so in a slot (`ms`), for the MaskA and MaskR steps that read it back.
#define MAROON_ACC_KLANE(k, STMT)                                                                   \
  {                                                                                                 \
    [[maybe_unused]] auto& a = a##k; [[maybe_unused]] auto& m = m##k; [[maybe_unused]] auto& mr = mr##k; \
    [[maybe_unused]] auto& ms = ms##k; [[maybe_unused]] const int o = (k) * L; STMT;                \
  }
#define MAROON_ACC_KEACH1(STMT) do MAROON_ACC_KLANE(0, STMT) while (0)
#define MAROON_ACC_KEACH4(STMT) \
  do { MAROON_ACC_KLANE(0, STMT) MAROON_ACC_KLANE(1, STMT) MAROON_ACC_KLANE(2, STMT) MAROON_ACC_KLANE(3, STMT) } while (0)

// Step k of a known program: a comparison sets the mask `mr` and the running value from it;
// MaskA and a Save of such a value, and MaskR of such a slot, copy masks (the interpreter goes
// through the vector: VecFromMask and MaskFromVec give the mask back, bit for bit); every other
// step is the interpreter's code.
#define MAROON_ACC_KNOWN_STEP(EACH)                                                                   \
  if constexpr (st.op == AccOp::CltV) {                                                               \
    EACH(mr = hn::Lt(a, hn::LoadU(d, bi + o)); a = hn::VecFromMask(d, mr));                           \
  } else if constexpr (st.op == AccOp::CltR) {                                                        \
    EACH(mr = hn::Lt(a, hn::Load(d, sl + o)); a = hn::VecFromMask(d, mr));                            \
  } else if constexpr (st.op == AccOp::CgtV) {                                                        \
    EACH(mr = hn::Lt(hn::LoadU(d, bi + o), a); a = hn::VecFromMask(d, mr));                           \
  } else if constexpr (st.op == AccOp::CgtR) {                                                        \
    EACH(mr = hn::Lt(hn::Load(d, sl + o), a); a = hn::VecFromMask(d, mr));                            \
  } else if constexpr (st.op == AccOp::CneV) {                                                        \
    EACH(mr = NotEqual(d, a, hn::LoadU(d, bi + o)); a = hn::VecFromMask(d, mr));                      \
  } else if constexpr (st.op == AccOp::CneR) {                                                        \
    EACH(mr = NotEqual(d, a, hn::Load(d, sl + o)); a = hn::VecFromMask(d, mr));                       \
  } else if constexpr (st.op == AccOp::MaskA && acc_run_is_mask(P, k - 1)) {                          \
    EACH(m = mr);                                                                                     \
  } else if constexpr (st.op == AccOp::Save && acc_run_is_mask(P, k - 1)) {                           \
    EACH(hn::Store(a, d, sl + o); ms[st.slot] = mr);                                                  \
  } else if constexpr (st.op == AccOp::MaskR && acc_slot_is_mask(P, k, st.slot)) {                    \
    EACH(m = ms[st.slot]);                                                                            \
  } else {                                                                                            \
    MAROON_ACC_STEP(EACH)                                                                             \
  }

// Known programs hold their slots' masks in arrays: sizeless vector and mask types (SVE, RVV)
// cannot be array elements, so there the program is interpreted (the same bits). The harness's
// path checks leave those targets out (tests/cpu/acc_known_test.cpp).
#if !HWY_HAVE_SCALABLE
// A known program P (acc_known.h) over the same groups: the interpreter's step code, each step's
// op and slot constants, so the switch folds away, the slots' stores and loads become register
// copies and the masks stay mask registers. A step's leaf: its elements (V) or, for a leaf
// broadcast where it lies (S: run_elementwise's whole tiles), a vector group of its element
// read at the same place every pass (`wrap` 0), so that each step has one form.
template <int G, class T, const auto& P>  // G: 4 or 1
HWY_INLINE void AccKnownGroups(const AccStep* steps, const void* const* leaves, void* const* outs, T* out, int i0,
                               int n) {
  constexpr int N = static_cast<int>(std::size(P));
  const hn::ScalableTag<T> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  using U = hn::TFromD<decltype(du)>;
  const int L = static_cast<int>(hn::Lanes(d));
  constexpr size_t kMax = G * hn::MaxLanes(hn::ScalableTag<T>());
  HWY_ALIGN T slots[kAccSlots * kMax];
  HWY_ALIGN T x2[kMax];
  HWY_ALIGN U e2[kMax];
  (void)x2, (void)e2, (void)du;
  const Exp2Consts& e2c = exp2_consts();
  [[maybe_unused]] bool ran_exp2 = false;
  const auto zero = hn::Zero(d);
  const T* at[N];
  int wrap[N];
  HWY_ALIGN T splat[acc_leaf_steps(P) * kMax];
  for (int k = 0, j = 0; k < N; ++k) {
    at[k] = steps[k].leaf >= 0 ? static_cast<const T*>(leaves[steps[k].leaf]) : nullptr;
    wrap[k] = -1;
    if (!at[k] || steps[k].op == P[k].op) continue;  // no leaf, or a V step
    for (size_t e = 0; e < kMax; ++e) splat[j * kMax + e] = *at[k];
    at[k] = splat + j++ * kMax;
    wrap[k] = 0;
  }
  [[maybe_unused]] const T* b = nullptr;         // no S step in P
  [[maybe_unused]] const uint8_t* c = nullptr;   // nor a bool leaf
  for (int i = i0; i < n; i += G * L) {
    auto a0 = zero;
    [[maybe_unused]] auto a1 = a0, a2 = a0, a3 = a0;
    auto m0 = hn::Lt(zero, zero);
    [[maybe_unused]] auto m1 = m0, m2 = m0, m3 = m0;
    [[maybe_unused]] auto mr0 = m0, mr1 = m0, mr2 = m0, mr3 = m0;
    using M = decltype(m0);
    [[maybe_unused]] M ms0[kAccSlots], ms1[kAccSlots], ms2[kAccSlots], ms3[kAccSlots];
    auto step = [&](auto kc) HWY_ATTR __attribute__((always_inline)) {
      constexpr int k = decltype(kc)::value;
      constexpr AccStep st{P[k].op, P[k].slot, 0};
      // (Without the AND where no step is S: fewer instructions, but 3% slower, 1.42 against 1.37
      // ns an element, alternating.)
      const T* bi = at[k] + (i & wrap[k]);
      T* sl = slots + st.slot * kMax;
      (void)bi, (void)sl;
      if constexpr (G == 4) {
        MAROON_ACC_KNOWN_STEP(MAROON_ACC_KEACH4)
      } else {
        MAROON_ACC_KNOWN_STEP(MAROON_ACC_KEACH1)
      }
    };
    [&]<size_t... K>(std::index_sequence<K...>) HWY_ATTR __attribute__((always_inline)) {
      (step(std::integral_constant<int, static_cast<int>(K)>{}), ...);
    }(std::make_index_sequence<N>{});
    if constexpr (G == 4) {
      MAROON_ACC_EACH4(hn::StoreU(a, d, out + i + o));
    } else {
      MAROON_ACC_EACH1(hn::StoreU(a, d, out + i + o));
    }
  }
  if constexpr (kExp2InRegisters && std::is_same_v<T, float>) {
    if (ran_exp2) ++exp2_rn_calls();
  }
}

#endif  // !HWY_HAVE_SCALABLE

#undef MAROON_ACC_KNOWN_STEP
#undef MAROON_ACC_KEACH1
#undef MAROON_ACC_KEACH4
#undef MAROON_ACC_KLANE
#undef MAROON_ACC_STEP
#undef MAROON_ACC_EACH1
#undef MAROON_ACC_EACH4
#undef MAROON_ACC_EACH8
#undef MAROON_ACC_LANE

#if !HWY_HAVE_SCALABLE
template <class T, const auto& P>
HWY_INLINE void AccKnownT(const AccStep* steps, const void* const* leaves, void* const* outs, T* out, int n) {
  const hn::ScalableTag<T> d;
  const int L = static_cast<int>(hn::Lanes(d));
  count_acc_known_run();
  // Four vectors a pass (the GELU program on AVX-512, 256 elements a call: 1.35-1.45 ns an
  // element; two, 1.52; one, 1.78; eight over whole groups of eight, the rest four as the
  // interpreter does, 1.47-1.60).
  if (4 * L > kTilePad) return AccKnownGroups<1, T, P>(steps, leaves, outs, out, 0, n);
  AccKnownGroups<4, T, P>(steps, leaves, outs, out, 0, n);
}
#endif

template <class T>
HWY_INLINE void AccT(const AccStep* steps, int nsteps, const void* const* leaves, void* const* outs, void* po, int n) {
  const hn::ScalableTag<T> d;
  T* out = static_cast<T*>(po);
  const int L = static_cast<int>(hn::Lanes(d));
  if (nsteps > 0 && steps[0].op == AccOp::Known) {  // find_acc checked the steps after it
#if !HWY_HAVE_SCALABLE
    if constexpr (std::is_same_v<T, float>) {
      if (steps[0].slot == static_cast<uint8_t>(AccKnownId::BiasGelu) && nsteps - 1 == static_cast<int>(std::size(kAccBiasGelu)) &&
          acc_known_programs())
        return AccKnownT<T, kAccBiasGelu>(steps + 1, leaves, outs, out, n);
    }
#endif
    ++steps, --nsteps;  // otherwise interpreted
  }
  if (4 * L > kTilePad) return AccGroups<1, T>(steps, nsteps, leaves, outs, out, 0, n);
  // Eight vectors a pass over whole groups of eight (half the steps' dispatch per element), the
  // rest four at a time: which lanes go together never changes a lane's value.
  const int whole = n / (8 * L) * (8 * L);
  AccGroups<8, T>(steps, nsteps, leaves, outs, out, 0, whole);
  AccGroups<4, T>(steps, nsteps, leaves, outs, out, whole, n);
}

void AccF32(const AccStep* s, int ns, const void* const* l, void* const* os, void* o, int n) {
  AccT<float>(s, ns, l, os, o, n);
}
void AccF64(const AccStep* s, int ns, const void* const* l, void* const* os, void* o, int n) {
  AccT<double>(s, ns, l, os, o, n);
}

}  // namespace maroon::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace maroon::cpu {

HWY_EXPORT(AccF32);
HWY_EXPORT(AccF64);

namespace {
void acc_f32_d(const AccStep* s, int ns, const void* const* l, void* const* os, void* o, int n) {
  HWY_DYNAMIC_DISPATCH(AccF32)(s, ns, l, os, o, n);
}
void acc_f64_d(const AccStep* s, int ns, const void* const* l, void* const* os, void* o, int n) {
  HWY_DYNAMIC_DISPATCH(AccF64)(s, ns, l, os, o, n);
}
}  // namespace

AccFn fast_acc(DType d) { return d == DType::Float32 ? acc_f32_d : d == DType::Float64 ? acc_f64_d : nullptr; }

}  // namespace maroon::cpu
#endif  // HWY_ONCE
