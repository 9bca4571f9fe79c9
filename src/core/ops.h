// The op enum and its table, generated from ops.def.
#pragma once
#include <cstdint>
#include <span>
#include <string_view>

#include "maroon/dtype.h"
#include "maroon/reduce.h"

namespace maroon {

enum class Op : uint8_t {
#define OP(NAME, KIND, ARITY, DTYPES) NAME,
#include "core/ops.def"
#undef OP
};

enum class OpKind : uint8_t { Unary, Binary, Compare, Ternary, Reduce, Movement, Source };
enum class DTypeRule : uint8_t { Float, Numeric, Int, IntBool, Any };

constexpr ReduceOp kAllReduceOps[] = {ReduceOp::ADD, ReduceOp::MUL, ReduceOp::MAX};
std::string_view reduce_op_name(ReduceOp r);

struct OpInfo {
  Op op;
  std::string_view name;  // upper case, as in tinygrad's Ops enum
  OpKind kind;
  int arity;
  DTypeRule dtypes;
};

std::span<const OpInfo> all_ops();
const OpInfo& op_info(Op op);
std::string_view op_name(Op op);
// Whether `op` accepts inputs of dtype `d` (for CAST/BITCAST: the source dtype; for WHERE: the
// value operands, the condition being bool).
bool op_accepts(Op op, DType d);
bool rule_accepts(DTypeRule rule, DType d);
std::string_view rule_name(DTypeRule rule);

}  // namespace maroon
