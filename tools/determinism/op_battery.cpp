// Every op of include/maroon/ops.def in every dtype it accepts and every rounding mode, on fixed
// pseudo-random inputs with special values. Shapes span several CPU tasks (16 tiles of 512
// elements each) with a partial last tile, so thread counts and SIMD widths split the work
// differently; operands include permuted and broadcast views.
#include <stdexcept>
#include <string>
#include <vector>

#include "battery.h"
#include "core/alu.h"
#include "core/ops.h"
#include "maroon/primitives.h"

namespace maroon::determinism {
namespace {

// 3 x 2731 = 8193 elements: 17 tiles, two tasks, a 1-element last tile. The small battery
// (emulated CPUs, where the full one takes many minutes) has 3 x 171 = 513: two tiles, one task;
// its lines are named ops-small so they are only compared with other small runs.
constexpr int64_t kRows = 3;
int64_t kCols = 2731;
Shape kShape{kRows, kCols};
std::string P = "ops";  // prefix of every line name and class

std::string dn(DType d) { return std::string(dtype_name(d)); }

// Operand k of an op: k=0 contiguous, k=1 a transposed buffer, k=2 a broadcast row.
Tensor operand(const std::string& key, DType d, int k) {
  const std::string kk = key + "/" + std::to_string(k);
  if (k == 1) return random_tensor(kk, {kCols, kRows}, d).permute({1, 0});
  if (k == 2) return random_tensor(kk, {1, kCols}, d).expand(kShape);
  return random_tensor(kk, kShape, d);
}

const char* class_of(OpKind k) {
  switch (k) {
    case OpKind::Unary: return ":unary";
    case OpKind::Binary: return ":binary";
    case OpKind::Compare: return ":compare";
    case OpKind::Ternary: return ":ternary";
    default: return ":other";
  }
}


// Elementwise ops with operands of their own dtype (CAST, BITCAST and WHERE have their own loops).
void elementwise(Recorder& rec) {
  for (const OpInfo& info : all_ops()) {
    if (info.kind != OpKind::Unary && info.kind != OpKind::Binary && info.kind != OpKind::Compare &&
        info.kind != OpKind::Ternary)
      continue;
    if (info.op == Op::CAST || info.op == Op::BITCAST || info.op == Op::WHERE) continue;
    const std::string name = P + "." + std::string(info.name);
    for (DType d : kConcreteDTypes) {
      if (!op_accepts(info.op, d)) continue;
      std::vector<Tensor> x;
      for (int k = 0; k < info.arity; ++k) x.push_back(operand(name + "/" + dn(d), d, k));
      for (Round r : kAllRounds) {
        RoundingScope scope(r);
        rec.add(P + class_of(info.kind), name, alu(info.op, x));
      }
    }
  }
}

void casts_and_where(Recorder& rec) {
  for (DType from : kConcreteDTypes) {
    Tensor x = operand("ops.CAST/" + dn(from), from, 1);
    for (DType to : kConcreteDTypes)
      for (Round r : kAllRounds) {
        RoundingScope scope(r);
        rec.add(P + ":unary", P + ".CAST", x.cast(to));
      }
    if (!op_accepts(Op::BITCAST, from)) continue;
    for (DType to : kConcreteDTypes) {
      if (to == DType::Bool || itemsize(to) != itemsize(from)) continue;
      rec.add(P + ":unary", P + ".BITCAST", x.bitcast(to));
    }
  }
  for (DType d : kConcreteDTypes) {
    const std::string key = "ops.WHERE/" + dn(d);
    Tensor c = operand(key, DType::Bool, 0), a = operand(key, d, 1), b = operand(key, d, 2);
    for (Round r : kAllRounds) {
      RoundingScope scope(r);
      rec.add(P + ":ternary", P + ".WHERE", prim::where(c, a, b));
    }
  }
}

// Weak C++ scalars and CONST: the literal's conversion must not depend on the caller's FPU.
void constants(Recorder& rec) {
  // Literals only: arithmetic here would run in the caller state the battery sets (1.0 / 3
  // rounds up under --fpstate=round-up when the compiler does not fold it, as clang does not).
  const double fl[] = {0.1, -2.5, 1e30, 1e-40, 3.4028235677973366e38, 65504.5, 0.3333333333333333};
  const int64_t in[] = {3, -1, 255, 300, -129, int64_t{1} << 40};
  for (DType d : kConcreteDTypes) {
    Tensor x = operand("ops.CONST/" + dn(d), d, 0);
    for (Round r : kAllRounds) {
      RoundingScope scope(r);
      for (double v : fl) {
        rec.add(P + ":const", P + ".CONST", Tensor::full({5}, v, d));
        if (d != DType::Bool) rec.add(P + ":const", P + ".CONST", prim::add(x, v));
        if (d != DType::Bool) rec.add(P + ":const", P + ".CONST", prim::mul(v, x));
      }
      for (int64_t v : in) {
        rec.add(P + ":const", P + ".CONST", Tensor::full({5}, v, d));
        if (d != DType::Bool) rec.add(P + ":const", P + ".CONST", prim::add(x, v));
      }
    }
  }
}

void reductions(Recorder& rec) {
  for (DType d : kConcreteDTypes) {
    Tensor x = operand("ops.REDUCE/" + dn(d), d, 0);
    Tensor xt = operand("ops.REDUCE/" + dn(d), d, 1);
    for (ReduceOp op : kAllReduceOps) {
      const std::string name = P + ".REDUCE." + std::string(reduce_op_name(op));
      for (Round r : kAllRounds) {
        RoundingScope scope(r);
        for (const std::vector<int64_t>& axes : {std::vector<int64_t>{0}, {1}, {0, 1}}) {
          rec.add(P + ":reduce", name, x.reduce(op, axes));
          rec.add(P + ":reduce", name, xt.reduce(op, axes));
        }
      }
    }
  }
  // Matmuls as MUL + REDUCE ADD (the packed kernel's path), over several k blocks, plain and
  // with a transposed left operand.
  for (DType d : {DType::Float32, DType::Float64}) {
    const bool small = kCols < 2731;
    const int64_t M = small ? 9 : 37, K = small ? 40 : 300, N = small ? 11 : 70;
    Tensor a = random_tensor("ops.matmul/a/" + dn(d), {M, K}, d);
    Tensor at = random_tensor("ops.matmul/at/" + dn(d), {K, M}, d).permute({1, 0});
    // Values near 1 keep the long sums meaningful: scale the random bits into [-1, 1) exactly.
    Tensor b = random_tensor("ops.matmul/b/" + dn(d), {K, N}, DType::Int16).cast(d);
    for (Round r : kAllRounds) {
      RoundingScope scope(r);
      Tensor bs = prim::mul(b, 1.0 / 32768);
      for (const Tensor& lhs : {a, at}) {
        Tensor p = prim::mul(lhs.reshape({M, K, 1}).expand({M, K, N}), bs.reshape({1, K, N}).expand({M, K, N}));
        rec.add(P + ":reduce", P + ".matmul", p.reduce(ReduceOp::ADD, {1}));
      }
    }
  }
  // REDUCE_MULACC, the opt-in fused matmul (each step one fused multiply-add), in every float
  // dtype; half formats are smaller (they run on the reference path).
  for (DType d : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    const bool wide = (d == DType::Float32 || d == DType::Float64) && kCols >= 2731;
    const int64_t M = wide ? 37 : 9, K = wide ? 300 : 40, N = wide ? 70 : 11;
    Tensor a = random_tensor("ops.REDUCE_MULACC/a", {M, K}, d);
    Tensor b = random_tensor("ops.REDUCE_MULACC/b", {K, N}, DType::Int16).cast(d);
    for (Round r : kAllRounds) {
      RoundingScope scope(r);
      rec.add(P + ":reduce", P + ".REDUCE_MULACC", a.matmul(prim::mul(b, 1.0 / 32768), std::nullopt, true));
    }
  }
}

// Views (every movement op, the graph markers too) read back directly and feeding a kernel.
void movement(Recorder& rec) {
  for (DType d : kConcreteDTypes) {
    Tensor x = random_tensor("ops.movement/" + dn(d), {6, kCols}, d);
    Tensor v = x.reshape({2, 3, kCols})
                   .permute({2, 0, 1})
                   .pad({{3, 2}, {0, 1}, {1, 0}})
                   .shrink({{1, kCols + 4}, {0, 3}, {0, 4}})
                   .flip({0, 2})
                   .detach()
                   .contiguous_backward();
    rec.add(P + ":movement", P + ".movement", v);
    Tensor w = random_tensor("ops.movement/w/" + dn(d), {1, 3, 1}, d).expand(v.shape());
    for (Round r : kAllRounds) {
      RoundingScope scope(r);
      rec.add(P + ":movement", P + ".movement", prim::maximum(v, w));
      if (d != DType::Bool) rec.add(P + ":movement", P + ".movement", prim::add(v, w));
    }
  }
}

// Chains the CPU backend fuses into one kernel, and a chain through a reduction's view.
void fused(Recorder& rec) {
  for (DType d : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    Tensor a = operand("ops.fused/" + dn(d), d, 0), b = operand("ops.fused/" + dn(d), d, 1);
    for (Round r : kAllRounds) {
      RoundingScope scope(r);
      Tensor h = prim::add(prim::mul(a, b), 1.0);
      Tensor relu = prim::where(prim::cmplt(Tensor::full({}, 0.0, d), h), h, 0.0);
      rec.add(P + ":fused", P + ".fused", prim::where(prim::cmpne(relu, 0.0), relu.sqrt().reciprocal(), prim::maximum(a, b)));
      Tensor m = a.reduce(ReduceOp::MAX, {1});
      rec.add(P + ":fused", P + ".fused",
              prim::add(a, prim::mul(m.expand(kShape), -1.0)).exp2().reduce(ReduceOp::ADD, {1}).log2());
    }
  }
}

// Index bits for an axis of `size` in integer dtype d: mostly in range, some -1 (the largest
// value when unsigned), some one past the end, some anything (the dtype's extremes). Narrow
// dtypes wrap the in-range draws, so they also hold negatives.
Tensor index_tensor(const std::string& key, const Shape& shape, DType d, int64_t size) {
  Rng g(key + "/" + dn(d) + shape_str(shape));
  const uint64_t m = bitwidth(d) == 64 ? ~uint64_t{0} : (uint64_t{1} << bitwidth(d)) - 1;
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<uint64_t> v(static_cast<size_t>(n));
  for (uint64_t& x : v) {
    const uint64_t r = g.next() % 16;
    x = r == 0 ? m : r == 1 ? static_cast<uint64_t>(size) & m : r == 2 ? g.next() & m
                                                                       : (g.next() % static_cast<uint64_t>(size)) & m;
  }
  return tensor_of_bits(v, shape, d);
}

// GATHER (docs/spec.md section 15) in every dtype, with every index dtype: along the long
// axis and the short one, from a contiguous and a transposed x, with an index that is itself a
// transposed view, and with size-1 index axes that stretch (whole rows selected: the row-copy
// path). Its own class: the other classes' lines stay as they were before GATHER existed.
void gather(Recorder& rec) {
  const Shape rows{5, kCols};
  for (DType d : kConcreteDTypes) {
    const std::string key = P + ".GATHER/" + dn(d);
    Tensor x = operand(key, d, 0), xt = operand(key, d, 1);
    for (DType id : {DType::Int8, DType::UInt8, DType::Int16, DType::Int32, DType::Int64, DType::UInt64}) {
      const std::string ik = key + "/" + dn(id);
      Tensor along = index_tensor(ik + "/along", kShape, id, kCols);
      Tensor across = index_tensor(ik + "/across", rows, id, kRows);
      Tensor along_t = index_tensor(ik + "/along_t", {kCols, kRows}, id, kCols).permute({1, 0});
      Tensor whole_rows = index_tensor(ik + "/whole_rows", {5, 1}, id, kRows);
      Tensor one_row = index_tensor(ik + "/one_row", {1, 700}, id, kCols);
      for (const Tensor& src : {x, xt}) {
        rec.add(P + ":index", P + ".GATHER", prim::gather(src, along, 1));
        rec.add(P + ":index", P + ".GATHER", prim::gather(src, along_t, 1));
        rec.add(P + ":index", P + ".GATHER", prim::gather(src, across, 0));
        rec.add(P + ":index", P + ".GATHER", prim::gather(src, whole_rows, 0));
        rec.add(P + ":index", P + ".GATHER", prim::gather(src, one_row, 1));
      }
    }
  }
}

}  // namespace

void run_op_battery(Recorder& rec, bool small) {
  if (small) {
    kCols = 171;
    kShape = {kRows, kCols};
    P = "ops-small";
  }
  rec.track_ops(true);
  elementwise(rec);
  casts_and_where(rec);
  constants(rec);
  reductions(rec);
  movement(rec);
  fused(rec);
  gather(rec);
  rec.track_ops(false);
  // A new op in ops.def fails the battery until a loop above runs it.
  std::string missing;
  for (const OpInfo& info : all_ops())
    if (!rec.saw_op(std::string(info.name))) missing += (missing.empty() ? "" : ", ") + std::string(info.name);
  if (!missing.empty())
    throw std::runtime_error("the op battery (tools/determinism/op_battery.cpp) runs no graph with these ops of "
                             "include/maroon/ops.def: " + missing);
}

}  // namespace maroon::determinism
