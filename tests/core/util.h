// Helpers shared by the engine's tests: value tokens, exact float encode/decode written
// independently of src/ref (with the host's libm, which tests may use), and MPFR rounding.
#pragma once
#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/graph.h"
#include "maroon/maroon.h"
#include "float/softfloat.h"

namespace maroon::test {

inline bool is_float_dtype(DType d) { return is_float(d) && !is_weak(d); }
inline uint64_t width_mask(int w) { return w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1; }

inline sf::Format fmt(DType d) { return sf::format_of(d); }

// Exact decode of a float's bits to double (every format Maroon has fits in a double).
inline double decode(sf::Format f, uint64_t bits) {
  bool neg = (bits >> (f.bits - 1)) & 1;
  uint64_t e = (bits >> f.mbits) & f.exp_mask(), m = bits & f.man_mask();
  double v;
  if (e == f.exp_mask()) v = m ? NAN : INFINITY;
  else if (e == 0) v = std::ldexp(static_cast<double>(m), f.emin_q());
  else v = std::ldexp(static_cast<double>(m | (uint64_t{1} << f.mbits)), int(e) - f.bias() - f.mbits);
  return neg ? -v : v;
}

// Exact encode of a double that is representable in f (checked: throws if not).
inline uint64_t encode(sf::Format f, double d) {
  uint64_t sign = std::signbit(d) ? f.sign_bit() : 0;
  if (std::isnan(d)) return sf::canonical_nan(f);
  if (std::isinf(d)) return sign | (f.exp_mask() << f.mbits);
  if (d == 0) return sign;
  int ex;
  std::frexp(d, &ex);  // |d| = fr * 2^ex, 0.5 <= fr < 1
  int q = std::max(ex - 1 - f.mbits, f.emin_q());
  double m = std::ldexp(std::fabs(d), -q);
  if (m != std::floor(m) || q > f.emax_q()) throw std::runtime_error("encode: not representable");
  uint64_t mi = static_cast<uint64_t>(m);
  if (mi >> f.mbits) return sign | (uint64_t(q - f.emin_q() + 1) << f.mbits) | (mi & f.man_mask());
  return sign | mi;
}

// Parses a value token for dtype d into bits. Tokens: decimal numbers (exact in d), "nan",
// "inf", "-inf", "-0", "max", "-max", "min" (integers: the minimum; floats: -max), "tiny" and
// "-tiny" (smallest subnormal), "minnorm", "true", "false", "0x..." (raw bits).
inline uint64_t parse(DType d, const std::string& t) {
  if (t.rfind("0x", 0) == 0) return std::stoull(t, nullptr, 16);
  if (d == DType::Bool) return (t == "true" || t == "1") ? 1 : 0;
  if (is_float_dtype(d)) {
    sf::Format f = fmt(d);
    bool neg = t[0] == '-';
    std::string u = neg ? t.substr(1) : t;
    uint64_t s = neg ? f.sign_bit() : 0;
    if (u == "nan") return sf::canonical_nan(f);
    if (u == "inf") return s | (f.exp_mask() << f.mbits);
    if (u == "max") return sf::max_finite(f, neg);
    if (u == "min") return sf::max_finite(f, true);
    if (u == "tiny") return s | 1;
    if (u == "minnorm") return s | (uint64_t{1} << f.mbits);
    return encode(f, std::stod(t));
  }
  const int w = bitwidth(d);
  const bool sgn = !is_unsigned(d);
  if (t == "max") return sgn ? width_mask(w) >> 1 : width_mask(w);
  if (t == "min") return sgn ? uint64_t{1} << (w - 1) : 0;
  if (t[0] == '-') return static_cast<uint64_t>(std::stoll(t)) & width_mask(w);
  return std::stoull(t) & width_mask(w);
}

inline std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

inline Tensor tensor_of_bits(const std::vector<uint64_t>& bits, const Shape& shape, DType d) {
  std::vector<uint8_t> bytes(bits.size() * itemsize(d));
  for (size_t i = 0; i < bits.size(); ++i) std::memcpy(bytes.data() + i * itemsize(d), &bits[i], itemsize(d));
  return Tensor::from_bytes(bytes.data(), bytes.size(), shape, d);
}

inline std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

inline mpfr_rnd_t mpfr_mode(Round r) {
  switch (r) {
    case Round::NearestEven: return MPFR_RNDN;
    case Round::TowardZero: return MPFR_RNDZ;
    case Round::Up: return MPFR_RNDU;
    case Round::Down: return MPFR_RNDD;
  }
  return MPFR_RNDN;
}

// The correctly rounded result in format f and mode r of what `compute` writes into its first
// argument (an mpfr_t of f's precision), with f's exponent range and subnormals.
inline uint64_t mpfr_rounded(sf::Format f, Round r,
                             const std::function<int(mpfr_t, mpfr_rnd_t)>& compute) {
  const mpfr_exp_t old_min = mpfr_get_emin(), old_max = mpfr_get_emax();
  mpfr_set_emin(f.emin_q() + 1);  // MPFR's exponents are one more than IEEE's (0.5 <= m < 1)
  mpfr_set_emax(f.bias() + 1);
  mpfr_t y;
  mpfr_init2(y, f.mbits + 1);
  mpfr_rnd_t rnd = mpfr_mode(r);
  int inex = compute(y, rnd);
  inex = mpfr_check_range(y, inex, rnd);
  mpfr_subnormalize(y, inex, rnd);
  mpfr_set_emin(old_min);
  mpfr_set_emax(old_max);
  uint64_t out;
  if (mpfr_nan_p(y)) out = sf::canonical_nan(f);
  else out = encode(f, mpfr_get_d(y, MPFR_RNDN));  // exact: y is representable in f
  mpfr_clear(y);
  return out;
}

// Random bits for dtype d, biased towards interesting floats (specials, subnormals, and values
// near 1) so that every path of the soft-float code is exercised.
class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}
  uint64_t bits(DType d) {
    const int w = bitwidth(d);
    uint64_t r = rng_();
    if (d == DType::Bool) return r & 1;
    if (!is_float_dtype(d)) {
      switch (r % 8) {  // edges are where integer semantics differ
        case 0: return parse(d, "min");
        case 1: return parse(d, "max");
        case 2: return (rng_() % 5) & width_mask(w);
        case 3: return static_cast<uint64_t>(-static_cast<int64_t>(rng_() % 5)) & width_mask(w);
        case 4: return static_cast<uint64_t>(rng_() % w);
        default: return rng_() & width_mask(w);
      }
    }
    sf::Format f = fmt(d);
    uint64_t sign = (rng_() & 1) ? f.sign_bit() : 0;
    switch (r % 16) {
      case 0: return sign | (rng_() & f.man_mask());                                   // subnormal/zero
      case 1: return sign | (f.exp_mask() << f.mbits) | (rng_() % 3 ? 0 : rng_() & f.man_mask());
      case 2: return sign | (((f.exp_mask() - 1 - rng_() % 3)) << f.mbits) | (rng_() & f.man_mask());
      case 3: case 4: case 5: {  // near 1 (exponent within +-4 of the bias)
        uint64_t e = f.bias() - 4 + rng_() % 9;
        return sign | (e << f.mbits) | (rng_() & f.man_mask());
      }
      default: return rng_() & width_mask(w);
    }
  }
  uint64_t next() { return rng_(); }

 private:
  std::mt19937_64 rng_;
};

inline constexpr DType kFloatDTypes[] = {DType::Float16, DType::BFloat16, DType::Float32,
                                         DType::Float64};
inline constexpr DType kIntDTypes[] = {DType::Int8,  DType::UInt8,  DType::Int16,
                                       DType::UInt16, DType::Int32, DType::UInt32,
                                       DType::Int64, DType::UInt64};

}  // namespace maroon::test
