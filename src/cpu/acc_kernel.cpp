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
// made canonical once, as the value is stored) holds for every step here, slots being values
// no other instruction reads.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/acc_kernel.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <type_traits>

#include "cpu/exp2_lanes-inl.h"  // Exp2Span
#include "cpu/fastops.h"
#include "cpu/kernel.h"          // kTilePad
#include "cpu/lane_ops-inl.h"    // Canonical, Maximum

HWY_BEFORE_NAMESPACE();
namespace maroon::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

HWY_NOINLINE void AccExp2(const float* in, uint32_t* out, int count) { Exp2Span(in, out, count, Round::NearestEven); }

// One step on the running value, for each of its vectors (EACH binds `a` and its offset `o`).
// `b` is the step's leaf, `sl` its slot's memory; both only where the step reads them.
#define MAROON_ACC_STEP(EACH)                                                                  \
  switch (st.op) {                                                                             \
    case AccOp::LoadV: EACH(a = hn::LoadU(d, b + i + o)); break;                               \
    case AccOp::LoadS: EACH(a = hn::Set(d, *b)); break;                                        \
    case AccOp::LoadR: EACH(a = hn::Load(d, sl + o)); break;                                   \
    case AccOp::AddV: EACH(a = hn::Add(a, hn::LoadU(d, b + i + o))); break;                    \
    case AccOp::AddS: { const auto x = hn::Set(d, *b); EACH(a = hn::Add(a, x)); break; }       \
    case AccOp::AddR: EACH(a = hn::Add(a, hn::Load(d, sl + o))); break;                        \
    case AccOp::MulV: EACH(a = hn::Mul(a, hn::LoadU(d, b + i + o))); break;                    \
    case AccOp::MulS: { const auto x = hn::Set(d, *b); EACH(a = hn::Mul(a, x)); break; }       \
    case AccOp::MulR: EACH(a = hn::Mul(a, hn::Load(d, sl + o))); break;                        \
    case AccOp::MaxV: EACH(a = Maximum(d, a, hn::LoadU(d, b + i + o))); break;                 \
    case AccOp::MaxS: { const auto x = hn::Set(d, *b); EACH(a = Maximum(d, a, x)); break; }    \
    case AccOp::MaxR: EACH(a = Maximum(d, a, hn::Load(d, sl + o))); break;                     \
    case AccOp::Square: EACH(a = hn::Mul(a, a)); break;                                        \
    case AccOp::Recip: { const auto one = hn::Set(d, T(1)); EACH(a = hn::Div(one, a)); break; } \
    case AccOp::Sqrt: EACH(a = hn::Sqrt(a)); break;                                            \
    case AccOp::Save: EACH(hn::Store(a, d, sl + o)); break;                                    \
    case AccOp::Exp2:                                                                          \
      if constexpr (std::is_same_v<T, float>) { /* the vectors through memory and back */     \
        EACH(hn::Store(a, d, x2 + o));                                                         \
        AccExp2(x2, e2, G * L);                                                                \
        EACH(a = hn::BitCast(d, hn::Load(du, e2 + o)));                                        \
      }                                                                                        \
      break;                                                                                   \
  }

#define MAROON_ACC_EACH1(STMT) \
  do { auto& a = a0; [[maybe_unused]] const int o = 0; STMT; } while (0)
#define MAROON_ACC_EACH4(STMT)                                                                   \
  do { { auto& a = a0; [[maybe_unused]] const int o = 0; STMT; } { auto& a = a1; [[maybe_unused]] const int o = L; STMT; } \
       { auto& a = a2; [[maybe_unused]] const int o = 2 * L; STMT; } { auto& a = a3; [[maybe_unused]] const int o = 3 * L; STMT; } } while (0)

// G vectors a pass (4, or 1 for vectors so wide that four would run past the kTilePad elements
// of slack tiles and direct leaves have).
template <int G, class T>
HWY_INLINE void AccGroups(const AccStep* steps, int nsteps, const void* const* leaves, T* out, int n) {
  const hn::ScalableTag<T> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  using U = hn::TFromD<decltype(du)>;
  const int L = static_cast<int>(hn::Lanes(d));
  constexpr size_t kMax = G * hn::MaxLanes(hn::ScalableTag<T>());
  HWY_ALIGN T slots[kAccSlots * kMax];
  HWY_ALIGN T x2[kMax];
  HWY_ALIGN U e2[kMax];
  (void)x2, (void)e2, (void)du;
  for (int i = 0; i < n; i += G * L) {
    auto a0 = hn::Zero(d);
    [[maybe_unused]] auto a1 = a0, a2 = a0, a3 = a0;
    for (int s = 0; s < nsteps; ++s) {
      const AccStep& st = steps[s];
      // A leaf's pointer for the V and S steps only (the others' leaf is -1); a slot's memory.
      const T* b = st.leaf >= 0 ? static_cast<const T*>(leaves[st.leaf]) : nullptr;
      T* sl = slots + st.slot * kMax;
      if constexpr (G == 4) {
        MAROON_ACC_STEP(MAROON_ACC_EACH4)
      } else {
        MAROON_ACC_STEP(MAROON_ACC_EACH1)
      }
    }
    if constexpr (G == 4) {
      MAROON_ACC_EACH4(hn::StoreU(Canonical(d, a), d, out + i + o));
    } else {
      MAROON_ACC_EACH1(hn::StoreU(Canonical(d, a), d, out + i + o));
    }
  }
}
#undef MAROON_ACC_STEP
#undef MAROON_ACC_EACH1
#undef MAROON_ACC_EACH4

template <class T>
HWY_INLINE void AccT(const AccStep* steps, int nsteps, const void* const* leaves, void* po, int n) {
  const hn::ScalableTag<T> d;
  if (4 * hn::Lanes(d) > kTilePad) return AccGroups<1, T>(steps, nsteps, leaves, static_cast<T*>(po), n);
  AccGroups<4, T>(steps, nsteps, leaves, static_cast<T*>(po), n);
}

void AccF32(const AccStep* s, int ns, const void* const* l, void* o, int n) { AccT<float>(s, ns, l, o, n); }
void AccF64(const AccStep* s, int ns, const void* const* l, void* o, int n) { AccT<double>(s, ns, l, o, n); }

}  // namespace maroon::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace maroon::cpu {

HWY_EXPORT(AccF32);
HWY_EXPORT(AccF64);

namespace {
void acc_f32_d(const AccStep* s, int ns, const void* const* l, void* o, int n) { HWY_DYNAMIC_DISPATCH(AccF32)(s, ns, l, o, n); }
void acc_f64_d(const AccStep* s, int ns, const void* const* l, void* o, int n) { HWY_DYNAMIC_DISPATCH(AccF64)(s, ns, l, o, n); }
}  // namespace

AccFn fast_acc(DType d) { return d == DType::Float32 ? acc_f32_d : d == DType::Float64 ? acc_f64_d : nullptr; }

}  // namespace maroon::cpu
#endif  // HWY_ONCE
