// SIMD tile ops (Highway, one copy per target, chosen at run time). Only lane-wise IEEE
// operations: each lane computes exactly what src/ref computes for that element, so the vector
// width and the target cannot change a bit. No MulAdd (SSE4 would emulate it with two
// roundings), no ReduceSum (its order depends on the width).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/fastops.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <type_traits>

#include "cpu/exp2_lanes-inl.h"  // Exp2Span
#include "cpu/fastops.h"
#include "cpu/kernel.h"  // kTilePad
#include "cpu/lane_ops-inl.h"  // Canonical, Maximum

HWY_BEFORE_NAMESPACE();
namespace maroon::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#define MAROON_BINARY_KERNEL(NAME, T, EXPR)                                       \
  void NAME(const void* pa, const void* pb, const void*, void* po, int n) {        \
    const hn::ScalableTag<T> d;                                                    \
    const T* a = static_cast<const T*>(pa);                                        \
    const T* b = static_cast<const T*>(pb);                                        \
    T* o = static_cast<T*>(po);                                                    \
    const int L = static_cast<int>(hn::Lanes(d));                                  \
    for (int i = 0; i < n; i += L) {                                               \
      const auto x = hn::LoadU(d, a + i);                                          \
      const auto y = hn::LoadU(d, b + i);                                          \
      hn::StoreU(EXPR, d, o + i);                                                  \
    }                                                                              \
  }
#define MAROON_UNARY_KERNEL(NAME, T, EXPR)                                        \
  void NAME(const void* pa, const void*, const void*, void* po, int n) {           \
    const hn::ScalableTag<T> d;                                                    \
    const T* a = static_cast<const T*>(pa);                                        \
    T* o = static_cast<T*>(po);                                                    \
    const int L = static_cast<int>(hn::Lanes(d));                                  \
    for (int i = 0; i < n; i += L) {                                               \
      const auto x = hn::LoadU(d, a + i);                                          \
      hn::StoreU(EXPR, d, o + i);                                                  \
    }                                                                              \
  }
#define MAROON_REDUCE_KERNEL(NAME, T, EXPR)                                       \
  void NAME(void* pacc, const void* px, int n) {                                   \
    const hn::ScalableTag<T> d;                                                    \
    T* acc = static_cast<T*>(pacc);                                                \
    const T* xs = static_cast<const T*>(px);                                       \
    const int L = static_cast<int>(hn::Lanes(d));                                  \
    for (int i = 0; i < n; i += L) {                                               \
      const auto x = hn::LoadU(d, acc + i);                                        \
      const auto y = hn::LoadU(d, xs + i);                                         \
      hn::StoreU(EXPR, d, acc + i);                                                \
    }                                                                              \
  }

#define MAROON_FLOAT_KERNELS(SUF, T)                                                        \
  MAROON_BINARY_KERNEL(Add##SUF, T, Canonical(d, hn::Add(x, y)))                            \
  MAROON_BINARY_KERNEL(Mul##SUF, T, Canonical(d, hn::Mul(x, y)))                            \
  MAROON_BINARY_KERNEL(Max##SUF, T, Maximum(d, x, y))                                       \
  MAROON_UNARY_KERNEL(Recip##SUF, T, Canonical(d, hn::Div(hn::Set(d, T(1)), x)))            \
  MAROON_UNARY_KERNEL(Sqrt##SUF, T, Canonical(d, hn::Sqrt(x)))                              \
  MAROON_REDUCE_KERNEL(RAdd##SUF, T, Canonical(d, hn::Add(x, y)))                           \
  MAROON_REDUCE_KERNEL(RMul##SUF, T, Canonical(d, hn::Mul(x, y)))                           \
  MAROON_REDUCE_KERNEL(RMax##SUF, T, Maximum(d, x, y))

MAROON_FLOAT_KERNELS(F32, float)
MAROON_FLOAT_KERNELS(F64, double)

// Integer folds (docs/spec.md: ADD and MUL wrap, MAX in the dtype's order). ADD and MUL on
// unsigned lanes, whose wrap is the same bits for either signedness and defined on every target
// (the scalar target's lanes are C++ integers: a signed overflow there is undefined). Before
// these, an integer REDUCE of a fused program (argmax's int32 MAX) folded element by element
// through src/ref's scalar step: 84 of argmax's 86 ms on (4096,1024).
#define MAROON_INT32_KERNELS(SUF, T)                 \
  MAROON_REDUCE_KERNEL(RAdd##SUF, uint32_t, hn::Add(x, y)) \
  MAROON_REDUCE_KERNEL(RMul##SUF, uint32_t, hn::Mul(x, y)) \
  MAROON_REDUCE_KERNEL(RMax##SUF, T, hn::Max(x, y))
MAROON_INT32_KERNELS(I32, int32_t)
MAROON_INT32_KERNELS(U32, uint32_t)

// binary32 comparisons (bool bytes, 1 or 0) and WHERE a vector at a time: ReLU's `x < 0` and
// select run in every conv's epilogue and the transformer's masks, and the baseline build's
// loops ran them four lanes wide. The same predicate per lane as the scalar loops: Lt and Eq
// are false on NaN as C++'s < and ==, and != is the negation of Eq (Highway's Ne is ordered,
// false on NaN, where C++'s != is true), so the same bits.
#define MAROON_COMPARE_KERNEL(NAME, MASK)                                         \
  void NAME(const void* pa, const void* pb, const void*, void* po, int n) {        \
    const hn::ScalableTag<float> d;                                                \
    const hn::Rebind<int32_t, decltype(d)> di;                                     \
    const hn::Rebind<uint8_t, decltype(d)> du8;                                    \
    const float* a = static_cast<const float*>(pa);                                \
    const float* b = static_cast<const float*>(pb);                                \
    uint8_t* o = static_cast<uint8_t*>(po);                                        \
    const int L = static_cast<int>(hn::Lanes(d));                                  \
    const auto one = hn::Set(di, 1);                                               \
    for (int i = 0; i < n; i += L) {                                               \
      const auto x = hn::LoadU(d, a + i);                                          \
      const auto y = hn::LoadU(d, b + i);                                          \
      const auto bits = hn::IfThenElseZero(hn::RebindMask(di, MASK), one);         \
      hn::StoreU(hn::DemoteTo(du8, bits), du8, o + i);                             \
    }                                                                              \
  }
MAROON_COMPARE_KERNEL(CmpLtF32, hn::Lt(x, y))
MAROON_COMPARE_KERNEL(CmpEqF32, hn::Eq(x, y))
MAROON_COMPARE_KERNEL(CmpNeF32, hn::Not(hn::Eq(x, y)))

void WhereF32(const void* pc, const void* pa, const void* pb, void* po, int n) {
  const hn::ScalableTag<float> d;
  const hn::Rebind<int32_t, decltype(d)> di;
  const hn::Rebind<uint8_t, decltype(d)> du8;
  const uint8_t* c = static_cast<const uint8_t*>(pc);
  const float* a = static_cast<const float*>(pa);
  const float* b = static_cast<const float*>(pb);
  float* o = static_cast<float*>(po);
  const int L = static_cast<int>(hn::Lanes(d));
  for (int i = 0; i < n; i += L) {
    const auto take_a = hn::RebindMask(d, hn::Ne(hn::PromoteTo(di, hn::LoadU(du8, c + i)), hn::Zero(di)));
    hn::StoreU(hn::IfThenElse(take_a, hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, o + i);
  }
}

// A chain of float ops (cpu/fastops.h: ChainStep) a few vectors at a time: the running value
// stays in registers from one op to the next instead of going through a tile in memory after
// each. Each lane computes what the single-op kernels above compute, op by op, but for NaN
// payloads: a NaN is made canonical once, as the value is stored, instead of after every op.
// The same bits: by induction over the steps, the running value is NaN exactly when the
// single-op kernels' is, and otherwise the same bits. ADD, MUL, RECIPROCAL and SQRT give a NaN
// exactly when an operand is one or the operation is invalid, whatever the NaN's payload, and
// the same result on the same non-NaN operands; MAX returns the canonical NaN when an operand is
// one; EXP2 sends every NaN to src/math (a NaN fails the fast path's domain test), which
// returns the canonical NaN. The values stored are all that other instructions read.
#define MAROON_CHAIN_EACH(STMT) \
  do { { auto& a = a0; [[maybe_unused]] const int o = 0; STMT; } { auto& a = a1; [[maybe_unused]] const int o = L; STMT; } \
       { auto& a = a2; [[maybe_unused]] const int o = 2 * L; STMT; } { auto& a = a3; [[maybe_unused]] const int o = 3 * L; STMT; } } while (0)

// EXP2 on `count` lanes held at in: fast_math.h's kernel (exp2_lanes-inl.h), rounded to
// nearest, into out.
HWY_NOINLINE void Exp2Held(const float* in, uint32_t* out, int count) { Exp2Span(in, out, count, Round::NearestEven); }

// One vector a pass, for vectors so wide (SVE up to 2048 bits) that four would run past the
// kTilePad elements of slack that tiles and direct leaves have.
template <class T>
HWY_NOINLINE void ChainT1(const T* first, const ChainStep* steps, int nsteps, T* out, int n) {
  const hn::ScalableTag<T> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  const int L = static_cast<int>(hn::Lanes(d));
  for (int i = 0; i < n; i += L) {
    auto a = hn::LoadU(d, first + i);
    for (int s = 0; s < nsteps; ++s) {
      const T* b = static_cast<const T*>(steps[s].other);  // null for a unary step: offset only where read
      switch (steps[s].op) {
        case ChainOp::Add: a = hn::Add(a, hn::LoadU(d, b + i)); break;
        case ChainOp::Mul: a = hn::Mul(a, hn::LoadU(d, b + i)); break;
        case ChainOp::Max: a = Maximum(d, a, hn::LoadU(d, b + i)); break;
        case ChainOp::Square: a = hn::Mul(a, a); break;
        case ChainOp::Recip: a = hn::Div(hn::Set(d, T(1)), a); break;
        case ChainOp::Sqrt: a = hn::Sqrt(a); break;
        case ChainOp::Exp2:
          if constexpr (std::is_same_v<T, float>) {  // room for the widest vector of the target
            HWY_ALIGN float in[hn::MaxLanes(hn::ScalableTag<float>())];
            HWY_ALIGN uint32_t bits[hn::MaxLanes(hn::ScalableTag<float>())];
            hn::Store(a, d, in);
            Exp2Held(in, bits, L);
            a = hn::BitCast(d, hn::Load(du, bits));
          }
          break;
      }
    }
    hn::StoreU(Canonical(d, a), d, out + i);
  }
}

template <class T>
HWY_INLINE void ChainT(const void* pfirst, const ChainStep* steps, int nsteps, void* po, int n) {
  const hn::ScalableTag<T> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  const T* first = static_cast<const T*>(pfirst);
  T* out = static_cast<T*>(po);
  const int L = static_cast<int>(hn::Lanes(d));
  if (4 * L > kTilePad) return ChainT1<T>(first, steps, nsteps, out, n);
  // 4 vectors a pass: enough independent work to hide each op's latency; 4 * L elements is at
  // most kTilePad (64 float32 on AVX-512), the slack every tile and direct leaf has.
  for (int i = 0; i < n; i += 4 * L) {
    auto a0 = hn::LoadU(d, first + i), a1 = hn::LoadU(d, first + i + L);
    auto a2 = hn::LoadU(d, first + i + 2 * L), a3 = hn::LoadU(d, first + i + 3 * L);
    for (int s = 0; s < nsteps; ++s) {
      const T* b = static_cast<const T*>(steps[s].other);  // null for a unary step: offset only where read
      switch (steps[s].op) {
        case ChainOp::Add:
          MAROON_CHAIN_EACH(a = hn::Add(a, hn::LoadU(d, b + i + o)));
          break;
        case ChainOp::Mul:
          MAROON_CHAIN_EACH(a = hn::Mul(a, hn::LoadU(d, b + i + o)));
          break;
        case ChainOp::Max:
          MAROON_CHAIN_EACH(a = Maximum(d, a, hn::LoadU(d, b + i + o)));
          break;
        case ChainOp::Square:
          MAROON_CHAIN_EACH(a = hn::Mul(a, a));
          break;
        case ChainOp::Recip:
          MAROON_CHAIN_EACH(a = hn::Div(hn::Set(d, T(1)), a));
          break;
        case ChainOp::Sqrt:
          MAROON_CHAIN_EACH(a = hn::Sqrt(a));
          break;
        case ChainOp::Exp2:
          if constexpr (std::is_same_v<T, float>) {  // the four vectors through memory and back
            HWY_ALIGN float in[kTilePad];
            HWY_ALIGN uint32_t bits[kTilePad];
            MAROON_CHAIN_EACH(hn::Store(a, d, in + o));
            Exp2Held(in, bits, 4 * L);
            MAROON_CHAIN_EACH(a = hn::BitCast(d, hn::Load(du, bits + o)));
          }
          break;
      }
    }
    MAROON_CHAIN_EACH(hn::StoreU(Canonical(d, a), d, out + i + o));
  }
}
#undef MAROON_CHAIN_EACH
void ChainF32(const void* f, const ChainStep* s, int ns, void* o, int n) { ChainT<float>(f, s, ns, o, n); }
void ChainF64(const void* f, const ChainStep* s, int ns, void* o, int n) { ChainT<double>(f, s, ns, o, n); }

}  // namespace maroon::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <climits>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>

#include "cpu/fastops.h"
#include "cpu/kernel.h"
#include "maroon/backend.h"
#include "maroon/error.h"
#include "maroon/settings.h"

namespace maroon::cpu {

#define MAROON_EXPORT_FLOAT(SUF)                                                          \
  HWY_EXPORT(Add##SUF); HWY_EXPORT(Mul##SUF); HWY_EXPORT(Max##SUF); HWY_EXPORT(Recip##SUF); \
  HWY_EXPORT(Sqrt##SUF); HWY_EXPORT(RAdd##SUF); HWY_EXPORT(RMul##SUF); HWY_EXPORT(RMax##SUF);
MAROON_EXPORT_FLOAT(F32)
MAROON_EXPORT_FLOAT(F64)
HWY_EXPORT(RAddI32); HWY_EXPORT(RMulI32); HWY_EXPORT(RMaxI32);
HWY_EXPORT(RAddU32); HWY_EXPORT(RMulU32); HWY_EXPORT(RMaxU32);
HWY_EXPORT(CmpLtF32); HWY_EXPORT(CmpEqF32); HWY_EXPORT(CmpNeF32); HWY_EXPORT(WhereF32);
HWY_EXPORT(ChainF32); HWY_EXPORT(ChainF64);

#define MAROON_DISPATCH(NAME)                                                      \
  void NAME##_d(const void* a, const void* b, const void* c, void* o, int n) {      \
    HWY_DYNAMIC_DISPATCH(NAME)(a, b, c, o, n);                                      \
  }
#define MAROON_DISPATCH_R(NAME) \
  void NAME##_d(void* acc, const void* x, int n) { HWY_DYNAMIC_DISPATCH(NAME)(acc, x, n); }
MAROON_DISPATCH(AddF32) MAROON_DISPATCH(MulF32) MAROON_DISPATCH(MaxF32) MAROON_DISPATCH(RecipF32)
MAROON_DISPATCH(SqrtF32) MAROON_DISPATCH(AddF64) MAROON_DISPATCH(MulF64) MAROON_DISPATCH(MaxF64)
MAROON_DISPATCH(RecipF64) MAROON_DISPATCH(SqrtF64)
MAROON_DISPATCH(CmpLtF32) MAROON_DISPATCH(CmpEqF32) MAROON_DISPATCH(CmpNeF32) MAROON_DISPATCH(WhereF32)
MAROON_DISPATCH_R(RAddF32) MAROON_DISPATCH_R(RMulF32) MAROON_DISPATCH_R(RMaxF32)
MAROON_DISPATCH_R(RAddF64) MAROON_DISPATCH_R(RMulF64) MAROON_DISPATCH_R(RMaxF64)
MAROON_DISPATCH_R(RAddI32) MAROON_DISPATCH_R(RMulI32) MAROON_DISPATCH_R(RMaxI32)
MAROON_DISPATCH_R(RAddU32) MAROON_DISPATCH_R(RMulU32) MAROON_DISPATCH_R(RMaxU32)

namespace {

// Scalar loops for ops with no float rounding subtleties or that need per-type code. The
// compiler may vectorise these; lane-wise, that cannot change a bit.
template <class T> T canon(T x);
template <> float canon(float x) {
  if (x != x) { uint32_t u = 0x7FC00000u; std::memcpy(&x, &u, 4); }
  return x;
}
template <> double canon(double x) {
  if (x != x) { uint64_t u = 0x7FF8000000000000ull; std::memcpy(&x, &u, 8); }
  return x;
}

template <class T, class Cmp>
void compare(const void* pa, const void* pb, const void*, void* po, int n) {
  const T* a = static_cast<const T*>(pa);
  const T* b = static_cast<const T*>(pb);
  uint8_t* o = static_cast<uint8_t*>(po);
  for (int i = 0; i < n; ++i) o[i] = Cmp{}(a[i], b[i]) ? 1 : 0;
}

template <class T>
void where(const void* pc, const void* pa, const void* pb, void* po, int n) {
  const uint8_t* c = static_cast<const uint8_t*>(pc);
  const T* a = static_cast<const T*>(pa);
  const T* b = static_cast<const T*>(pb);
  T* o = static_cast<T*>(po);
  // Both values loaded before the choice: the compiler then selects (a blend, vectorised)
  // instead of branching on the condition, which relu's signs mispredict half the time
  // (where<float> was 17% of the ONNX CNN's time). A select of the same values: the same bits.
  for (int i = 0; i < n; ++i) {
    const T x = a[i], y = b[i];
    o[i] = c[i] ? x : y;
  }
}

template <class From, class To>
void convert(const void* pa, const void*, const void*, void* po, int n) {
  const From* a = static_cast<const From*>(pa);
  To* o = static_cast<To*>(po);
  for (int i = 0; i < n; ++i) o[i] = canon(static_cast<To>(a[i]));  // rounds per MXCSR
}

template <class T>
void int_max(const void* pa, const void* pb, const void*, void* po, int n) {
  const T* a = static_cast<const T*>(pa);
  const T* b = static_cast<const T*>(pb);
  T* o = static_cast<T*>(po);
  for (int i = 0; i < n; ++i) o[i] = a[i] < b[i] ? b[i] : a[i];
}

template <class T, class F>
void int_bitwise(const void* pa, const void* pb, void* po, int n, F f) {
  const T* a = static_cast<const T*>(pa);
  const T* b = static_cast<const T*>(pb);
  T* o = static_cast<T*>(po);
  for (int i = 0; i < n; ++i) o[i] = f(a[i], b[i]);
}
// Integer add and multiply wrap: computed in an unsigned type at least as wide as unsigned int
// (uint16 * uint16 would otherwise promote to int, where 65535 * 65535 is a signed overflow).
template <class T, class U = std::make_unsigned_t<T>, class W = std::common_type_t<U, unsigned>>
void int_add(const void* a, const void* b, const void*, void* o, int n) {
  int_bitwise<U>(a, b, o, n, [](U x, U y) { return static_cast<U>(W{x} + W{y}); });
}
template <class T, class U = std::make_unsigned_t<T>, class W = std::common_type_t<U, unsigned>>
void int_mul(const void* a, const void* b, const void*, void* o, int n) {
  int_bitwise<U>(a, b, o, n, [](U x, U y) { return static_cast<U>(W{x} * W{y}); });
}
template <class T> void int_and(const void* a, const void* b, const void*, void* o, int n) {
  int_bitwise<T>(a, b, o, n, [](T x, T y) { return static_cast<T>(x & y); });
}
template <class T> void int_or(const void* a, const void* b, const void*, void* o, int n) {
  int_bitwise<T>(a, b, o, n, [](T x, T y) { return static_cast<T>(x | y); });
}
template <class T> void int_xor(const void* a, const void* b, const void*, void* o, int n) {
  int_bitwise<T>(a, b, o, n, [](T x, T y) { return static_cast<T>(x ^ y); });
}
// Shifts by a count of the same dtype: counts outside [0, width) shift every bit out (spec §8).
template <class T> void int_shl(const void* a, const void* b, const void*, void* o, int n) {
  using U = std::make_unsigned_t<T>;
  constexpr int w = sizeof(T) * 8;
  int_bitwise<T>(a, b, o, n, [](T x, T c) {
    bool out = std::is_signed_v<T> ? (c < 0 || c >= w) : static_cast<U>(c) >= static_cast<U>(w);
    return out ? T(0) : static_cast<T>(static_cast<U>(x) << c);
  });
}
template <class T> void int_shr(const void* a, const void* b, const void*, void* o, int n) {
  using U = std::make_unsigned_t<T>;
  constexpr int w = sizeof(T) * 8;
  int_bitwise<T>(a, b, o, n, [](T x, T c) {
    bool out = std::is_signed_v<T> ? (c < 0 || c >= w) : static_cast<U>(c) >= static_cast<U>(w);
    if (out) return std::is_signed_v<T> && x < 0 ? T(-1) : T(0);
    return static_cast<T>(x >> c);  // arithmetic for signed (C++20), logical for unsigned
  });
}
template <size_t S>
void copy_bits(const void* a, const void*, const void*, void* o, int n) {  // BITCAST
  std::memcpy(o, a, static_cast<size_t>(n) * S);
}
// Bool results and operands are bytes holding 0 or 1.
void bool_and(const void* a, const void* b, const void*, void* o, int n) { int_and<uint8_t>(a, b, nullptr, o, n); }
void bool_or(const void* a, const void* b, const void*, void* o, int n) { int_or<uint8_t>(a, b, nullptr, o, n); }
void bool_xor(const void* a, const void* b, const void*, void* o, int n) { int_xor<uint8_t>(a, b, nullptr, o, n); }
void bool_eq(const void* pa, const void* pb, const void*, void* po, int n) {
  const uint8_t* a = static_cast<const uint8_t*>(pa);
  const uint8_t* b = static_cast<const uint8_t*>(pb);
  uint8_t* o = static_cast<uint8_t*>(po);
  for (int i = 0; i < n; ++i) o[i] = a[i] == b[i];
}
void bool_lt(const void* pa, const void* pb, const void*, void* po, int n) {
  const uint8_t* a = static_cast<const uint8_t*>(pa);
  const uint8_t* b = static_cast<const uint8_t*>(pb);
  uint8_t* o = static_cast<uint8_t*>(po);
  for (int i = 0; i < n; ++i) o[i] = !a[i] && b[i];
}
template <class To>
void from_bool(const void* pa, const void*, const void*, void* po, int n) {
  const uint8_t* a = static_cast<const uint8_t*>(pa);
  To* o = static_cast<To*>(po);
  for (int i = 0; i < n; ++i) o[i] = a[i] ? To(1) : To(0);
}
// float -> int32: truncate, NaN -> 0, saturate (spec §6). Compared in double, where both
// bounds and every float32 are exact.
template <class From>
void to_int32(const void* pa, const void*, const void*, void* po, int n) {
  const From* a = static_cast<const From*>(pa);
  int32_t* o = static_cast<int32_t*>(po);
  for (int i = 0; i < n; ++i) {
    double x = static_cast<double>(a[i]);
    o[i] = x != x ? 0 : x <= -2147483648.0 ? INT32_MIN : x >= 2147483647.0 ? INT32_MAX
                                                                              : static_cast<int32_t>(x);
  }
}

struct Lt { template <class T> bool operator()(T a, T b) const { return a < b; } };
struct Ne { template <class T> bool operator()(T a, T b) const { return a != b; } };
struct Eq { template <class T> bool operator()(T a, T b) const { return a == b; } };

template <class T>
FastFn int_op(Op op) {
  switch (op) {
    case Op::ADD: return int_add<T>;
    case Op::MUL: return int_mul<T>;
    case Op::MAX: return int_max<T>;
    case Op::CMPLT: return compare<T, Lt>;
    case Op::CMPNE: return compare<T, Ne>;
    case Op::CMPEQ: return compare<T, Eq>;
    case Op::WHERE: return where<T>;
    case Op::AND: return int_and<T>;
    case Op::OR: return int_or<T>;
    case Op::XOR: return int_xor<T>;
    case Op::SHL: return int_shl<T>;
    case Op::SHR: return int_shr<T>;
    default: return nullptr;
  }
}

template <class From>
FastFn cast_from(DType to) {
  switch (to) {
    case DType::Float32: return convert<From, float>;
    case DType::Float64: return convert<From, double>;
    default: return nullptr;
  }
}

}  // namespace

FastFn fast_op(Op op, DType in, DType out) {
  if (op == Op::BITCAST) {
    switch (itemsize(in)) {
      case 2: return copy_bits<2>;
      case 4: return copy_bits<4>;
      case 8: return copy_bits<8>;
      default: return copy_bits<1>;
    }
  }
  if (op == Op::CAST) {
    // Hardware conversions: float<->double and int32->float round per MXCSR exactly as IEEE.
    if (in == DType::Float32 && out == DType::Float64) return cast_from<float>(out);
    if (in == DType::Float64 && out == DType::Float32) return cast_from<double>(out);
    if (in == DType::Int32) return cast_from<int32_t>(out);
    // uint8 -> float32: every byte value is exact in float32, so no rounding mode matters (the
    // MNIST input path: 100K pixels a training step went through src/ref one at a time).
    if (in == DType::UInt8 && out == DType::Float32) return convert<uint8_t, float>;
    if (in == DType::Bool && out == DType::Float32) return from_bool<float>;
    if (in == DType::Bool && out == DType::Float64) return from_bool<double>;
    if (in == DType::Bool && out == DType::Int32) return from_bool<int32_t>;
    if (out == DType::Int32 && in == DType::Float32) return to_int32<float>;
    if (out == DType::Int32 && in == DType::Float64) return to_int32<double>;
    return nullptr;
  }
  if (in == DType::Bool) {
    switch (op) {
      case Op::ADD: case Op::MAX: case Op::OR: return bool_or;
      case Op::MUL: case Op::AND: return bool_and;
      case Op::XOR: case Op::CMPNE: return bool_xor;
      case Op::CMPEQ: return bool_eq;
      case Op::CMPLT: return bool_lt;
      case Op::WHERE: return where<uint8_t>;
      default: return nullptr;
    }
  }
  if (in == DType::Float32 || in == DType::Float64) {
    const bool f = in == DType::Float32;
    switch (op) {
      case Op::ADD: return f ? AddF32_d : AddF64_d;
      case Op::MUL: return f ? MulF32_d : MulF64_d;
      case Op::MAX: return f ? MaxF32_d : MaxF64_d;
      case Op::RECIPROCAL: return f ? RecipF32_d : RecipF64_d;
      case Op::SQRT: return f ? SqrtF32_d : SqrtF64_d;
      case Op::CMPLT: return f ? CmpLtF32_d : compare<double, Lt>;
      case Op::CMPNE: return f ? CmpNeF32_d : compare<double, Ne>;
      case Op::CMPEQ: return f ? CmpEqF32_d : compare<double, Eq>;
      case Op::WHERE: return f ? WhereF32_d : where<double>;
      default: return nullptr;
    }
  }
  switch (in) {
    case DType::Int32: return int_op<int32_t>(op);
    case DType::Int64: return int_op<int64_t>(op);
    case DType::Int8: return int_op<int8_t>(op);
    case DType::UInt8: return int_op<uint8_t>(op);
    case DType::Int16: return int_op<int16_t>(op);
    case DType::UInt16: return int_op<uint16_t>(op);
    case DType::UInt32: return int_op<uint32_t>(op);
    case DType::UInt64: return int_op<uint64_t>(op);
    default: return nullptr;
  }
}

namespace {
void chain_f32_d(const void* f, const ChainStep* s, int ns, void* o, int n) { HWY_DYNAMIC_DISPATCH(ChainF32)(f, s, ns, o, n); }
void chain_f64_d(const void* f, const ChainStep* s, int ns, void* o, int n) { HWY_DYNAMIC_DISPATCH(ChainF64)(f, s, ns, o, n); }
}  // namespace

bool chain_op(const Instr& ins, ChainOp* op) {
  if ((ins.in != DType::Float32 && ins.in != DType::Float64) || ins.out != ins.in) return false;
  // The kernels run in the library's round-to-nearest state (exec_instr sets another for them).
  if (op_info(ins.op).rounds && ins.rnd != Round::NearestEven) return false;
  switch (ins.op) {
    case Op::ADD: *op = ChainOp::Add; return true;
    case Op::MUL: *op = ins.src[0] == ins.src[1] ? ChainOp::Square : ChainOp::Mul; return true;
    case Op::MAX: *op = ChainOp::Max; return true;
    case Op::RECIPROCAL: *op = ChainOp::Recip; return true;
    case Op::SQRT: *op = ChainOp::Sqrt; return true;
    case Op::EXP2:  // binary32 only (fast_math.h), rounded to nearest (checked above)
      if (ins.in != DType::Float32) return false;
      *op = ChainOp::Exp2;
      return true;
    default: return false;
  }
}

ChainFn fast_chain(DType d) {
  return d == DType::Float32 ? chain_f32_d : d == DType::Float64 ? chain_f64_d : nullptr;
}

FastReduceFn fast_reduce(ReduceOp op, DType d) {
  if (d == DType::Float32) return op == ReduceOp::ADD ? RAddF32_d : op == ReduceOp::MUL ? RMulF32_d : RMaxF32_d;
  if (d == DType::Float64) return op == ReduceOp::ADD ? RAddF64_d : op == ReduceOp::MUL ? RMulF64_d : RMaxF64_d;
  if (d == DType::Int32) return op == ReduceOp::ADD ? RAddI32_d : op == ReduceOp::MUL ? RMulI32_d : RMaxI32_d;
  if (d == DType::UInt32) return op == ReduceOp::ADD ? RAddU32_d : op == ReduceOp::MUL ? RMulU32_d : RMaxU32_d;
  return nullptr;
}

// ---- SIMD target selection ----

namespace {

struct TargetName {
  const char* name;
  int64_t bits;
};
// Weakest first: with nothing forced, the last one this CPU has is the one Highway dispatches to.
#if HWY_ARCH_X86
constexpr TargetName kTargets[] = {
    {"scalar", HWY_BASELINE_SCALAR}, {"sse4", HWY_SSE4}, {"avx2", HWY_AVX2}, {"avx512", HWY_AVX3}};
#elif HWY_ARCH_ARM_A64
constexpr TargetName kTargets[] = {
    {"scalar", HWY_BASELINE_SCALAR}, {"neon", HWY_NEON}, {"sve", HWY_SVE}, {"sve2", HWY_SVE2}};
#elif HWY_ARCH_RVV
constexpr TargetName kTargets[] = {{"scalar", HWY_BASELINE_SCALAR}, {"rvv", HWY_RVV}};
#else
constexpr TargetName kTargets[] = {{"scalar", HWY_BASELINE_SCALAR}};
#endif

std::string target_names() {
  std::string s;
  for (const auto& t : kTargets) s += std::string(s.empty() ? "" : ", ") + t.name;
  return s;
}

// The forced target's name, guarded: Python threads may set and read it concurrently.
std::mutex g_forced_mu;
std::string& forced() {
  static std::string f;
  return f;
}

// What this CPU supports, read once before any target is forced (forcing mocks SupportedTargets).
int64_t real_targets() {
  static const int64_t t = hwy::SupportedTargets() & HWY_TARGETS;
  return t;
}

void apply(const std::string& name) {
  for (const auto& t : kTargets) {
    if (name == t.name) {
      if (!(real_targets() & t.bits))
        throw Error("[simd] target '" + name + "' is not available on this machine or build");
      std::lock_guard<std::mutex> g(g_forced_mu);
      hwy::SetSupportedTargetsForTest(t.bits);
      forced() = name;
      return;
    }
  }
  throw Error("[simd] unknown target '" + name + "' (" + target_names() + ")");
}

// Runs during static initialisation, where an exception would abort the program: a bad value
// is reported and ignored (every target gives the same bits, so only speed is at stake).
bool init_from_env() {
  real_targets();
  if (std::optional<std::string> e = setting(SettingId::MAROON_SIMD)) {
    try {
      apply(*e);
    } catch (const Error& err) {
      std::fprintf(stderr, "maroon: ignoring MAROON_SIMD: %s\n", err.what());
    }
  }
  return true;
}
const bool g_env_applied = init_from_env();

}  // namespace

std::string current_target_name() {
  (void)g_env_applied;
  {
    std::lock_guard<std::mutex> g(g_forced_mu);
    if (!forced().empty()) return forced();
  }
  std::string best = "scalar";
  for (const auto& t : kTargets)
    if (real_targets() & t.bits) best = t.name;
  return best;
}

}  // namespace maroon::cpu

namespace maroon {
std::string simd_target() { return cpu::current_target_name(); }
void set_simd_target(const std::string& name) { cpu::apply(name); }
std::vector<std::string> available_simd_targets() {
  std::vector<std::string> out;
  for (const auto& t : cpu::kTargets)
    if (cpu::real_targets() & t.bits) out.push_back(t.name);
  return out;
}
}  // namespace maroon
#endif  // HWY_ONCE
