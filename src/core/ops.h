// The op enum and its table, generated from the op table (maroon/ops.def): one OpInfo per row,
// carrying every fact about the op.
#pragma once
#include <cstdint>
#include <span>
#include <string_view>

#include "maroon/dtype.h"
#include "maroon/reduce.h"

namespace maroon {

enum class Op : uint8_t {
#define OP(NAME, ...) NAME,
#include "maroon/ops.def"
#undef OP
};

// The columns of maroon/ops.def (its header comment says what each value means).
enum class OpKind : uint8_t { Unary, Cast, Binary, Compare, Ternary, Reduce, Movement, Source, Index };
enum class DTypeRule : uint8_t { Float, Numeric, Int, IntBool, Any };
enum class Rounding : uint8_t { Rounds, Exact };
enum class Identity : uint8_t { None, Zero, One, Lowest, AllOnes };
enum class Commutativity : uint8_t { Commutes, Ordered };
enum class SimdRule : uint8_t { None, F32F64, Fold32, NoHalf, All, Pairs };
enum class GradRule : uint8_t { Grad, Stop, None };

constexpr ReduceOp kAllReduceOps[] = {ReduceOp::ADD, ReduceOp::MUL, ReduceOp::MAX};
// The binary op a REDUCE folds with (ADD, MUL, MAX): its row gives the identity and rounding.
Op combiner(ReduceOp r);
std::string_view reduce_op_name(ReduceOp r);

struct OpInfo {
  Op op;
  std::string_view name;  // upper case, as in tinygrad's Ops enum
  OpKind kind;
  int arity;
  DTypeRule dtypes;
  std::string_view builder;  // maroon::prim::<builder>
  bool rounds;               // float results depend on the rounding mode
  Identity identity;
  bool commutes;             // swapping the first two operands never changes a bit
  SimdRule simd;
  GradRule grad;
};

std::span<const OpInfo> all_ops();
const OpInfo& op_info(Op op);
std::string_view op_name(Op op);
// Unary, Cast, Binary, Compare and Ternary: ops the CPU backend fuses into one kernel.
bool is_elementwise(OpKind k);
// Whether `op` accepts inputs of dtype `d` (for CAST/BITCAST: the source dtype; for WHERE: the
// value operands, the condition being bool).
bool op_accepts(Op op, DType d);
bool rule_accepts(DTypeRule rule, DType d);
std::string_view rule_name(DTypeRule rule);
// Whether src/cpu/fastops.cpp is declared to have a SIMD kernel for `op` on operands of `d`
// (Pairs: some casts from `d`).
bool simd_accepts(Op op, DType d);
// Names of the column values, as written in maroon/ops.def.
std::string_view kind_name(OpKind k);
std::string_view identity_name(Identity i);
std::string_view simd_name(SimdRule s);
std::string_view grad_name(GradRule g);

}  // namespace maroon
