// Lagoon's computing arms with Lagoon's semantics (lagoon.hoon), in the requested rounding mode.
// Fold orders are Lagoon's, step for step: see docs/lagoon.md for each one and for where they
// differ from Maroon's core contract (docs/spec.md).
#include <algorithm>
#include <cstring>

#include "lagoon/elem.h"
#include "lagoon/internal.h"
#include "lagoon/lagoon.hpp"

namespace maroon::lagoon {

namespace {

template <class E>
using B = typename E::Bits;

template <class E>
B<E> get(const RayRef& a, uint64_t i) {
  B<E> v;
  std::memcpy(&v, a.elems() + i * sizeof(B<E>), sizeof v);
  return v;
}

template <class E>
void put(Ray& r, uint64_t i, B<E> v) {
  std::memcpy(r.elems() + i * sizeof(B<E>), &v, sizeof v);
}

// ++scalar-to-ray: one element, every axis 1, the input's rank.
Meta scalar_meta(const Meta& m) {
  Meta out = m;
  for (auto& d : out.shape) d = 1;
  return out;
}

template <class E>
B<E> apply(const E& e, Bin op, B<E> x, B<E> y) {
  // Comparisons return the kind's 1 and 0 (1.0/+0.0 for %i754).
  auto truth = [](bool t) { return t ? E::one() : E::zero(); };
  switch (op) {
    case Bin::Add: return e.add(x, y);
    case Bin::Sub: return e.sub(x, y);
    case Bin::Mul: return e.mul(x, y);
    case Bin::Div: return e.div(x, y);
    case Bin::Mod: return e.mod(x, y);
    case Bin::Gth: return truth(e.gt(x, y));
    case Bin::Gte: return truth(e.ge(x, y));
    case Bin::Lth: return truth(e.lt(x, y));
    case Bin::Lte: return truth(e.le(x, y));
    case Bin::Equ: return truth(x == y);  // bit equality: +0 != -0, equal NaN bits are equal
    case Bin::Neq: return truth(x != y);
  }
  return x;
}

const char* bin_name(Bin op) {
  static const char* names[] = {"add", "sub", "mul", "div", "mod", "gth", "gte", "lth", "lte", "equ", "neq"};
  return names[int(op)];
}

void same_meta(const RayRef& a, const RayRef& b, const char* arm) {
  if (!(a.meta == b.meta))
    throw Error(kEArg, std::string(arm) + ": metas differ, " + meta_str(a.meta) + " vs " + meta_str(b.meta));
}

// The hot loops: one pass, element type known at compile time.
template <class E>
Ray binary_loop(const E& e, Bin op, const RayRef& a, const RayRef& b) {
  Ray r = make_ray(a.meta);
  const uint64_t n = a.n;
  switch (op) {  // hoisted so each loop is a plain map the compiler can vectorize
    case Bin::Add:
      for (uint64_t i = 0; i < n; ++i) put<E>(r, i, e.add(get<E>(a, i), get<E>(b, i)));
      break;
    case Bin::Sub:
      for (uint64_t i = 0; i < n; ++i) put<E>(r, i, e.sub(get<E>(a, i), get<E>(b, i)));
      break;
    case Bin::Mul:
      for (uint64_t i = 0; i < n; ++i) put<E>(r, i, e.mul(get<E>(a, i), get<E>(b, i)));
      break;
    default:
      for (uint64_t i = 0; i < n; ++i) put<E>(r, i, apply(e, op, get<E>(a, i), get<E>(b, i)));
  }
  return r;
}

template <class E>
B<E> right_fold_add(const E& e, const RayRef& a) {
  // Lagoon's cumsum: (reel (ravel a) add), acc = +0, i = n-1 down to 0: acc = x_i + acc.
  B<E> acc = E::zero();
  for (uint64_t i = a.n; i-- > 0;) acc = e.add(get<E>(a, i), acc);
  return acc;
}

template <class E>
Ray boxed(const Meta& m, B<E> v) {
  Ray r = make_ray(scalar_meta(m));
  put<E>(r, 0, v);
  return r;
}

// Lagoon's max/min: (reel (ravel a) fun) with the accumulator starting at x_0 and the scan
// visiting x_{n-1} .. x_0, replacing only on a strict comparison: a NaN at x_0 sticks, an
// interior NaN is skipped, and among equal extremes (say -0 and +0) x_0 wins if it is one,
// otherwise the highest index does (it is visited first).
template <class E>
B<E> extreme(const E& e, const RayRef& a, bool is_max) {
  if (a.n == 0) throw Error(kEDomain, std::string(is_max ? "max" : "min") + ": empty ray (Lagoon crashes)");
  B<E> acc = get<E>(a, 0);
  for (uint64_t i = a.n; i-- > 0;) {
    B<E> x = get<E>(a, i);
    if (is_max ? e.gt(x, acc) : e.lt(x, acc)) acc = x;
  }
  return acc;
}

// mmul for native types: per (i, j), acc = +0, then acc = acc + a_ik * b_kj for k ascending,
// each product and each sum rounded. The loop order i-k-j keeps that order for every output
// and vectorizes across j (outputs), never splitting one output's fold.
template <class T>
void mmul_kernel(const T* __restrict A, const T* __restrict Bm, T* __restrict C, T* __restrict out, uint64_t M,
                 uint64_t K, uint64_t P) {
  for (uint64_t i = 0; i < M; ++i) {
    for (uint64_t j = 0; j < P; ++j) C[j] = T(0);
    const T* arow = A + i * K;
    for (uint64_t k = 0; k < K; ++k) {
      const T aik = arow[k];
      const T* __restrict brow = Bm + k * P;
      for (uint64_t j = 0; j < P; ++j) {
        T p = aik * brow[j];
        C[j] = C[j] + p;
      }
    }
    for (uint64_t j = 0; j < P; ++j) out[i * P + j] = C[j];
  }
}

void mmul_f32(const float* __restrict A, const float* __restrict B, float* __restrict C, float* __restrict out, uint64_t M, uint64_t K,
                                   uint64_t P) {
  mmul_kernel(A, B, C, out, M, K, P);
}
void mmul_f64(const double* __restrict A, const double* __restrict B, double* __restrict C, double* __restrict out, uint64_t M,
                                   uint64_t K, uint64_t P) {
  mmul_kernel(A, B, C, out, M, K, P);
}

template <class T, class E>
void mmul_native(const E&, const RayRef& a, const RayRef& b, Ray& r, uint64_t M, uint64_t K, uint64_t P) {
  std::vector<T> A(M * K), Bm(K * P), C(P), out(M * P);
  if (!A.empty()) std::memcpy(A.data(), a.elems(), A.size() * sizeof(T));
  if (!Bm.empty()) std::memcpy(Bm.data(), b.elems(), Bm.size() * sizeof(T));
  if constexpr (std::is_same_v<T, float>) mmul_f32(A.data(), Bm.data(), C.data(), out.data(), M, K, P);
  else mmul_f64(A.data(), Bm.data(), C.data(), out.data(), M, K, P);
  for (uint64_t i = 0; i < M * P; ++i) {
    B<E> bits = E::u(out[i]);  // canonical NaN
    std::memcpy(r.elems() + i * sizeof(T), &bits, sizeof(T));
  }
}

}  // namespace

Bin bin_from_name(const std::string& name) {
  for (int i = 0; i <= int(Bin::Neq); ++i)
    if (name == bin_name(Bin(i))) return Bin(i);
  throw Error(kEArg, "no elementwise arm named '" + name + "'");
}

Ray binary(Bin op, const RayRef& a, const RayRef& b, Round r) {
  const char* arm = bin_name(op);
  same_meta(a, b, arm);
  need_bytes(a, arm);
  RoundGuard g(r);
  if (a.meta.kind == Kind::I754 && a.meta.bloq == 4 && int(op) <= int(Bin::Div) && op != Bin::Mod &&
      f16_simd_enabled()) {
    Ray out = make_ray(a.meta);
    const int code = op == Bin::Add ? 0 : op == Bin::Sub ? 1 : op == Bin::Mul ? 2 : 3;
    f16_binary(code, a.elems(), b.elems(), out.elems(), a.n);
    return out;
  }
  return dispatch(a.meta.kind, a.meta.bloq, r, arm, [&](auto e) { return binary_loop(e, op, a, b); });
}

Ray binary_scalar(Bin op, const RayRef& a, const std::vector<uint8_t>& n, Round r) {
  // ++add-scalar &c.: (fill meta.a n), then the elementwise arm.
  need_bytes(a, bin_name(op));
  Ray b = fill(a.meta, n);
  return binary(op, a, b.ref(), r);
}

Ray broadcast_binary(Bin op, const RayRef& a, const RayRef& b, Round r) {
  if (a.meta.bloq != b.meta.bloq || a.meta.kind != b.meta.kind)
    throw Error(kEArg, std::string(bin_name(op)) + ": kinds or bloqs differ, " + meta_str(a.meta) + " vs " +
                           meta_str(b.meta));
  auto shape = broadcast_shape(a.meta.shape, b.meta.shape, bin_name(op));
  Ray ab = broadcast_to(a, shape), bb = broadcast_to(b, shape);
  return binary(op, ab.ref(), bb.ref(), r);
}

Ray abs(const RayRef& a, Round r) {
  need_bytes(a, "abs");
  RoundGuard g(r);
  return dispatch(a.meta.kind, a.meta.bloq, r, "abs", [&](auto e) {
    using E = decltype(e);
    Ray out = make_ray(a.meta);
    for (uint64_t i = 0; i < a.n; ++i) put<E>(out, i, e.abs(get<E>(a, i)));
    return out;
  });
}

Ray cumsum(const RayRef& a, Round r) {
  need_bytes(a, "cumsum");
  RoundGuard g(r);
  return dispatch(a.meta.kind, a.meta.bloq, r, "cumsum", [&](auto e) {
    using E = decltype(e);
    return boxed<E>(a.meta, right_fold_add(e, a));
  });
}

Ray prod(const RayRef& a, Round r) {
  need_bytes(a, "prod");
  RoundGuard g(r);
  return dispatch(a.meta.kind, a.meta.bloq, r, "prod", [&](auto e) {
    using E = decltype(e);
    // (reel (ravel a) |=([b=_1 c=_1] (mul b c))): the accumulator starts at the *atom* 1, which
    // for %i754 is the smallest subnormal, not 1.0. Lagoon's bits, reproduced on purpose.
    B<E> acc = 1;
    for (uint64_t i = a.n; i-- > 0;) acc = e.mul(get<E>(a, i), acc);
    return boxed<E>(a.meta, acc);
  });
}

Ray dot(const RayRef& a, const RayRef& b, Round r) {
  if (a.meta.shape != b.meta.shape)
    throw Error(kEArg, "dot: shapes differ, " + shape_str(a.meta.shape) + " vs " + shape_str(b.meta.shape));
  Ray m = binary(Bin::Mul, a, b, r);  // products rounded first, then summed right to left
  return cumsum(m.ref(), r);
}

Ray mmul(const RayRef& a, const RayRef& b, Round r) {
  const auto &sa = a.meta.shape, &sb = b.meta.shape;
  if (sa.size() != 2 || sb.size() != 2 || sa[1] != sb[0])
    throw Error(kEArg, "mmul: cannot multiply " + shape_str(sa) + " by " + shape_str(sb));
  if (a.meta.bloq != b.meta.bloq || a.meta.kind != b.meta.kind)
    throw Error(kEArg, "mmul: kinds or bloqs differ, " + meta_str(a.meta) + " vs " + meta_str(b.meta));
  need_bytes(a, "mmul");
  const uint64_t M = sa[0], K = sa[1], P = sb[1];
  RoundGuard g(r);
  return dispatch(a.meta.kind, a.meta.bloq, r, "mmul", [&](auto e) {
    using E = decltype(e);
    Ray out = make_ray(Meta{{M, P}, a.meta.bloq, a.meta.kind});
    if constexpr (std::is_same_v<E, F32>) {
      mmul_native<float>(e, a, b, out, M, K, P);
    } else if constexpr (std::is_same_v<E, F64>) {
      mmul_native<double>(e, a, b, out, M, K, P);
    } else if (std::is_same_v<E, F16> && f16_simd_enabled()) {
      f16_mmul(a.elems(), b.elems(), out.elems(), M, K, P);
    } else {
      // The same fold per output; i-k-j order so that the P independent chains of a row
      // overlap in the pipeline.
      std::vector<B<E>> c(P);
      for (uint64_t i = 0; i < M; ++i) {
        std::fill(c.begin(), c.end(), E::zero());
        for (uint64_t k = 0; k < K; ++k) {
          const B<E> aik = get<E>(a, i * K + k);
          for (uint64_t j = 0; j < P; ++j) c[j] = e.add(c[j], e.mul(aik, get<E>(b, k * P + j)));
        }
        for (uint64_t j = 0; j < P; ++j) put<E>(out, i * P + j, c[j]);
      }
    }
    return out;
  });
}

Ray max(const RayRef& a) {
  need_bytes(a, "max");
  return dispatch(a.meta.kind, a.meta.bloq, Round::TowardZero, "max", [&](auto e) {
    using E = decltype(e);
    return boxed<E>(a.meta, extreme(e, a, true));
  });
}

Ray min(const RayRef& a) {
  need_bytes(a, "min");
  return dispatch(a.meta.kind, a.meta.bloq, Round::TowardZero, "min", [&](auto e) {
    using E = decltype(e);
    return boxed<E>(a.meta, extreme(e, a, false));
  });
}

static uint64_t arg_extreme(const RayRef& a, bool is_max) {
  // (find ~[extreme] (ravel a)): the first index whose bits equal the extreme's.
  Ray m = is_max ? max(a) : min(a);
  const size_t w = a.meta.elem_bytes();
  for (uint64_t i = 0; i < a.n; ++i)
    if (std::memcmp(a.elems() + i * w, m.elems(), w) == 0) return i;
  throw Error(kEInternal, "argmax: extreme not found");
}

uint64_t argmax(const RayRef& a) { return arg_extreme(a, true); }
uint64_t argmin(const RayRef& a) { return arg_extreme(a, false); }

// ++any / ++all: the max (min) element's bits are non-zero (so +0.0 is false, -0.0 true).
static bool nonzero(const Ray& r) {
  for (size_t i = 0; i + 1 < r.data.size(); ++i)
    if (r.data[i]) return true;
  return false;
}
bool any(const RayRef& a) { return nonzero(max(a)); }
bool all(const RayRef& a) { return nonzero(min(a)); }

Ray pow_n(const RayRef& a, uint64_t n, Round r) {
  // ++pow-n: n = 0 gives ones; otherwise b = a, then b = (mul a b) n-1 times.
  need_bytes(a, "pow-n");
  if (n == 0) return ones(a.meta);
  Ray b = copy_ray(a);
  for (uint64_t k = 1; k < n; ++k) b = binary(Bin::Mul, a, b.ref(), r);
  return b;
}

Ray trace(const RayRef& a, Round r) {
  Ray d = diag(a);
  return cumsum(d.ref(), r);
}

// ---------------------------------------------------------------- linspace, range

template <class E>
static B<E> scalar_bits(const std::vector<uint8_t>& x, const char* arm) {
  size_t L = x.size();
  while (L > 0 && x[L - 1] == 0) --L;
  if (L > sizeof(B<E>))
    throw Error(kEArg, std::string(arm) + ": a scalar is wider than " + std::to_string(sizeof(B<E>) * 8) + " bits");
  B<E> v = 0;
  if (L) std::memcpy(&v, x.data(), L);
  return v;
}

Ray linspace(const Meta& m0, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, uint64_t n,
             Round r) {
  Meta m{{n}, m0.bloq, Kind::I754};
  if (n == 0) throw Error(kEDomain, "linspace: n = 0 (Lagoon crashes)");
  RoundGuard g(r);
  return dispatch(Kind::I754, m.bloq, r, "linspace", [&](auto e) {
    using E = decltype(e);
    B<E> av = scalar_bits<E>(a, "linspace"), bv = scalar_bits<E>(b, "linspace");
    Ray out = make_ray(m);
    put<E>(out, 0, av);
    if (n == 1) return out;
    // d = (b - a) / sun(n - 1); x_i = a + sun(i) * d for i < n-1; the last is b exactly.
    B<E> d = e.div(e.sub(bv, av), e.from_uint(n - 1));
    for (uint64_t i = 0; i + 1 < n; ++i) put<E>(out, i, e.add(av, e.mul(e.from_uint(i), d)));
    put<E>(out, n - 1, bv);
    return out;
  });
}

Ray range(const Meta& m0, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
          const std::vector<uint8_t>& d, Round r, uint64_t max_elems) {
  if (max_elems == 0) max_elems = uint64_t{1} << 26;
  RoundGuard g(r);
  return dispatch(Kind::I754, m0.bloq, r, "range", [&](auto e) {
    using E = decltype(e);
    B<E> av = scalar_bits<E>(a, "range"), bv = scalar_bits<E>(b, "range"), dv = scalar_bits<E>(d, "range");
    // Lagoon: ba = b - a; starting from [a], append x + d while the next value has not passed
    // b (next >= b stops when ba >= 0, next <= b when ba < 0); b itself is excluded.
    if (!e.le(av, av) || !e.le(bv, bv) || !e.le(dv, dv))
      throw Error(kEDomain, "range: a NaN bound or step (Lagoon does not terminate)");
    const bool down = e.lt(e.sub(bv, av), E::zero());
    auto stops = [&](B<E> next) { return down ? e.le(next, bv) : e.ge(next, bv); };
    std::vector<B<E>> xs{av};
    for (;;) {
      B<E> next = e.add(xs.back(), dv);
      if (stops(next)) break;
      // Lagoon loops forever here (numerics #78 makes it %fail): no progress, NaN, or a step
      // pointing away from b.
      bool away = down ? !e.lt(dv, E::zero()) : !e.gt(dv, E::zero());
      if (next == xs.back() || !(e.le(next, next)) || away)
        throw Error(kEDomain, "range: the sequence never passes b (Lagoon does not terminate)");
      if (xs.size() >= max_elems)
        throw Error(kENoMem, "range: more than " + std::to_string(max_elems) + " elements");
      xs.push_back(next);
    }
    Ray out = make_ray(Meta{{xs.size()}, m0.bloq, Kind::I754});
    for (uint64_t i = 0; i < xs.size(); ++i) put<E>(out, i, xs[i]);
    return out;
  });
}

// ---------------------------------------------------------------- along an axis, conv

namespace {
// Applies fold(index_of) to every line along `axis`: index_of(k) is the element index of position
// k on that line; the result goes to the line's place in a ray of shape s with s[axis] = 1.
template <class E, class Fold>
Ray fold_axis(const RayRef& a, uint32_t axis, Fold fold) {
  const auto& s = a.meta.shape;
  Meta om = a.meta;
  om.shape[axis] = 1;
  Ray out = make_ray(om);
  uint64_t inner = strides_of(s)[axis], K = s[axis], outer = 1;
  for (uint32_t k = 0; k < axis; ++k) outer *= s[k];
  for (uint64_t o = 0; o < outer; ++o)
    for (uint64_t i = 0; i < inner; ++i)
      put<E>(out, o * inner + i, fold(K, [&](uint64_t k) { return (o * K + k) * inner + i; }));
  return out;
}
}  // namespace

Ray sum_axis(const RayRef& a, uint32_t axis, Round r) {
  need_bytes(a, "sum-axis");
  const auto& s = a.meta.shape;
  if (axis >= s.size()) throw Error(kEArg, "sum-axis: axis " + std::to_string(axis) + " out of range for " + shape_str(s));
  RoundGuard g(r);
  return dispatch(a.meta.kind, a.meta.bloq, r, "sum-axis", [&](auto e) {
    using E = decltype(e);
    return fold_axis<E>(a, axis, [&](uint64_t K, auto at) {
      B<E> acc = E::zero();  // cumsum's order along the axis: k = K-1 down to 0
      for (uint64_t k = K; k-- > 0;) acc = e.add(get<E>(a, at(k)), acc);
      return acc;
    });
  });
}

Ray max_axis(const RayRef& a, uint32_t axis) {
  need_bytes(a, "max-axis");
  const auto& s = a.meta.shape;
  if (axis >= s.size()) throw Error(kEArg, "max-axis: axis " + std::to_string(axis) + " out of range for " + shape_str(s));
  if (s[axis] == 0) throw Error(kEDomain, "max-axis: empty axis (Lagoon's max crashes)");
  return dispatch(a.meta.kind, a.meta.bloq, Round::TowardZero, "max-axis", [&](auto e) {
    using E = decltype(e);
    return fold_axis<E>(a, axis, [&](uint64_t K, auto at) {
      B<E> acc = get<E>(a, at(0));  // Lagoon's max along the axis
      for (uint64_t k = K; k-- > 0;) {
        B<E> x = get<E>(a, at(k));
        if (e.gt(x, acc)) acc = x;
      }
      return acc;
    });
  });
}

Ray conv2d(const RayRef& x, const RayRef& w, const uint32_t stride[2], const uint32_t padding[2], Round r) {
  const auto &sx = x.meta.shape, &sw = w.meta.shape;
  if (sx.size() != 4 || sw.size() != 4 || sx[1] != sw[1])
    throw Error(kEArg, "conv2d: x must be [N C H W] and w [O C KH KW], not " + shape_str(sx) + " and " + shape_str(sw));
  if (x.meta.bloq != w.meta.bloq || x.meta.kind != w.meta.kind)
    throw Error(kEArg, "conv2d: kinds or bloqs differ, " + meta_str(x.meta) + " vs " + meta_str(w.meta));
  if (stride[0] == 0 || stride[1] == 0) throw Error(kEArg, "conv2d: stride 0");
  need_bytes(x, "conv2d");
  const uint64_t N = sx[0], C = sx[1], H = sx[2], W = sx[3], O = sw[0], KH = sw[2], KW = sw[3];
  const uint64_t Hp = H + 2 * uint64_t(padding[0]), Wp = W + 2 * uint64_t(padding[1]);
  if (Hp < KH || Wp < KW) throw Error(kEArg, "conv2d: the kernel is larger than the padded input");
  const uint64_t OH = (Hp - KH) / stride[0] + 1, OW = (Wp - KW) / stride[1] + 1;
  RoundGuard g(r);
  return dispatch(x.meta.kind, x.meta.bloq, r, "conv2d", [&](auto e) {
    using E = decltype(e);
    Ray out = make_ray(Meta{{N, O, OH, OW}, x.meta.bloq, x.meta.kind});
    for (uint64_t n = 0; n < N; ++n)
      for (uint64_t o = 0; o < O; ++o)
        for (uint64_t oh = 0; oh < OH; ++oh)
          for (uint64_t ow = 0; ow < OW; ++ow) {
            B<E> acc = E::zero();  // mmul's left fold over the im2col row (c, kh, kw)
            for (uint64_t c = 0; c < C; ++c)
              for (uint64_t kh = 0; kh < KH; ++kh)
                for (uint64_t kw = 0; kw < KW; ++kw) {
                  int64_t ih = int64_t(oh * stride[0] + kh) - padding[0];
                  int64_t iw = int64_t(ow * stride[1] + kw) - padding[1];
                  B<E> xv = (ih < 0 || iw < 0 || uint64_t(ih) >= H || uint64_t(iw) >= W)
                                ? E::zero()  // padding is +0 elements, which take part
                                : get<E>(x, ((n * C + c) * H + uint64_t(ih)) * W + uint64_t(iw));
                  B<E> wv = get<E>(w, ((o * C + c) * KH + kh) * KW + kw);
                  acc = e.add(acc, e.mul(xv, wv));
                }
            put<E>(out, ((n * O + o) * OH + oh) * OW + ow, acc);
          }
    return out;
  });
}

}  // namespace maroon::lagoon
