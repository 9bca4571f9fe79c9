#include "core/ops.h"

#include <array>
#include <cassert>

namespace maroon {

namespace {
constexpr std::array kOps = {
#define OP(NAME, KIND, ARITY, DTYPES, BUILDER, ROUNDS, IDENTITY, COMMUTES, SIMD, GRAD)           \
  OpInfo{Op::NAME, #NAME, OpKind::KIND, ARITY, DTypeRule::DTYPES, #BUILDER,                     \
         Rounding::ROUNDS == Rounding::Rounds, Identity::IDENTITY,                               \
         Commutativity::COMMUTES == Commutativity::Commutes, SimdRule::SIMD, GradRule::GRAD},
#include "maroon/ops.def"
#undef OP
};

// The table is in enum order, so op_info is an index (checked at compile time).
constexpr bool in_enum_order() {
  for (size_t i = 0; i < kOps.size(); ++i)
    if (static_cast<size_t>(kOps[i].op) != i) return false;
  return true;
}
static_assert(in_enum_order());
}  // namespace

std::span<const OpInfo> all_ops() { return kOps; }

const OpInfo& op_info(Op op) { return kOps[static_cast<size_t>(op)]; }

std::string_view op_name(Op op) { return op_info(op).name; }

Op combiner(ReduceOp r) {
  switch (r) {
    case ReduceOp::ADD: return Op::ADD;
    case ReduceOp::MUL: return Op::MUL;
    case ReduceOp::MAX: return Op::MAX;
  }
  return Op::ADD;
}

std::string_view reduce_op_name(ReduceOp r) { return op_name(combiner(r)); }

bool is_elementwise(OpKind k) {
  return k == OpKind::Unary || k == OpKind::Cast || k == OpKind::Binary || k == OpKind::Compare ||
         k == OpKind::Ternary;
}

bool rule_accepts(DTypeRule rule, DType d) {
  if (is_weak(d)) return false;
  switch (rule) {
    case DTypeRule::Float: return is_float(d);
    case DTypeRule::Numeric: return d != DType::Bool;
    case DTypeRule::Int: return is_int(d);
    case DTypeRule::IntBool: return is_int(d) || d == DType::Bool;
    case DTypeRule::Any: return true;
  }
  return false;
}

std::string_view rule_name(DTypeRule rule) {
  switch (rule) {
    case DTypeRule::Float: return "float dtypes";
    case DTypeRule::Numeric: return "integer and float dtypes";
    case DTypeRule::Int: return "integer dtypes";
    case DTypeRule::IntBool: return "integer and bool dtypes";
    case DTypeRule::Any: return "every dtype";
  }
  return "?";
}

bool op_accepts(Op op, DType d) { return rule_accepts(op_info(op).dtypes, d); }

bool simd_accepts(Op op, DType d) {
  if (!op_accepts(op, d)) return false;
  const bool half = d == DType::Float16 || d == DType::BFloat16;
  switch (op_info(op).simd) {
    case SimdRule::None: return false;
    case SimdRule::F32F64: return d == DType::Float32 || d == DType::Float64;
    case SimdRule::Fold32:
      return d == DType::Float32 || d == DType::Float64 || d == DType::Int32 || d == DType::UInt32;
    case SimdRule::NoHalf: return !half;
    case SimdRule::All: return true;
    case SimdRule::Pairs: return true;  // some targets; which pairs is fastops' choice
  }
  return false;
}

std::string_view kind_name(OpKind k) {
  switch (k) {
    case OpKind::Unary: return "unary";
    case OpKind::Cast: return "cast";
    case OpKind::Binary: return "binary";
    case OpKind::Compare: return "compare";
    case OpKind::Ternary: return "ternary";
    case OpKind::Reduce: return "reduce";
    case OpKind::Movement: return "movement";
    case OpKind::Source: return "source";
    case OpKind::Index: return "index";
  }
  return "?";
}

std::string_view identity_name(Identity i) {
  switch (i) {
    case Identity::None: return "-";
    case Identity::Zero: return "0";
    case Identity::One: return "1";
    case Identity::Lowest: return "lowest";
    case Identity::AllOnes: return "all ones";
  }
  return "?";
}

std::string_view simd_name(SimdRule s) {
  switch (s) {
    case SimdRule::None: return "-";
    case SimdRule::F32F64: return "float32, float64";
    case SimdRule::Fold32: return "float32, float64, int32, uint32";
    case SimdRule::NoHalf: return "all but float16, bfloat16";
    case SimdRule::All: return "all";
    case SimdRule::Pairs: return "some pairs";
  }
  return "?";
}

std::string_view grad_name(GradRule g) {
  switch (g) {
    case GradRule::Grad: return "rule";
    case GradRule::Stop: return "stops";
    case GradRule::None: return "-";
  }
  return "?";
}

}  // namespace maroon
