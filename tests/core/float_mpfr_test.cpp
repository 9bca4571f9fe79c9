// The float primitives that IEEE 754 defines exactly (ADD, MUL, MULACC, RECIPROCAL, SQRT, TRUNC,
// CAST) on random operands, in every float dtype and rounding mode, against MPFR computing the
// correctly rounded result with the format's precision, exponent range and subnormals. MAX and
// the comparisons are checked against the host's IEEE comparisons.
#include <gtest/gtest.h>

#include "util.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

constexpr int kN = 4000;

// Random operands; for sums, a third of the second operands sit near the negation of the first,
// so cancellation (and exact zero results) get exercised.
std::vector<uint64_t> operands(Gen& g, DType d, const std::vector<uint64_t>* near = nullptr) {
  sf::Format f = fmt(d);
  std::vector<uint64_t> v(kN);
  for (int i = 0; i < kN; ++i) {
    v[i] = g.bits(d);
    if (near && g.next() % 3 == 0) {
      uint64_t delta = g.next() % 4;
      v[i] = ((*near)[i] ^ f.sign_bit()) + ((g.next() & 1) ? delta : -delta);
      v[i] &= width_mask(f.bits);
    }
  }
  return v;
}

struct Mp {
  mpfr_t v;
  explicit Mp(double d) { mpfr_init2(v, 64); mpfr_set_d(v, d, MPFR_RNDN); }
  ~Mp() { mpfr_clear(v); }
};

void expect_all(const char* what, DType d, Round r, const std::vector<uint64_t>& got,
                const std::function<uint64_t(int)>& want, const std::function<std::string(int)>& args) {
  int bad = 0;
  for (int i = 0; i < static_cast<int>(got.size()) && bad < 5; ++i) {
    uint64_t w = want(i);
    if (got[i] != w) {
      ++bad;
      ADD_FAILURE() << what << " " << dtype_name(d) << " rounding " << round_name(r) << " "
                    << args(i) << ": got " << hex(got[i]) << ", want " << hex(w);
    }
  }
}

TEST(FloatVsMpfr, AddMulMulaccReciprocalSqrt) {
  Gen g(1);
  for (DType d : kFloatDTypes) {
    sf::Format f = fmt(d);
    for (Round r : kAllRounds) {
      auto a = operands(g, d), b = operands(g, d, &a), c = operands(g, d);
      Tensor ta = tensor_of_bits(a, {kN}, d), tb = tensor_of_bits(b, {kN}, d), tc = tensor_of_bits(c, {kN}, d);
      // c near -(a*b) for the fused op: take the rounded product and negate it.
      std::vector<uint64_t> prod = prim::mul(ta, tb).bits();
      for (int i = 0; i < kN; i += 2) c[i] = prod[i] ^ f.sign_bit();
      tc = tensor_of_bits(c, {kN}, d);
      RoundingScope scope(r);
      auto args2 = [&](int i) { return "(" + hex(a[i]) + ", " + hex(b[i]) + ")"; };
      auto dec = [&](uint64_t x) { return decode(f, x); };

      expect_all("ADD", d, r, prim::add(ta, tb).bits(), [&](int i) {
        Mp x(dec(a[i])), y(dec(b[i]));
        return mpfr_rounded(f, r, [&](mpfr_t o, mpfr_rnd_t m) { return mpfr_add(o, x.v, y.v, m); });
      }, args2);
      expect_all("MUL", d, r, prim::mul(ta, tb).bits(), [&](int i) {
        Mp x(dec(a[i])), y(dec(b[i]));
        return mpfr_rounded(f, r, [&](mpfr_t o, mpfr_rnd_t m) { return mpfr_mul(o, x.v, y.v, m); });
      }, args2);
      expect_all("MULACC", d, r, prim::mulacc(ta, tb, tc).bits(), [&](int i) {
        Mp x(dec(a[i])), y(dec(b[i])), z(dec(c[i]));
        return mpfr_rounded(f, r, [&](mpfr_t o, mpfr_rnd_t m) { return mpfr_fma(o, x.v, y.v, z.v, m); });
      }, [&](int i) { return "(" + hex(a[i]) + ", " + hex(b[i]) + ", " + hex(c[i]) + ")"; });
      expect_all("RECIPROCAL", d, r, ta.reciprocal().bits(), [&](int i) {
        Mp x(dec(a[i]));
        return mpfr_rounded(f, r, [&](mpfr_t o, mpfr_rnd_t m) { return mpfr_ui_div(o, 1, x.v, m); });
      }, [&](int i) { return hex(a[i]); });
      // sqrt on |a| too, so most inputs are in the domain
      std::vector<uint64_t> pos(a);
      for (int i = 0; i < kN; i += 2) pos[i] &= ~f.sign_bit();
      expect_all("SQRT", d, r, tensor_of_bits(pos, {kN}, d).sqrt().bits(), [&](int i) {
        Mp x(dec(pos[i]));
        return mpfr_rounded(f, r, [&](mpfr_t o, mpfr_rnd_t m) { return mpfr_sqrt(o, x.v, m); });
      }, [&](int i) { return hex(pos[i]); });
      expect_all("TRUNC", d, r, ta.trunc().bits(), [&](int i) {
        Mp x(dec(a[i]));
        return mpfr_rounded(f, r, [&](mpfr_t o, mpfr_rnd_t) { return mpfr_trunc(o, x.v); });
      }, [&](int i) { return hex(a[i]); });
    }
  }
}

TEST(FloatVsMpfr, FloatToFloatCasts) {
  Gen g(2);
  for (DType from : kFloatDTypes) {
    for (DType to : kFloatDTypes) {
      for (Round r : kAllRounds) {
        auto a = operands(g, from);
        Tensor y = [&] {
          RoundingScope scope(r);
          return tensor_of_bits(a, {kN}, from).cast(to);
        }();
        // A CAST to the same dtype is the identity (no node is built), so NaN bits pass through.
        expect_all("CAST", from, r, y.bits(), [&](int i) {
          if (from == to) return a[i];
          Mp x(decode(fmt(from), a[i]));
          return mpfr_rounded(fmt(to), r, [&](mpfr_t o, mpfr_rnd_t m) { return mpfr_set(o, x.v, m); });
        }, [&](int i) { return hex(a[i]) + " to " + std::string(dtype_name(to)); });
      }
    }
  }
}

TEST(FloatVsMpfr, IntToFloatCasts) {
  Gen g(3);
  for (DType from : kIntDTypes) {
    for (DType to : kFloatDTypes) {
      for (Round r : kAllRounds) {
        std::vector<uint64_t> a(kN);
        for (auto& v : a) v = g.bits(from);
        Tensor y = [&] {
          RoundingScope scope(r);
          return tensor_of_bits(a, {kN}, from).cast(to);
        }();
        const int w = bitwidth(from);
        expect_all("CAST", from, r, y.bits(), [&](int i) {
          return mpfr_rounded(fmt(to), r, [&](mpfr_t o, mpfr_rnd_t m) {
            if (is_unsigned(from)) return mpfr_set_uj(o, a[i], m);
            int64_t v = static_cast<int64_t>(a[i] << (64 - w)) >> (64 - w);
            return mpfr_set_sj(o, v, m);
          });
        }, [&](int i) { return hex(a[i]) + " to " + std::string(dtype_name(to)); });
      }
    }
  }
}

// Float to integer: truncate toward zero, saturate, NaN -> 0 (docs/spec.md).
TEST(FloatVsMpfr, FloatToIntCastsSaturate) {
  Gen g(4);
  for (DType from : kFloatDTypes) {
    for (DType to : kIntDTypes) {
      std::vector<uint64_t> a = operands(g, from);
      for (int i = 0; i < kN; i += 3) {  // plenty of in-range values too
        double v = static_cast<double>(static_cast<int64_t>(g.next() % 120) - 60) / 4;  // fits bfloat16
        a[i] = encode(fmt(from), v);
      }
      std::vector<uint64_t> got = tensor_of_bits(a, {kN}, from).cast(to).bits();
      const int w = bitwidth(to);
      const double lo = is_unsigned(to) ? 0 : -std::ldexp(1, w - 1);
      const double hi_excl = is_unsigned(to) ? std::ldexp(1, w) : std::ldexp(1, w - 1);
      expect_all("CAST", from, Round::NearestEven, got, [&](int i) -> uint64_t {
        double x = decode(fmt(from), a[i]);
        if (std::isnan(x)) return 0;
        double t = std::trunc(x);
        if (t < lo) return parse(to, "min");
        if (t >= hi_excl) return parse(to, "max");
        if (is_unsigned(to)) return static_cast<uint64_t>(t);
        return static_cast<uint64_t>(static_cast<int64_t>(t)) & width_mask(w);
      }, [&](int i) { return hex(a[i]) + " to " + std::string(dtype_name(to)); });
    }
  }
}

TEST(FloatVsHost, MaxAndComparisons) {
  Gen g(5);
  for (DType d : kFloatDTypes) {
    sf::Format f = fmt(d);
    auto a = operands(g, d), b = operands(g, d);
    for (int i = 0; i < kN; i += 5) b[i] = a[i];                  // equal values
    for (int i = 1; i < kN; i += 7) b[i] = a[i] ^ f.sign_bit();   // +-0 pairs among them
    Tensor ta = tensor_of_bits(a, {kN}, d), tb = tensor_of_bits(b, {kN}, d);
    auto args = [&](int i) { return "(" + hex(a[i]) + ", " + hex(b[i]) + ")"; };
    auto x = [&](int i) { return decode(f, a[i]); };
    auto y = [&](int i) { return decode(f, b[i]); };
    expect_all("CMPLT", d, Round::NearestEven, prim::cmplt(ta, tb).bits(), [&](int i) -> uint64_t { return x(i) < y(i); }, args);
    expect_all("CMPNE", d, Round::NearestEven, prim::cmpne(ta, tb).bits(), [&](int i) -> uint64_t { return x(i) != y(i); }, args);
    expect_all("CMPEQ", d, Round::NearestEven, prim::cmpeq(ta, tb).bits(), [&](int i) -> uint64_t { return x(i) == y(i); }, args);
    expect_all("MAX", d, Round::NearestEven, prim::maximum(ta, tb).bits(), [&](int i) -> uint64_t {
      if (std::isnan(x(i)) || std::isnan(y(i))) return sf::canonical_nan(f);
      if (x(i) == y(i)) return std::signbit(x(i)) ? b[i] : a[i];  // +0 beats -0
      return x(i) < y(i) ? b[i] : a[i];
    }, args);
  }
}

}  // namespace
}  // namespace maroon::test
