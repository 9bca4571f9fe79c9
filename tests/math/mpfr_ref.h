// MPFR oracle shared by tests/math and tools/math-check: one MPFR evaluation per input gives the
// correctly rounded result in every rounding mode. MPFR computes the function at 64 bits rounded
// toward zero; its ternary value says whether that was exact. The true value then lies in
// [z, z + ulp64(z)) (magnitude), an interval containing no rounding boundary of any format of at
// most 53 bits except at z itself, so sf::round_pack(z's significand, sticky = inexact) rounds
// exactly as the true value would, in every mode.
#pragma once
#include <gmp.h>
#include <mpfr.h>

#include <cstdint>

#include "maroon/round.h"
#include "float/softfloat.h"

namespace maroon::mathref {

enum class Fn { Exp2, Log2, Sin, Pow };

// The function's value, ready to be rounded in any mode.
struct RefValue {
  enum Kind { Nan, Inf, Zero, Finite } kind;
  bool sign;
  int32_t exp;   // Finite: (-1)^sign (sig + sticky*s) 2^exp, 0 < s < 1
  uint64_t sig;
  bool sticky;
};

inline uint64_t round_ref(sf::Format f, const RefValue& v, Round r) {
  switch (v.kind) {
    case RefValue::Nan: return sf::canonical_nan(f);
    case RefValue::Inf: return sf::infinity(f, v.sign);
    case RefValue::Zero: return v.sign ? f.sign_bit() : 0;
    case RefValue::Finite: break;
  }
  return sf::round_pack(f, v.sign, v.exp, v.sig, v.sticky, r);
}

// Per-thread MPFR workspace.
class Oracle {
 public:
  // prec: MPFR working precision; at least the target's precision + 2 (64 serves every format).
  explicit Oracle(int prec = 64) {
    // The widest exponent range, so that no result underflows or overflows inside MPFR.
    mpfr_set_emin(mpfr_get_emin_min());
    mpfr_set_emax(mpfr_get_emax_max());
    mpfr_init2(x_, 64);
    mpfr_init2(y_, 64);
    mpfr_init2(z_, prec);
    mpz_init(m_);
  }
  ~Oracle() {
    mpfr_clear(x_);
    mpfr_clear(y_);
    mpfr_clear(z_);
    mpz_clear(m_);
  }
  Oracle(const Oracle&) = delete;
  Oracle& operator=(const Oracle&) = delete;

  RefValue eval(Fn fn, sf::Format f, uint64_t x, uint64_t y = 0) {
    set(x_, f, x);
    mpfr_clear_flags();
    int t = 0;
    switch (fn) {
      case Fn::Exp2: t = mpfr_exp2(z_, x_, MPFR_RNDZ); break;
      case Fn::Log2: t = mpfr_log2(z_, x_, MPFR_RNDZ); break;
      case Fn::Sin: t = mpfr_sin(z_, x_, MPFR_RNDZ); break;
      case Fn::Pow:
        set(y_, f, y);
        t = mpfr_pow(z_, x_, y_, MPFR_RNDZ);
        break;
    }
    RefValue v{RefValue::Finite, mpfr_signbit(z_) != 0, 0, 0, t != 0};
    // Beyond even MPFR's exponent range (e.g. exp2(-2^62)): a nonzero value far outside every
    // format, which rounds like any other such value.
    if (mpfr_underflow_p() || mpfr_overflow_p()) {
      v.exp = (mpfr_underflow_p() ? -(1 << 20) : (1 << 20)) - 62;
      v.sig = uint64_t{1} << 62;
      v.sticky = true;
      return v;
    }
    if (mpfr_nan_p(z_)) { v.kind = RefValue::Nan; return v; }
    if (mpfr_inf_p(z_)) { v.kind = RefValue::Inf; return v; }
    if (mpfr_zero_p(z_)) { v.kind = RefValue::Zero; return v; }
    mpfr_exp_t e = mpfr_get_z_2exp(m_, z_);
    mpz_abs(m_, m_);
    v.sig = mpz_get_ui(m_);
    // Far outside every format's range, any exponent rounds alike: clamp it to fit int32.
    if (e > (1 << 20)) e = 1 << 20;
    if (e < -(1 << 20)) e = -(1 << 20);
    v.exp = static_cast<int32_t>(e);
    return v;
  }

 private:
  static void set(mpfr_t m, sf::Format f, uint64_t bits) {
    sf::Unpacked u = sf::unpack(f, bits);
    switch (u.cls) {
      case sf::Class::NaN: mpfr_set_nan(m); return;
      case sf::Class::Inf: mpfr_set_inf(m, u.sign ? -1 : 1); return;
      case sf::Class::Zero: mpfr_set_zero(m, u.sign ? -1 : 1); return;
      case sf::Class::Finite: break;
    }
    mpfr_set_ui_2exp(m, u.sig, u.exp, MPFR_RNDN);  // exact: sig < 2^53
    if (u.sign) mpfr_neg(m, m, MPFR_RNDN);
  }
  mpfr_t x_, y_, z_;
  mpz_t m_;
};

}  // namespace maroon::mathref
