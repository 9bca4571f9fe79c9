// Rounding modes. Every op that rounds carries one; the default is nearest-even.
#pragma once
#include <cstdint>
#include <string_view>

namespace maroon {

// The four IEEE 754 rounding-direction attributes Maroon supports (Lagoon's %n %z %u %d).
enum class Round : uint8_t { NearestEven = 0, TowardZero = 1, Up = 2, Down = 3 };

constexpr Round kAllRounds[] = {Round::NearestEven, Round::TowardZero, Round::Up, Round::Down};

constexpr std::string_view round_name(Round r) {
  switch (r) {
    case Round::NearestEven: return "nearest-even";
    case Round::TowardZero: return "toward-zero";
    case Round::Up: return "up";
    case Round::Down: return "down";
  }
  return "?";
}

// The rounding mode that ops built on this thread record (nodes keep the mode they were built
// with, so realizing later, elsewhere, never changes bits).
Round current_round();
void set_current_round(Round r);

// RAII: ops built inside the scope round in `r`.
class RoundingScope {
 public:
  explicit RoundingScope(Round r) : saved_(current_round()) { set_current_round(r); }
  ~RoundingScope() { set_current_round(saved_); }
  RoundingScope(const RoundingScope&) = delete;
  RoundingScope& operator=(const RoundingScope&) = delete;

 private:
  Round saved_;
};

}  // namespace maroon
