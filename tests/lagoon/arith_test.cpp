// The Lagoon layer's hardware arithmetic against independent references: the integer
// soft-float (sf::, exact in all four modes) for binary16/32/64, MPFR for binary128. Inputs are
// random bits biased to the cases where rounding, overflow, subnormals, zeros and NaNs differ.
// Also: fold orders (mmul, cumsum, dot) against sf loops written from Lagoon's definitions, %mod,
// linspace, directed-mode overflow, and the caller's floating-point state.
#include <mpfr.h>

#include <cfenv>
#include <functional>
#include <random>

#include "lagoon/internal.h"
#include "maroon/round.h"
#include "float/softfloat.h"
#include "util.h"

using namespace lagoon_test;
using maroon::Round;
namespace sf = maroon::sf;
using u128 = maroon::u128;  // unsigned __int128 where the compiler has it, else the portable U128

namespace {

const Round kModes[] = {Round::NearestEven, Round::TowardZero, Round::Up, Round::Down};
int rnd_char(Round r) {
  switch (r) {
    case Round::NearestEven: return 'n';
    case Round::TowardZero: return 'z';
    case Round::Up: return 'u';
    case Round::Down: return 'd';
  }
  return 'z';
}

struct Fmt {
  int bits, ebits, mbits;
  u128 sign() const { return u128{1} << (bits - 1); }
  u128 expmask() const { return (u128{1} << ebits) - 1; }
  u128 manmask() const { return (u128{1} << mbits) - 1; }
  u128 nan() const { return (expmask() << mbits) | (u128{1} << (mbits - 1)); }
};
const Fmt kH{16, 5, 10}, kS{32, 8, 23}, kD{64, 11, 52}, kQ{128, 15, 112};

// Random float bits: specials, subnormals, near one, near the overflow threshold, random.
class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}
  u128 r128() { return (u128(rng_()) << 64) | rng_(); }
  u128 bits(const Fmt& f) {
    u128 sign = (rng_() & 1) ? f.sign() : 0, man = r128() & f.manmask();
    u128 bias = (u128{1} << (f.ebits - 1)) - 1;
    switch (rng_() % 12) {
      case 0: return sign | (rng_() % 4 ? man : 0);                           // subnormal or zero
      case 1: return sign | (f.expmask() << f.mbits) | (rng_() % 3 ? 0 : man);  // inf or NaN
      case 2: return sign | ((f.expmask() - 1 - rng_() % 3) << f.mbits) | man;  // near max
      case 3: return sign | ((bias + rng_() % 5 - 2) << f.mbits) | man;          // near one
      case 4: return sign | ((bias + rng_() % 5 - 2) << f.mbits) | (man & ~((u128{1} << (f.mbits / 2)) - 1));
      case 5: return sign | (u128(1 + rng_() % 3) << f.mbits) | man;          // near the subnormals
      case 6: return sign | ((bias + rng_() % 8) << f.mbits);                    // small integers
      default: return r128() & (f.bits == 128 ? ~u128{0} : ((u128{1} << f.bits) - 1));
    }
  }
  uint64_t u64() { return rng_(); }

 private:
  std::mt19937_64 rng_;
};

sf::Format sf_fmt(int bloq) { return bloq == 4 ? sf::kF16 : bloq == 5 ? sf::kF32 : sf::kF64; }
const Fmt& fmt_of(int bloq) { return bloq == 4 ? kH : bloq == 5 ? kS : bloq == 6 ? kD : kQ; }

using BinFn = int (*)(const maroon_lagoon_ray*, const maroon_lagoon_ray*, int, maroon_lagoon_result*,
                      maroon_lagoon_error*);

ORay call2(BinFn fn, const ORay& a, const ORay& b, Round r) {
  maroon_lagoon_result res{};
  maroon_lagoon_error err{};
  auto ca = a.c(), cb = b.c();
  int rc = fn(&ca, &cb, rnd_char(r), &res, &err);
  EXPECT_EQ(rc, 0) << err.message;
  return rc == 0 ? take(res) : ORay{};
}

uint64_t sf_sub(sf::Format f, uint64_t a, uint64_t b, Round r) { return sf::add(f, a, b ^ f.sign_bit(), r); }

}  // namespace

// Every elementwise arithmetic arm, binary16/32/64, every mode, against sf::.
TEST(LagoonArith, ElementwiseMatchesSoftFloat) {
  struct Op {
    const char* name;
    BinFn fn;
    std::function<uint64_t(sf::Format, uint64_t, uint64_t, Round)> ref;
  };
  const Op ops[] = {{"add", maroon_lagoon_add, sf::add},
                    {"sub", maroon_lagoon_sub, sf_sub},
                    {"mul", maroon_lagoon_mul, sf::mul},
                    {"div", maroon_lagoon_div, sf::div}};
  Gen g(1);
  const size_t n = 3000;
  // bloq 4 twice: the F16C path (where the CPU has it) and the portable one.
  for (int pass : {4, 5, 6, 40}) {
    const int bloq = pass == 40 ? 4 : pass;
    maroon::lagoon::set_f16_simd_enabled(pass == 4);
    const Fmt& f = fmt_of(bloq);
    for (Round r : kModes)
      for (const Op& op : ops) {
        std::vector<u128> xa(n), xb(n);
        for (size_t i = 0; i < n; ++i) xa[i] = g.bits(f), xb[i] = g.bits(f);
        ORay a = make({n}, bloq, MAROON_LAGOON_I754, xa), b = make({n}, bloq, MAROON_LAGOON_I754, xb);
        ORay out = call2(op.fn, a, b, r);
        ASSERT_EQ(out.numel(), n);
        int bad = 0;
        for (size_t i = 0; i < n && bad < 5; ++i) {
          uint64_t want = op.ref(sf_fmt(bloq), uint64_t(xa[i]), uint64_t(xb[i]), r);
          if (uint64_t(out.at(i)) != want) {
            ++bad;
            ADD_FAILURE() << op.name << " bloq " << bloq << " mode " << char(rnd_char(r)) << ": "
                          << hex(le_bytes(xa[i], 8)) << ", " << hex(le_bytes(xb[i], 8)) << " -> "
                          << hex(le_bytes(out.at(i), 8)) << ", sf " << hex(le_bytes(want, 8));
          }
        }
      }
  }
  maroon::lagoon::set_f16_simd_enabled(true);
}

// ---- binary128 against MPFR ----
namespace {

void to_mpfr(mpfr_t y, u128 x) {
  const Fmt& f = kQ;
  bool neg = ((x >> 127) & 1) != 0;
  int64_t e = int64_t((x >> f.mbits) & f.expmask());
  u128 m = x & f.manmask();
  if (e == int64_t(f.expmask())) {
    if (m) mpfr_set_nan(y);
    else mpfr_set_inf(y, neg ? -1 : 1);
    return;
  }
  if (e == 0 && m == 0) {
    mpfr_set_zero(y, neg ? -1 : 1);
    return;
  }
  if (e != 0) m |= u128{1} << f.mbits;
  int64_t exp = (e == 0 ? 1 : e) - 16383 - 112;
  mpfr_set_ui(y, uint64_t(m >> 64), MPFR_RNDN);  // exact: y has >= 113 bits
  mpfr_mul_2ui(y, y, 64, MPFR_RNDN);
  mpfr_add_ui(y, y, uint64_t(m), MPFR_RNDN);
  mpfr_mul_2si(y, y, exp, MPFR_RNDN);
  if (neg) mpfr_neg(y, y, MPFR_RNDN);
}

u128 from_mpfr(mpfr_t y) {
  const Fmt& f = kQ;
  if (mpfr_nan_p(y)) return f.nan();
  u128 sign = mpfr_signbit(y) ? f.sign() : 0;
  if (mpfr_inf_p(y)) return sign | (f.expmask() << f.mbits);
  if (mpfr_zero_p(y)) return sign;
  mpfr_t t;
  mpfr_init2(t, 113);
  mpfr_abs(t, y, MPFR_RNDN);
  long e = mpfr_get_exp(t);  // t = 0.1xxx * 2^e
  int64_t biased = e - 1 + 16383;
  int64_t shift = biased >= 1 ? int64_t(e) - 113 : 1 - 16383 - 112;  // exponent of the lsb
  mpfr_mul_2si(t, t, -shift, MPFR_RNDN);                             // exact: now an integer
  mpfr_t hi;
  mpfr_init2(hi, 113);
  mpfr_div_2ui(hi, t, 64, MPFR_RNDN);
  mpfr_rint_floor(hi, hi, MPFR_RNDN);
  uint64_t h = mpfr_get_ui(hi, MPFR_RNDN);
  mpfr_mul_2ui(hi, hi, 64, MPFR_RNDN);
  mpfr_sub(t, t, hi, MPFR_RNDN);
  uint64_t l = mpfr_get_ui(t, MPFR_RNDN);
  u128 m = (u128(h) << 64) | l;
  mpfr_clear(t);
  mpfr_clear(hi);
  if (biased >= 1) return sign | (u128(biased) << f.mbits) | (m & f.manmask());
  return sign | m;  // subnormal
}

u128 mpfr_op(const char* op, u128 a, u128 b, Round r) {
  const mpfr_exp_t old_min = mpfr_get_emin(), old_max = mpfr_get_emax();
  mpfr_t x, y, z;
  mpfr_inits2(113, x, y, nullptr);
  to_mpfr(x, a);
  to_mpfr(y, b);
  mpfr_set_emin(-16494 + 1);  // binary128's subnormal lsb 2^-16494, in MPFR's convention
  mpfr_set_emax(16384);
  mpfr_init2(z, 113);
  mpfr_rnd_t m = r == Round::NearestEven ? MPFR_RNDN : r == Round::TowardZero ? MPFR_RNDZ
                 : r == Round::Up        ? MPFR_RNDU : MPFR_RNDD;
  int inex = op[0] == 'a' ? mpfr_add(z, x, y, m) : op[0] == 's' ? mpfr_sub(z, x, y, m)
           : op[0] == 'm' ? mpfr_mul(z, x, y, m) : mpfr_div(z, x, y, m);
  inex = mpfr_check_range(z, inex, m);
  mpfr_subnormalize(z, inex, m);
  mpfr_set_emin(old_min);
  mpfr_set_emax(old_max);
  u128 out = from_mpfr(z);
  mpfr_clears(x, y, z, nullptr);
  return out;
}

}  // namespace

TEST(LagoonArith, Binary128MatchesMpfr) {
  struct Op {
    const char* name;
    BinFn fn;
  };
  const Op ops[] = {{"add", maroon_lagoon_add}, {"sub", maroon_lagoon_sub},
                    {"mul", maroon_lagoon_mul}, {"div", maroon_lagoon_div}};
  Gen g(2);
  const size_t n = 1500;
  for (Round r : kModes)
    for (const Op& op : ops) {
      std::vector<u128> xa(n), xb(n);
      for (size_t i = 0; i < n; ++i) xa[i] = g.bits(kQ), xb[i] = g.bits(kQ);
      ORay out = call2(op.fn, make({n}, 7, MAROON_LAGOON_I754, xa), make({n}, 7, MAROON_LAGOON_I754, xb), r);
      ASSERT_EQ(out.numel(), n);
      int bad = 0;
      for (size_t i = 0; i < n && bad < 5; ++i) {
        u128 want = mpfr_op(op.name, xa[i], xb[i], r);
        if (out.at(i) != want) {
          ++bad;
          ADD_FAILURE() << op.name << " binary128 mode " << char(rnd_char(r)) << ": " << hex(le_bytes(xa[i], 16))
                        << ", " << hex(le_bytes(xb[i], 16)) << " -> " << hex(le_bytes(out.at(i), 16))
                        << ", MPFR " << hex(le_bytes(want, 16));
        }
      }
    }
}

// mmul: per output, acc = +0 then acc = add(acc, mul(a_ik, b_kj)) for k ascending (Lagoon's
// mmul, SoftBLAS sgemm); cumsum and dot: right folds from +0 (Lagoon's reel).
TEST(LagoonArith, FoldOrdersMatchSoftFloatLoops) {
  Gen g(3);
  for (int pass : {4, 5, 6, 40}) {
    const int bloq = pass == 40 ? 4 : pass;
    maroon::lagoon::set_f16_simd_enabled(pass == 4);
    const sf::Format sfF = sf_fmt(bloq);
    const Fmt& f = fmt_of(bloq);
    for (Round r : kModes) {
      const uint64_t M = 5, K = 37, P = 19;
      std::vector<u128> xa(M * K), xb(K * P);
      // Mostly moderate values so that sums really round (and cancel); a few specials.
      for (auto& v : xa) v = g.u64() % 9 == 0 ? g.bits(f) : (g.bits(f) & ~(f.expmask() << f.mbits)) | ((f.expmask() / 2 - 2 + g.u64() % 5) << f.mbits);
      for (auto& v : xb) v = g.u64() % 9 == 0 ? g.bits(f) : (g.bits(f) & ~(f.expmask() << f.mbits)) | ((f.expmask() / 2 - 2 + g.u64() % 5) << f.mbits);
      ORay a = make({M, K}, bloq, MAROON_LAGOON_I754, xa), b = make({K, P}, bloq, MAROON_LAGOON_I754, xb);
      ORay c = call2(maroon_lagoon_mmul, a, b, r);
      ASSERT_EQ(c.shape, (std::vector<uint64_t>{M, P}));
      for (uint64_t i = 0; i < M; ++i)
        for (uint64_t j = 0; j < P; ++j) {
          uint64_t acc = 0;
          for (uint64_t k = 0; k < K; ++k)
            acc = sf::add(sfF, acc, sf::mul(sfF, uint64_t(xa[i * K + k]), uint64_t(xb[k * P + j]), r), r);
          ASSERT_EQ(uint64_t(c.at(i * P + j)), acc) << "mmul bloq " << bloq << " mode " << char(rnd_char(r))
                                                    << " at " << i << "," << j;
        }
      // cumsum of a's ravel, and dot of a row with itself.
      maroon_lagoon_result res{};
      maroon_lagoon_error err{};
      auto ca = a.c();
      ASSERT_EQ(maroon_lagoon_cumsum(&ca, rnd_char(r), &res, &err), 0) << err.message;
      ORay s = take(res);
      uint64_t acc = 0;
      for (size_t i = xa.size(); i-- > 0;) acc = sf::add(sfF, uint64_t(xa[i]), acc, r);
      EXPECT_EQ(uint64_t(s.at(0)), acc) << "cumsum bloq " << bloq;
      EXPECT_EQ(s.shape, (std::vector<uint64_t>{1, 1}));
      ORay d = call2(maroon_lagoon_dot, a, a, r);
      acc = 0;
      for (size_t i = xa.size(); i-- > 0;) acc = sf::add(sfF, sf::mul(sfF, uint64_t(xa[i]), uint64_t(xa[i]), r), acc, r);
      EXPECT_EQ(uint64_t(d.at(0)), acc) << "dot bloq " << bloq;
    }
  }
  maroon::lagoon::set_f16_simd_enabled(true);
}

// %mod (numerics #78): a - b*san(toi_rnd(a/b)), each step rounded in the mode; a non-finite
// quotient is an error. The reference rounds q to an integer with sf: (q + 2^p) - 2^p in the
// mode, for |q| < 2^p (larger q are integers already).
TEST(LagoonArith, ModMatchesItsDefinition) {
  Gen g(4);
  for (int bloq : {4, 5, 6}) {
    const sf::Format F = sf_fmt(bloq);
    const Fmt& f = fmt_of(bloq);
    for (Round r : kModes) {
      const size_t n = 2000;
      std::vector<u128> xa, xb;
      std::vector<uint64_t> want;
      while (xa.size() < n) {
        uint64_t a = uint64_t(g.bits(f)), b = uint64_t(g.bits(f));
        uint64_t q = sf::div(F, a, b, r);
        sf::Unpacked uq = sf::unpack(F, q);
        if (uq.cls == sf::Class::NaN || uq.cls == sf::Class::Inf) continue;  // errors, tested below
        uint64_t big = sf::from_uint(F, uint64_t{1} << F.mbits, Round::NearestEven);  // 2^p-1, exact
        uint64_t n_int;
        bool neg = (q >> (F.bits - 1)) & 1;
        uint64_t absq = q & ~F.sign_bit();
        if (sf::lt(F, absq, big)) {
          n_int = neg ? sf::add(F, sf::add(F, q, big ^ F.sign_bit(), r), big, r)
                      : sf::add(F, sf::add(F, q, big, r), big ^ F.sign_bit(), r);
        } else {
          n_int = q;
        }
        if ((n_int & ~F.sign_bit()) == 0) n_int = 0;  // ++san of 0 is +0
        uint64_t res = sf_sub(F, a, sf::mul(F, b, n_int, r), r);
        xa.push_back(a), xb.push_back(b), want.push_back(res);
      }
      ORay out = call2(maroon_lagoon_mod, make({n}, bloq, MAROON_LAGOON_I754, xa),
                       make({n}, bloq, MAROON_LAGOON_I754, xb), r);
      ASSERT_EQ(out.numel(), n);
      for (size_t i = 0; i < n; ++i)
        ASSERT_EQ(uint64_t(out.at(i)), want[i]) << "mod bloq " << bloq << " mode " << char(rnd_char(r)) << " "
                                                << hex(le_bytes(xa[i], 8)) << " mod " << hex(le_bytes(xb[i], 8));
    }
  }
  // A zero divisor makes the quotient infinite: Lagoon crashes, Maroon reports EDOMAIN.
  ORay one = make({1}, 5, MAROON_LAGOON_I754, {0x3f800000}), zero = make({1}, 5, MAROON_LAGOON_I754, {0});
  maroon_lagoon_result res{};
  maroon_lagoon_error err{};
  auto ca = one.c(), cb = zero.c();
  EXPECT_EQ(maroon_lagoon_mod(&ca, &cb, 'z', &res, &err), MAROON_LAGOON_EDOMAIN);
  EXPECT_NE(std::string(err.message).find("mod"), std::string::npos);
}

// Overflow in directed modes saturates (IEEE 754, SoftFloat, sdfloat), not Hoon ++fl's inf:
// docs/lagoon.md. max*2 must equal sf's result in every mode, and 1.0/+0.0 comparisons ignore it.
TEST(LagoonArith, DirectedOverflowSaturatesAsIeee) {
  for (int bloq : {4, 5, 6}) {
    const sf::Format F = sf_fmt(bloq);
    for (Round r : kModes)
      for (bool neg : {false, true}) {
        uint64_t mx = sf::max_finite(F, neg), two = sf::from_int(F, 2, Round::NearestEven);
        ORay out = call2(maroon_lagoon_mul, make({1}, bloq, MAROON_LAGOON_I754, {mx}),
                         make({1}, bloq, MAROON_LAGOON_I754, {two}), r);
        EXPECT_EQ(uint64_t(out.at(0)), sf::mul(F, mx, two, r));
        bool saturates = r == Round::TowardZero || (r == Round::Up && neg) || (r == Round::Down && !neg);
        EXPECT_EQ(uint64_t(out.at(0)), saturates ? mx : sf::infinity(F, neg));
      }
  }
}

// linspace: d = (b-a)/sun(n-1), x_i = a + sun(i)*d, the last element b exactly.
TEST(LagoonArith, LinspaceMatchesItsDefinition) {
  Gen g(5);
  for (int bloq : {4, 5, 6}) {
    const sf::Format F = sf_fmt(bloq);
    for (Round r : kModes)
      for (int t = 0; t < 20; ++t) {
        uint64_t a = sf::from_int(F, int64_t(g.u64() % 200) - 100, Round::NearestEven);
        uint64_t b = sf::from_int(F, int64_t(g.u64() % 200) - 100, Round::NearestEven);
        uint64_t n = 2 + g.u64() % 30;
        std::vector<uint64_t> shape{1};
        maroon_lagoon_meta m{shape.data(), 1, uint32_t(bloq), MAROON_LAGOON_I754};
        auto ab = le_bytes(a, F.bits / 8), bb = le_bytes(b, F.bits / 8);
        maroon_lagoon_result res{};
        maroon_lagoon_error err{};
        ASSERT_EQ(maroon_lagoon_linspace(&m, atom(ab), atom(bb), n, rnd_char(r), &res, &err), 0) << err.message;
        ORay out = take(res);
        ASSERT_EQ(out.shape, std::vector<uint64_t>{n});
        uint64_t d = sf::div(F, sf_sub(F, b, a, r), sf::from_uint(F, n - 1, r), r);
        for (uint64_t i = 0; i + 1 < n; ++i)
          ASSERT_EQ(uint64_t(out.at(i)), sf::add(F, a, sf::mul(F, sf::from_uint(F, i, r), d, r), r));
        EXPECT_EQ(uint64_t(out.at(n - 1)), b);
      }
  }
}

// Results do not depend on the caller's floating-point state, and the state is restored.
TEST(LagoonArith, CallerFpStateIsIgnoredAndRestored) {
  ORay a = make({2}, 5, MAROON_LAGOON_I754, {0x3f800000, 0x3f800000});  // 1, 1
  ORay b = make({2}, 5, MAROON_LAGOON_I754, {0x40400000, 0x40400000});  // 3, 3
  ORay base = call2(maroon_lagoon_div, a, b, Round::NearestEven);
  for (int mode : {FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO}) {
    std::fesetround(mode);
    ORay got = call2(maroon_lagoon_div, a, b, Round::NearestEven);
    EXPECT_EQ(std::fegetround(), mode);
    std::fesetround(FE_TONEAREST);
    EXPECT_EQ(got, base);
  }
  EXPECT_EQ(uint64_t(base.at(0)), sf::div(sf::kF32, 0x3f800000, 0x40400000, Round::NearestEven));
}

// Canonical NaNs (Lagoon's 0x7e00, 0x7fc00000, 0x7ff8..., 0x7fff8...) from every width, even
// when an input NaN has a payload or a sign (x86 would give 0xffc00000 for inf-inf).
TEST(LagoonArith, NaNsAreCanonical) {
  for (int bloq : {4, 5, 6, 7}) {
    const Fmt& f = fmt_of(bloq);
    u128 inf = f.expmask() << f.mbits, payload_nan = f.sign() | inf | 5;
    ORay a = make({3}, bloq, MAROON_LAGOON_I754, {inf, payload_nan, 0});
    ORay b = make({3}, bloq, MAROON_LAGOON_I754, {inf, 0, 0});
    ORay s = call2(maroon_lagoon_sub, a, b, Round::NearestEven);  // inf-inf, NaN-0, 0-0
    EXPECT_EQ(s.at(0), f.nan());
    EXPECT_EQ(s.at(1), f.nan());
    EXPECT_EQ(s.at(2), u128{0});
    ORay d = call2(maroon_lagoon_div, b, b, Round::Down);  // 0/0
    EXPECT_EQ(d.at(2), f.nan());
  }
}

// binary128 %mod against the same definition evaluated with MPFR: q = a/b, n = rint(q) in the
// mode (a zero becomes +0), then a - b*n, every step rounded in the mode.
TEST(LagoonArith, Binary128ModMatchesMpfr) {
  Gen g(6);
  for (Round r : kModes) {
    const size_t n = 400;
    std::vector<u128> xa, xb, want;
    while (xa.size() < n) {
      u128 a = g.bits(kQ), b = g.bits(kQ);
      u128 q = mpfr_op("div", a, b, r);
      if (((q >> kQ.mbits) & kQ.expmask()) == kQ.expmask()) continue;  // not finite: an error
      mpfr_t x;
      mpfr_init2(x, 113);
      to_mpfr(x, q);
      mpfr_rint(x, x, r == Round::NearestEven ? MPFR_RNDN : r == Round::TowardZero ? MPFR_RNDZ
                      : r == Round::Up        ? MPFR_RNDU : MPFR_RNDD);
      u128 nq = mpfr_zero_p(x) ? u128{0} : from_mpfr(x);
      mpfr_clear(x);
      xa.push_back(a), xb.push_back(b);
      want.push_back(mpfr_op("sub", a, mpfr_op("mul", b, nq, r), r));
    }
    ORay out = call2(maroon_lagoon_mod, make({n}, 7, MAROON_LAGOON_I754, xa), make({n}, 7, MAROON_LAGOON_I754, xb), r);
    ASSERT_EQ(out.numel(), n);
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(out.at(i), want[i]) << "binary128 mod mode " << char(rnd_char(r)) << " " << hex(le_bytes(xa[i], 16))
                                    << " mod " << hex(le_bytes(xb[i], 16));
  }
}
