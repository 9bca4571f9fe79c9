// Special values with expected bits for every primitive and dtype, run through the Tensor API
// (graph, scheduler, reference executor). The coverage test at the bottom walks the op table:
// an op/dtype pair the table accepts but that has no case here fails the suite, and every pair
// the table rejects must throw DTypeError.
#include <gtest/gtest.h>

#include <set>

#include "core/alu.h"
#include "util.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

using DTypes = std::vector<DType>;
const DTypes kF(std::begin(kFloatDTypes), std::end(kFloatDTypes));
const DTypes kI(std::begin(kIntDTypes), std::end(kIntDTypes));
const DTypes kS = {DType::Int8, DType::Int16, DType::Int32, DType::Int64};
const DTypes kU = {DType::UInt8, DType::UInt16, DType::UInt32, DType::UInt64};
const DTypes kB = {DType::Bool};
DTypes only(DType d) { return {d}; }

constexpr Round NE = Round::NearestEven, TZ = Round::TowardZero, UP = Round::Up, DN = Round::Down;

struct Case {
  Op op;
  DTypes dtypes;               // the operand dtypes this case runs in
  std::vector<std::string> in; // one token per operand; REDUCE: a space-separated vector
  std::string out;             // parsed in the result dtype
  Round r = NE;
  ReduceOp rop = ReduceOp::ADD;
  DType to = DType::Bool;      // CAST and BITCAST: the target
};

Case R(ReduceOp rop, DTypes d, std::string in, std::string out, Round r = NE) {
  return Case{Op::REDUCE, std::move(d), {std::move(in)}, std::move(out), r, rop};
}
Case C(DTypes from, DType to, std::string in, std::string out, Round r = NE) {
  return Case{Op::CAST, std::move(from), {std::move(in)}, std::move(out), r, ReduceOp::ADD, to};
}
Case BC(DType from, DType to, std::string in, std::string out) {
  return Case{Op::BITCAST, only(from), {std::move(in)}, std::move(out), NE, ReduceOp::ADD, to};
}

const std::vector<Case>& cases() {
  using enum Op;
  static const std::vector<Case> k = {
      // ---- EXP2 ----
      {EXP2, kF, {"0"}, "1"}, {EXP2, kF, {"-0"}, "1"}, {EXP2, kF, {"1"}, "2"},
      {EXP2, kF, {"-1"}, "0.5"}, {EXP2, kF, {"10"}, "1024"}, {EXP2, kF, {"inf"}, "inf"},
      {EXP2, kF, {"-inf"}, "0"}, {EXP2, kF, {"nan"}, "nan"}, {EXP2, kF, {"max"}, "inf"},
      {EXP2, kF, {"max"}, "max", TZ}, {EXP2, kF, {"-max"}, "0"}, {EXP2, kF, {"-max"}, "tiny", UP},
      {EXP2, only(DType::Float32), {"-149"}, "tiny"}, {EXP2, only(DType::Float32), {"128"}, "inf"},
      {EXP2, only(DType::Float32), {"0xffc00001"}, "nan"},
      // ---- LOG2 ----
      {LOG2, kF, {"1"}, "0"}, {LOG2, kF, {"2"}, "1"}, {LOG2, kF, {"0.5"}, "-1"},
      {LOG2, kF, {"0"}, "-inf"}, {LOG2, kF, {"-0"}, "-inf"}, {LOG2, kF, {"-1"}, "nan"},
      {LOG2, kF, {"inf"}, "inf"}, {LOG2, kF, {"-inf"}, "nan"}, {LOG2, kF, {"nan"}, "nan"},
      {LOG2, only(DType::Float32), {"tiny"}, "-149"}, {LOG2, only(DType::Float16), {"tiny"}, "-24"},
      {LOG2, only(DType::BFloat16), {"tiny"}, "-133"}, {LOG2, only(DType::Float64), {"tiny"}, "-1074"},
      // ---- SIN ----
      {SIN, kF, {"0"}, "0"}, {SIN, kF, {"-0"}, "-0"}, {SIN, kF, {"inf"}, "nan"},
      {SIN, kF, {"-inf"}, "nan"}, {SIN, kF, {"nan"}, "nan"},
      // sin(x) is just below x for tiny x: directed modes tell.
      {SIN, kF, {"tiny"}, "tiny"}, {SIN, kF, {"tiny"}, "0", TZ}, {SIN, kF, {"tiny"}, "0", DN},
      {SIN, kF, {"tiny"}, "tiny", UP}, {SIN, kF, {"-tiny"}, "-0", TZ},
      // ---- SQRT ----
      {SQRT, kF, {"4"}, "2"}, {SQRT, kF, {"0.25"}, "0.5"}, {SQRT, kF, {"0"}, "0"},
      {SQRT, kF, {"-0"}, "-0"}, {SQRT, kF, {"-1"}, "nan"}, {SQRT, kF, {"inf"}, "inf"},
      {SQRT, kF, {"-inf"}, "nan"}, {SQRT, kF, {"nan"}, "nan"}, {SQRT, kF, {"-tiny"}, "nan"},
      {SQRT, only(DType::Float32), {"2"}, "0x3fb504f3"}, {SQRT, only(DType::Float32), {"2"}, "0x3fb504f4", UP},
      // ---- RECIPROCAL ----
      {RECIPROCAL, kF, {"2"}, "0.5"}, {RECIPROCAL, kF, {"-4"}, "-0.25"},
      {RECIPROCAL, kF, {"0"}, "inf"}, {RECIPROCAL, kF, {"-0"}, "-inf"},
      {RECIPROCAL, kF, {"inf"}, "0"}, {RECIPROCAL, kF, {"-inf"}, "-0"},
      {RECIPROCAL, kF, {"nan"}, "nan"}, {RECIPROCAL, kF, {"tiny"}, "inf"},
      {RECIPROCAL, kF, {"tiny"}, "max", TZ}, {RECIPROCAL, kF, {"-tiny"}, "-max", UP},
      {RECIPROCAL, only(DType::Float32), {"3"}, "0x3eaaaaab"},
      {RECIPROCAL, only(DType::Float32), {"3"}, "0x3eaaaaaa", TZ},
      // ---- TRUNC ----
      {TRUNC, kF, {"1.5"}, "1"}, {TRUNC, kF, {"-1.5"}, "-1"}, {TRUNC, kF, {"-0.5"}, "-0"},
      {TRUNC, kF, {"0.5"}, "0"}, {TRUNC, kF, {"inf"}, "inf"}, {TRUNC, kF, {"-inf"}, "-inf"},
      {TRUNC, kF, {"nan"}, "nan"}, {TRUNC, kF, {"-0"}, "-0"}, {TRUNC, kF, {"max"}, "max"},
      {TRUNC, kF, {"-tiny"}, "-0"},
      // ---- CAST: float -> int saturates, NaN -> 0; narrowing floats round in the mode ----
      C(kF, DType::Int32, "nan", "0"), C(kF, DType::Int32, "inf", "max"),
      C(kF, DType::Int32, "-inf", "min"), C(kF, DType::Int32, "-1.5", "-1"),
      C(kF, DType::Int32, "-0", "0"), C(kF, DType::UInt8, "-1", "0"),
      C(kF, DType::UInt8, "256", "255"), C(kF, DType::UInt8, "-0.5", "0"),
      C(kF, DType::Int8, "-256", "-128"), C(kF, DType::UInt64, "-inf", "0"),
      C(kF, DType::Bool, "nan", "true"), C(kF, DType::Bool, "-0", "false"),
      C(kF, DType::Bool, "0.5", "true"), C(kF, DType::Float64, "nan", "nan"),
      C(kF, DType::Float64, "-0", "-0"), C(kF, DType::Float16, "-inf", "-inf"),
      C(only(DType::Float32), DType::Int64, "0x5f000000", "max"),  // 2^63 is out of range
      C(only(DType::Float32), DType::Int64, "0xdf000000", "min"),  // -2^63 is in range
      C(only(DType::Float32), DType::Float16, "max", "inf"),
      C(only(DType::Float32), DType::Float16, "max", "max", TZ),
      C(only(DType::Float32), DType::Float16, "-max", "-max", UP),
      C(only(DType::Float32), DType::Float16, "65520", "inf"),  // the tie at the top goes to inf
      C(only(DType::Float32), DType::BFloat16, "0x3f808000", "0x3f80"),  // tie to even
      C(only(DType::Float32), DType::BFloat16, "0x3f818000", "0x3f82"),
      C(only(DType::Float64), DType::Float32, "0x3fb999999999999a", "0x3dcccccd"),
      C(only(DType::Float64), DType::Float32, "0x3fb999999999999a", "0x3dcccccc", TZ),
      C(only(DType::Float64), DType::Float32, "0x3690000000000000", "0"),     // 2^-150: tie to 0
      C(only(DType::Float64), DType::Float32, "0x3690000000000000", "tiny", UP),
      C(only(DType::Float16), DType::Float32, "tiny", "0x33800000"),
      C(only(DType::BFloat16), DType::Float32, "0xffc1", "nan"),
      C(only(DType::Float16), DType::BFloat16, "65504", "65536"),
      // ---- CAST: integers and bool ----
      C(only(DType::Int32), DType::Float32, "16777217", "16777216"),
      C(only(DType::Int32), DType::Float32, "16777217", "16777218", UP),
      C(only(DType::Int64), DType::Float32, "max", "9223372036854775808"),
      C(only(DType::Int64), DType::Float32, "max", "0x5effffff", TZ),
      C(only(DType::UInt64), DType::Float64, "max", "18446744073709551616"),
      C(only(DType::UInt64), DType::Float64, "max", "18446744073709549568", DN),
      C(only(DType::Int8), DType::Float16, "-128", "-128"),
      C(only(DType::Int32), DType::Float16, "70000", "inf"),
      C(only(DType::Int32), DType::Float16, "70000", "max", TZ),
      C(only(DType::UInt16), DType::BFloat16, "257", "256"),
      C(only(DType::Int16), DType::Float64, "-32768", "-32768"),
      C(only(DType::UInt32), DType::Float32, "max", "4294967296"),
      C(only(DType::Int32), DType::Int8, "300", "44"), C(only(DType::Int8), DType::UInt16, "-1", "65535"),
      C(only(DType::UInt8), DType::Int8, "255", "-1"), C(only(DType::Int64), DType::UInt64, "-1", "max"),
      C(only(DType::UInt16), DType::Int32, "65535", "65535"), C(only(DType::Int16), DType::Int64, "min", "-32768"),
      C(only(DType::UInt32), DType::Int16, "65537", "1"), C(only(DType::UInt64), DType::Int32, "max", "-1"),
      C(kI, DType::Bool, "0", "false"), C(kI, DType::Bool, "-1", "true"),
      C(only(DType::Int32), DType::Bool, "256", "true"), C(only(DType::Int16), DType::UInt8, "256", "0"),
      C(kB, DType::Float32, "true", "1"), C(kB, DType::Int64, "true", "1"), C(kB, DType::UInt8, "false", "0"),
      // ---- BITCAST: bits unchanged, NaN payloads included ----
      BC(DType::Float32, DType::Int32, "1", "0x3f800000"), BC(DType::Float32, DType::UInt32, "-0", "0x80000000"),
      BC(DType::Float16, DType::Int16, "1", "0x3c00"), BC(DType::BFloat16, DType::UInt16, "1", "0x3f80"),
      BC(DType::Float64, DType::Int64, "1", "0x3ff0000000000000"),
      BC(DType::Int32, DType::Float32, "0x7f800001", "0x7f800001"),
      BC(DType::UInt32, DType::Float32, "0x3f800000", "1"), BC(DType::Int16, DType::Float16, "0x7c00", "inf"),
      BC(DType::UInt16, DType::BFloat16, "0xff80", "-inf"), BC(DType::Int64, DType::Float64, "0", "0"),
      BC(DType::UInt64, DType::Int64, "max", "-1"), BC(DType::Int8, DType::UInt8, "-1", "255"),
      BC(DType::UInt8, DType::Int8, "128", "-128"), BC(DType::Int16, DType::UInt16, "-2", "65534"),
      BC(DType::UInt16, DType::Int16, "65535", "-1"), BC(DType::Int32, DType::UInt32, "-1", "max"),
      BC(DType::Float16, DType::BFloat16, "0x7e01", "0x7e01"),
      // ---- ADD ----
      {ADD, kF, {"1", "2"}, "3"}, {ADD, kF, {"inf", "-inf"}, "nan"}, {ADD, kF, {"-0", "-0"}, "-0"},
      {ADD, kF, {"0", "-0"}, "0"}, {ADD, kF, {"0", "-0"}, "-0", DN}, {ADD, kF, {"1", "-1"}, "0"},
      {ADD, kF, {"1", "-1"}, "-0", DN}, {ADD, kF, {"max", "max"}, "inf"},
      {ADD, kF, {"max", "max"}, "max", TZ}, {ADD, kF, {"max", "max"}, "max", DN},
      {ADD, kF, {"-max", "-max"}, "-max", UP}, {ADD, kF, {"tiny", "-tiny"}, "0"},
      {ADD, kF, {"nan", "1"}, "nan"}, {ADD, kF, {"inf", "1"}, "inf"},
      {ADD, only(DType::Float32), {"0xffc00001", "1"}, "nan"},
      {ADD, only(DType::Float32), {"1", "0x33800000"}, "1"},            // 1 + 2^-24: tie to even
      {ADD, only(DType::Float32), {"1", "0x33800000"}, "0x3f800001", UP},
      {ADD, only(DType::Float32), {"-1", "0xb3800000"}, "0xbf800001", DN},
      {ADD, kI, {"max", "1"}, "min"}, {ADD, kI, {"1", "2"}, "3"}, {ADD, kI, {"min", "-1"}, "max"},
      {ADD, kB, {"true", "true"}, "true"}, {ADD, kB, {"false", "false"}, "false"},
      // ---- MUL ----
      {MUL, kF, {"2", "3"}, "6"}, {MUL, kF, {"inf", "0"}, "nan"}, {MUL, kF, {"-0", "1"}, "-0"},
      {MUL, kF, {"-inf", "-1"}, "inf"}, {MUL, kF, {"nan", "0"}, "nan"},
      {MUL, kF, {"tiny", "0.5"}, "0"}, {MUL, kF, {"tiny", "0.5"}, "tiny", UP},
      {MUL, kF, {"tiny", "-0.5"}, "-tiny", DN}, {MUL, kF, {"tiny", "-0.5"}, "-0", TZ},
      {MUL, kF, {"max", "2"}, "inf"}, {MUL, kF, {"max", "-2"}, "-max", TZ},
      {MUL, kI, {"max", "2"}, "-2"}, {MUL, kI, {"3", "5"}, "15"}, {MUL, kS, {"min", "-1"}, "min"},
      {MUL, kB, {"true", "false"}, "false"}, {MUL, kB, {"true", "true"}, "true"},
      // ---- MAX: NaN wins, -0 < +0 ----
      {MAX, kF, {"1", "2"}, "2"}, {MAX, kF, {"nan", "1"}, "nan"}, {MAX, kF, {"1", "nan"}, "nan"},
      {MAX, kF, {"-0", "0"}, "0"}, {MAX, kF, {"0", "-0"}, "0"}, {MAX, kF, {"-0", "-0"}, "-0"},
      {MAX, kF, {"-inf", "-max"}, "-max"}, {MAX, kF, {"inf", "nan"}, "nan"},
      {MAX, kS, {"-1", "1"}, "1"}, {MAX, kU, {"-1", "1"}, "-1"}, {MAX, kI, {"min", "max"}, "max"},
      {MAX, kB, {"false", "true"}, "true"}, {MAX, kB, {"false", "false"}, "false"},
      // ---- comparisons ----
      {CMPLT, kF, {"1", "2"}, "true"}, {CMPLT, kF, {"nan", "1"}, "false"},
      {CMPLT, kF, {"1", "nan"}, "false"}, {CMPLT, kF, {"-0", "0"}, "false"},
      {CMPLT, kF, {"-inf", "inf"}, "true"}, {CMPLT, kF, {"-tiny", "-0"}, "true"},
      {CMPLT, kS, {"-1", "0"}, "true"}, {CMPLT, kU, {"-1", "0"}, "false"},
      {CMPLT, kI, {"min", "max"}, "true"}, {CMPLT, kI, {"3", "3"}, "false"},
      {CMPLT, kB, {"false", "true"}, "true"}, {CMPLT, kB, {"true", "false"}, "false"},
      {CMPNE, kF, {"nan", "nan"}, "true"}, {CMPNE, kF, {"-0", "0"}, "false"},
      {CMPNE, kF, {"1", "1"}, "false"}, {CMPNE, kF, {"1", "2"}, "true"},
      {CMPNE, kI, {"5", "5"}, "false"}, {CMPNE, kI, {"min", "max"}, "true"},
      {CMPNE, kB, {"true", "false"}, "true"}, {CMPNE, kB, {"true", "true"}, "false"},
      {CMPEQ, kF, {"nan", "nan"}, "false"}, {CMPEQ, kF, {"-0", "0"}, "true"},
      {CMPEQ, kF, {"1", "2"}, "false"}, {CMPEQ, kF, {"inf", "inf"}, "true"},
      {CMPEQ, kI, {"5", "5"}, "true"}, {CMPEQ, kI, {"1", "2"}, "false"},
      {CMPEQ, kB, {"true", "true"}, "true"}, {CMPEQ, kB, {"false", "true"}, "false"},
      // ---- POW: C99 pow's special cases ----
      {POW, kF, {"2", "10"}, "1024"}, {POW, kF, {"nan", "0"}, "1"}, {POW, kF, {"nan", "-0"}, "1"},
      {POW, kF, {"1", "nan"}, "1"}, {POW, kF, {"-1", "inf"}, "1"}, {POW, kF, {"-1", "-inf"}, "1"},
      {POW, kF, {"-2", "0.5"}, "nan"}, {POW, kF, {"-2", "3"}, "-8"}, {POW, kF, {"-2", "2"}, "4"},
      {POW, kF, {"0", "-1"}, "inf"}, {POW, kF, {"-0", "-1"}, "-inf"}, {POW, kF, {"-0", "-2"}, "inf"},
      {POW, kF, {"0", "1"}, "0"}, {POW, kF, {"-0", "3"}, "-0"}, {POW, kF, {"-0", "2"}, "0"},
      {POW, kF, {"0.5", "inf"}, "0"}, {POW, kF, {"2", "inf"}, "inf"}, {POW, kF, {"2", "-inf"}, "0"},
      {POW, kF, {"0.5", "-inf"}, "inf"}, {POW, kF, {"inf", "-1"}, "0"}, {POW, kF, {"inf", "2"}, "inf"},
      {POW, kF, {"-inf", "3"}, "-inf"}, {POW, kF, {"-inf", "-3"}, "-0"}, {POW, kF, {"-inf", "2"}, "inf"},
      {POW, kF, {"4", "0.5"}, "2"}, {POW, kF, {"nan", "1"}, "nan"}, {POW, kF, {"1", "-inf"}, "1"},
      {POW, kF, {"0", "-inf"}, "inf"}, {POW, kF, {"2", "-1"}, "0.5"},
      // ---- bitwise ----
      {AND, kI, {"12", "10"}, "8"}, {OR, kI, {"12", "10"}, "14"}, {XOR, kI, {"12", "10"}, "6"},
      {AND, kI, {"-1", "min"}, "min"}, {OR, kI, {"min", "max"}, "-1"}, {XOR, kI, {"-1", "max"}, "min"},
      {AND, kB, {"true", "false"}, "false"}, {OR, kB, {"true", "false"}, "true"},
      {XOR, kB, {"true", "true"}, "false"}, {XOR, kB, {"true", "false"}, "true"},
      // ---- shifts: counts that are negative or >= the width shift every bit out ----
      {SHL, kI, {"1", "3"}, "8"}, {SHL, kI, {"1", "max"}, "0"}, {SHL, kI, {"-1", "1"}, "-2"},
      {SHL, kS, {"1", "-1"}, "0"}, {SHL, kI, {"max", "1"}, "-2"},
      {SHL, only(DType::Int8), {"1", "7"}, "min"}, {SHL, only(DType::Int8), {"1", "8"}, "0"},
      {SHL, only(DType::UInt32), {"1", "32"}, "0"}, {SHL, only(DType::Int64), {"1", "64"}, "0"},
      {SHR, kS, {"-8", "1"}, "-4"}, {SHR, kS, {"-8", "max"}, "-1"}, {SHR, kS, {"8", "max"}, "0"},
      {SHR, kS, {"-8", "-1"}, "-1"},
      {SHR, kU, {"8", "1"}, "4"}, {SHR, kU, {"-1", "max"}, "0"}, {SHR, kU, {"min", "1"}, "0"},
      {SHR, only(DType::Int16), {"-1", "16"}, "-1"}, {SHR, only(DType::UInt16), {"65535", "15"}, "1"},
      // ---- integer division (RISC-V's rules for /0 and MIN/-1) ----
      {CDIV, kS, {"7", "-2"}, "-3"}, {CDIV, kS, {"-7", "2"}, "-3"}, {CDIV, kS, {"7", "0"}, "-1"},
      {CDIV, kS, {"min", "-1"}, "min"}, {CDIV, kS, {"0", "0"}, "-1"},
      {CDIV, kU, {"7", "2"}, "3"}, {CDIV, kU, {"7", "0"}, "max"}, {CDIV, kU, {"max", "max"}, "1"},
      {CMOD, kS, {"7", "-2"}, "1"}, {CMOD, kS, {"-7", "2"}, "-1"}, {CMOD, kS, {"7", "0"}, "7"},
      {CMOD, kS, {"min", "-1"}, "0"}, {CMOD, kU, {"7", "2"}, "1"}, {CMOD, kU, {"7", "0"}, "7"},
      {FLOORDIV, kS, {"7", "-2"}, "-4"}, {FLOORDIV, kS, {"-7", "2"}, "-4"},
      {FLOORDIV, kS, {"-8", "2"}, "-4"}, {FLOORDIV, kS, {"7", "0"}, "-1"},
      {FLOORDIV, kS, {"min", "-1"}, "min"}, {FLOORDIV, kU, {"7", "2"}, "3"},
      {FLOORDIV, kU, {"5", "0"}, "max"},
      {FLOORMOD, kS, {"7", "-2"}, "-1"}, {FLOORMOD, kS, {"-7", "2"}, "1"},
      {FLOORMOD, kS, {"7", "0"}, "7"}, {FLOORMOD, kS, {"min", "-1"}, "0"},
      {FLOORMOD, kS, {"-8", "2"}, "0"}, {FLOORMOD, kU, {"7", "2"}, "1"}, {FLOORMOD, kU, {"7", "0"}, "7"},
      // ---- GATHER copies the chosen element's bits (no canonicalisation, -0 kept, in every
      // mode); an index outside [0, size) gives zero bits. Operands: x, then the int32 index. ----
      {GATHER, kF, {"1 -0 nan", "1"}, "-0"}, {GATHER, kF, {"nan 2", "1"}, "2"},
      {GATHER, kF, {"1 2", "2"}, "0"}, {GATHER, kF, {"1 2", "-1"}, "0"}, {GATHER, kF, {"", "0"}, "0"},
      {GATHER, kF, {"1 tiny", "1"}, "tiny", TZ}, {GATHER, kF, {"-inf max", "0"}, "-inf", UP},
      {GATHER, only(DType::Float32), {"0 0x7f800001", "1"}, "0x7f800001"},
      {GATHER, kI, {"min max", "0"}, "min"}, {GATHER, kI, {"min max", "1"}, "max"},
      {GATHER, kI, {"min max", "5"}, "0"}, {GATHER, kI, {"max max", "-2"}, "0"},
      {GATHER, kB, {"false true", "1"}, "true"}, {GATHER, kB, {"true true", "-1"}, "false"},
      // ---- WHERE moves bits: no arithmetic, so no NaN canonicalisation ----
      {WHERE, kF, {"true", "1", "2"}, "1"}, {WHERE, kF, {"false", "1", "2"}, "2"},
      {WHERE, kF, {"true", "-0", "1"}, "-0"},
      {WHERE, only(DType::Float32), {"true", "0x7f800001", "0"}, "0x7f800001"},
      {WHERE, kI, {"true", "min", "max"}, "min"}, {WHERE, kI, {"false", "min", "max"}, "max"},
      {WHERE, kB, {"true", "false", "true"}, "false"}, {WHERE, kB, {"false", "false", "true"}, "true"},
      // ---- MULACC: a*b+c rounded once ----
      {MULACC, kF, {"2", "3", "1"}, "7"}, {MULACC, kF, {"inf", "0", "1"}, "nan"},
      {MULACC, kF, {"1", "1", "-1"}, "0"}, {MULACC, kF, {"1", "1", "-1"}, "-0", DN},
      {MULACC, kF, {"inf", "1", "-inf"}, "nan"}, {MULACC, kF, {"-0", "1", "-0"}, "-0"},
      {MULACC, kF, {"max", "2", "-max"}, "max"},  // the exact a*b+c is max: no intermediate overflow
      // (1+2^-12)^2 - (1+2^-11) = 2^-24 exactly; separate roundings would give 0.
      {MULACC, only(DType::Float32), {"0x3f800800", "0x3f800800", "0xbf801000"}, "0x33800000"},
      {MULACC, kI, {"max", "2", "3"}, "1"}, {MULACC, kI, {"3", "4", "5"}, "17"},
      // ---- REDUCE: a left fold in index order from the identity ----
      R(ReduceOp::ADD, kF, "1 2 3", "6"), R(ReduceOp::ADD, kF, "", "0"), R(ReduceOp::ADD, kF, "-0", "0"),
      R(ReduceOp::ADD, kF, "-0", "-0", DN), R(ReduceOp::ADD, kF, "1 nan", "nan"),
      R(ReduceOp::ADD, kF, "inf -inf", "nan"), R(ReduceOp::ADD, kF, "max max -max", "inf"),
      R(ReduceOp::ADD, only(DType::Float32), "100000000 1 -100000000 1", "1"),
      R(ReduceOp::ADD, only(DType::Float16), "2048 1 -2048 1", "1"),
      R(ReduceOp::ADD, only(DType::Float16), "1 -2048 2048 1", "2"),
      R(ReduceOp::MUL, kF, "2 3", "6"), R(ReduceOp::MUL, kF, "", "1"), R(ReduceOp::MUL, kF, "0 inf", "nan"),
      R(ReduceOp::MUL, kF, "-1 0", "-0"), R(ReduceOp::MAX, kF, "", "-inf"), R(ReduceOp::MAX, kF, "1 nan 3", "nan"),
      R(ReduceOp::MAX, kF, "-0 0", "0"), R(ReduceOp::MAX, kF, "-0", "-0"), R(ReduceOp::MAX, kF, "-inf", "-inf"),
      R(ReduceOp::ADD, kI, "max 1", "min"), R(ReduceOp::ADD, kI, "", "0"), R(ReduceOp::ADD, kI, "1 2 3", "6"),
      R(ReduceOp::MUL, kI, "3 4", "12"), R(ReduceOp::MUL, kI, "", "1"), R(ReduceOp::MUL, kI, "max 2", "-2"),
      R(ReduceOp::MAX, kI, "", "min"), R(ReduceOp::MAX, kS, "1 -1", "1"), R(ReduceOp::MAX, kU, "1 -1", "-1"),
      R(ReduceOp::ADD, kB, "false true", "true"), R(ReduceOp::ADD, kB, "", "false"),
      R(ReduceOp::MUL, kB, "true false", "false"), R(ReduceOp::MUL, kB, "", "true"),
      R(ReduceOp::MAX, kB, "", "false"), R(ReduceOp::MAX, kB, "false true", "true"),
      // ---- REDUCE_MULACC: acc = +0, then acc = a[i]*b[i] + acc rounded once, in order ----
      {REDUCE_MULACC, kF, {"1 2", "3 4"}, "11"}, {REDUCE_MULACC, kF, {"", ""}, "0"},
      {REDUCE_MULACC, kF, {"-0", "1"}, "0"}, {REDUCE_MULACC, kF, {"-0", "1"}, "-0", DN},
      {REDUCE_MULACC, kF, {"inf", "0"}, "nan"}, {REDUCE_MULACC, kF, {"1 nan", "1 1"}, "nan"},
      {REDUCE_MULACC, kF, {"-max max", "1 2"}, "max"},  // max*2 - max never overflows
      {REDUCE_MULACC, kF, {"max max", "1 1"}, "max", TZ},
      // The product is not rounded on its own: (1+2^-12)^2 - (1+2^-11) = 2^-24 exactly.
      {REDUCE_MULACC, only(DType::Float32), {"-1.00048828125 1.000244140625", "1 1.000244140625"},
       "5.9604644775390625e-08"},
  };
  return k;
}

Tensor build(const Case& c, DType d) {
  std::vector<Tensor> xs;
  if (c.op == Op::REDUCE) {
    std::vector<uint64_t> v;
    for (auto& t : split(c.in[0])) v.push_back(parse(d, t));
    Tensor x = tensor_of_bits(v, {static_cast<int64_t>(v.size())}, d);
    RoundingScope scope(c.r);
    return x.reduce(c.rop, {0});
  }
  if (c.op == Op::REDUCE_MULACC) {
    std::vector<Tensor> v;
    for (const std::string& in : c.in) {
      std::vector<uint64_t> bits;
      for (auto& t : split(in)) bits.push_back(parse(d, t));
      v.push_back(tensor_of_bits(bits, {static_cast<int64_t>(bits.size())}, d));
    }
    RoundingScope scope(c.r);
    return prim::fused_reduce(v[0], v[1], {0});
  }
  if (c.op == Op::GATHER) {
    std::vector<uint64_t> bits;
    for (auto& t : split(c.in[0])) bits.push_back(parse(d, t));
    Tensor x = tensor_of_bits(bits, {static_cast<int64_t>(bits.size())}, d);
    Tensor i = tensor_of_bits({parse(DType::Int32, c.in[1])}, {1}, DType::Int32);
    RoundingScope scope(c.r);
    return prim::gather(x, i, 0);
  }
  for (size_t k = 0; k < c.in.size(); ++k) {
    DType dk = (c.op == Op::WHERE && k == 0) ? DType::Bool : d;
    xs.push_back(tensor_of_bits({parse(dk, c.in[k])}, {1}, dk));
  }
  RoundingScope scope(c.r);
  if (c.op == Op::CAST) return xs[0].cast(c.to);
  if (c.op == Op::BITCAST) return xs[0].bitcast(c.to);
  return alu(c.op, xs);  // every other op through its builder (maroon/ops.def)
}

TEST(SpecialValues, EveryCaseHasTheExpectedBits) {
  int checked = 0;
  for (const Case& c : cases()) {
    for (DType d : c.dtypes) {
      Tensor y = build(c, d);
      DType out_dtype = y.dtype();
      uint64_t want = parse(out_dtype, c.out);
      uint64_t got = y.bits().at(0);
      std::string in;
      for (auto& t : c.in) in += "[" + t + "] ";
      EXPECT_EQ(got, want) << op_name(c.op) << (c.op == Op::REDUCE ? std::string(reduce_op_name(c.rop)) : "")
                           << " " << dtype_name(d) << " -> " << dtype_name(out_dtype) << " " << in
                           << "rounding " << round_name(c.r) << ": got " << hex(got) << ", want "
                           << hex(want) << " (" << c.out << ")";
      ++checked;
    }
  }
  EXPECT_GT(checked, 900);
}

// The op table drives the list of tests: every accepted op/dtype pair needs a case above (REDUCE
// needs one per combining op), and every rejected pair must throw DTypeError.
TEST(SpecialValues, EveryAcceptedOpDtypePairHasACase) {
  std::set<std::tuple<Op, DType, int>> have;
  for (const Case& c : cases())
    for (DType d : c.dtypes) have.insert({c.op, d, c.op == Op::REDUCE ? static_cast<int>(c.rop) : -1});
  for (const OpInfo& op : all_ops()) {
    if (op.kind == OpKind::Movement || op.kind == OpKind::Source) continue;  // see movement_test
    for (DType d : kConcreteDTypes) {
      if (!op_accepts(op.op, d)) continue;
      if (op.op == Op::REDUCE) {
        for (ReduceOp r : kAllReduceOps)
          EXPECT_TRUE(have.count({op.op, d, static_cast<int>(r)}))
              << "no special-value case for REDUCE " << reduce_op_name(r) << " on " << dtype_name(d);
      } else {
        EXPECT_TRUE(have.count({op.op, d, -1}))
            << "no special-value case for " << op.name << " on " << dtype_name(d);
      }
    }
  }
}

TEST(SpecialValues, EveryRejectedOpDtypePairThrows) {
  int rejected = 0;
  for (const OpInfo& op : all_ops()) {
    if (op.kind == OpKind::Movement || op.kind == OpKind::Source || op.op == Op::CAST) continue;
    for (DType d : kConcreteDTypes) {
      if (op_accepts(op.op, d)) continue;
      Case c{op.op, {d}, std::vector<std::string>(op.arity, d == DType::Bool ? "true" : "1"), "0"};
      if (op.op == Op::BITCAST) c.to = d == DType::Bool ? DType::Int8 : DType::Bool;
      if (op.op == Op::WHERE) c.in[0] = "true";
      EXPECT_THROW(build(c, d), DTypeError) << op.name << " on " << dtype_name(d);
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 50);
}

}  // namespace
}  // namespace maroon::test
