// The SIMD column of maroon/ops.def against src/cpu/fastops.cpp: for every op and dtype, a tile
// kernel exists exactly where the table says one does. A kernel added without its row, or a row
// promising one that fastops lacks, fails naming the op and the dtype.
#include <gtest/gtest.h>

#include "core/ops.h"
#include "cpu/fastops.h"

namespace maroon::cpu {
namespace {

TEST(SimdTable, TheTableNamesEveryTileKernel) {
  int kernels = 0;
  for (const OpInfo& info : all_ops()) {
    for (DType d : kConcreteDTypes) {
      if (!op_accepts(info.op, d)) continue;
      bool have = false;
      if (info.op == Op::CAST) {
        for (DType to : kConcreteDTypes) have = have || fast_op(info.op, d, to) != nullptr;
        if (have) ++kernels;
        continue;  // Pairs: which casts is fastops' choice; at least one is checked below
      }
      if (info.op == Op::REDUCE) {
        for (ReduceOp r : kAllReduceOps) {
          bool h = fast_reduce(r, d) != nullptr;
          EXPECT_EQ(h, simd_accepts(info.op, d)) << "REDUCE " << reduce_op_name(r) << " on " << dtype_name(d)
                                                 << ": maroon/ops.def SIMD says " << simd_name(info.simd);
        }
        continue;
      }
      const DType out = info.kind == OpKind::Compare ? DType::Bool : d;
      have = fast_op(info.op, d, out) != nullptr;
      kernels += have;
      EXPECT_EQ(have, simd_accepts(info.op, d))
          << info.name << " on " << dtype_name(d) << ": maroon/ops.def SIMD says " << simd_name(info.simd)
          << ", src/cpu/fastops.cpp " << (have ? "has" : "has no") << " kernel";
    }
  }
  EXPECT_EQ(op_info(Op::CAST).simd, SimdRule::Pairs);
  EXPECT_NE(fast_op(Op::CAST, DType::Float32, DType::Float64), nullptr);
  EXPECT_GT(kernels, 80);
}

}  // namespace
}  // namespace maroon::cpu
