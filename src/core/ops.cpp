#include "core/ops.h"

#include <array>
#include <cassert>

namespace maroon {

namespace {
constexpr std::array kOps = {
#define OP(NAME, KIND, ARITY, DTYPES) \
  OpInfo{Op::NAME, #NAME, OpKind::KIND, ARITY, DTypeRule::DTYPES},
#include "core/ops.def"
#undef OP
};
}  // namespace

std::span<const OpInfo> all_ops() { return kOps; }

const OpInfo& op_info(Op op) {
  const OpInfo& info = kOps[static_cast<size_t>(op)];
  assert(info.op == op);
  return info;
}

std::string_view op_name(Op op) { return op_info(op).name; }

std::string_view reduce_op_name(ReduceOp r) {
  switch (r) {
    case ReduceOp::ADD: return "ADD";
    case ReduceOp::MUL: return "MUL";
    case ReduceOp::MAX: return "MAX";
  }
  return "?";
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

}  // namespace maroon
