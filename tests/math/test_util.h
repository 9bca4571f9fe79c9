// Shared helpers for the src/math tests.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "math/math.h"
#include "mpfr_ref.h"

namespace maroon::mathtest {

using mathref::Fn;

inline uint64_t call(Fn fn, sf::Format f, uint64_t x, Round r, uint64_t y = 0) {
  switch (fn) {
    case Fn::Exp2: return math::exp2(f, x, r);
    case Fn::Log2: return math::log2(f, x, r);
    case Fn::Sin: return math::sin(f, x, r);
    case Fn::Pow: return math::pow(f, x, y, r);
  }
  return 0;
}

inline const char* fn_name(Fn fn) {
  switch (fn) {
    case Fn::Exp2: return "exp2";
    case Fn::Log2: return "log2";
    case Fn::Sin: return "sin";
    case Fn::Pow: return "pow";
  }
  return "?";
}

// Compares maroon against the correctly rounded MPFR result in all four modes; returns the
// number of mismatches and reports the first few through gtest.
class Comparator {
 public:
  explicit Comparator(sf::Format f) : f_(f) {}
  void check(Fn fn, uint64_t x, uint64_t y = 0) {
    mathref::RefValue v = oracle_.eval(fn, f_, x, y);
    for (Round r : kAllRounds) {
      uint64_t want = mathref::round_ref(f_, v, r);
      uint64_t got = call(fn, f_, x, r, y);
      ++checked_;
      if (got != want) {
        if (++mismatches_ <= 10)
          ADD_FAILURE() << fn_name(fn) << " f" << f_.bits << "/" << f_.mbits << " x=0x" << std::hex << x
                        << " y=0x" << y << " mode=" << round_name(r) << " got=0x" << got << " want=0x"
                        << want;
      }
    }
  }
  uint64_t mismatches() const { return mismatches_; }
  uint64_t checked() const { return checked_; }

 private:
  sf::Format f_;
  mathref::Oracle oracle_;
  uint64_t mismatches_ = 0, checked_ = 0;
};

// splitmix64: a deterministic sample generator.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

inline uint64_t f32(float v) { return sf::bits_of(v); }
inline uint64_t f64(double v) { return sf::bits_of(v); }

}  // namespace maroon::mathtest
