// Integer primitives on random operands against an independent model: the mathematical result
// computed in 128-bit integers, then wrapped to the dtype's width.
#include <gtest/gtest.h>

#include "core/alu.h"
#include "util.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

// The model needs a signed 128-bit integer: 32-bit x86 has none, so there the model's test is
// compiled out and says so (the determinism matrix checks i686's integer ops against x86-64's
// bits instead: docs/determinism.md).
#if defined(__SIZEOF_INT128__)
using i128 = __int128;
using u128 = unsigned __int128;

i128 value(DType d, uint64_t bits) {  // the integer the bits stand for
  const int w = bitwidth(d);
  bits &= width_mask(w);
  if (is_unsigned(d)) return static_cast<i128>(bits);
  if (bits >> (w - 1)) return static_cast<i128>(bits) - (static_cast<i128>(1) << w);
  return static_cast<i128>(bits);
}

uint64_t wrap(DType d, i128 v) { return static_cast<uint64_t>(static_cast<u128>(v)) & width_mask(bitwidth(d)); }

i128 floor_div(i128 a, i128 b) {
  i128 q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

uint64_t model(Op op, DType d, uint64_t x, uint64_t y, uint64_t z) {
  const i128 a = value(d, x), b = value(d, y), c = value(d, z);
  const int w = bitwidth(d);
  const bool shift_out = b < 0 || b >= w;
  switch (op) {
    case Op::ADD: return wrap(d, a + b);
    case Op::MUL: return wrap(d, static_cast<i128>(static_cast<u128>(a) * static_cast<u128>(b)));
    case Op::MAX: return wrap(d, a > b ? a : b);
    case Op::CMPLT: return a < b;
    case Op::CMPNE: return a != b;
    case Op::CMPEQ: return a == b;
    case Op::AND: return wrap(d, a & b);
    case Op::OR: return wrap(d, a | b);
    case Op::XOR: return wrap(d, a ^ b);
    case Op::SHL: return shift_out ? 0 : wrap(d, static_cast<i128>(static_cast<u128>(a) << static_cast<int>(b)));
    case Op::SHR: return shift_out ? wrap(d, a < 0 ? -1 : 0) : wrap(d, floor_div(a, static_cast<i128>(1) << static_cast<int>(b)));
    case Op::CDIV: return b == 0 ? wrap(d, -1) : wrap(d, a / b);
    case Op::CMOD: return b == 0 ? wrap(d, a) : wrap(d, a % b);
    case Op::FLOORDIV: return b == 0 ? wrap(d, -1) : wrap(d, floor_div(a, b));
    case Op::FLOORMOD: return b == 0 ? wrap(d, a) : wrap(d, a - floor_div(a, b) * b);
    case Op::MULACC: return wrap(d, static_cast<i128>(static_cast<u128>(a) * static_cast<u128>(b)) + c);
    default: ADD_FAILURE() << "no model for " << op_name(op); return 0;
  }
}

Tensor apply(Op op, const Tensor& a, const Tensor& b, const Tensor& c) {
  std::vector<Tensor> x{a, b, c};
  x.erase(x.begin() + op_info(op).arity, x.end());
  return alu(op, x);
}

TEST(IntOps, RandomOperandsMatchTheWideIntegerModel) {
  Gen g(20261129);
  constexpr int kN = 3000;
  int ops_checked = 0;
  for (const OpInfo& info : all_ops()) {
    if (info.kind != OpKind::Binary && info.kind != OpKind::Compare && info.op != Op::MULACC) continue;
    for (DType d : kIntDTypes) {
      if (!op_accepts(info.op, d)) continue;
      std::vector<uint64_t> x(kN), y(kN), z(kN);
      for (int i = 0; i < kN; ++i) { x[i] = g.bits(d); y[i] = g.bits(d); z[i] = g.bits(d); }
      Tensor out = apply(info.op, tensor_of_bits(x, {kN}, d), tensor_of_bits(y, {kN}, d),
                         tensor_of_bits(z, {kN}, d));
      std::vector<uint64_t> got = out.bits();
      int bad = 0;
      for (int i = 0; i < kN && bad < 5; ++i) {
        uint64_t want = model(info.op, d, x[i], y[i], z[i]);
        if (got[i] != want) {
          ++bad;
          ADD_FAILURE() << info.name << " " << dtype_name(d) << " (" << hex(x[i]) << ", " << hex(y[i])
                        << ", " << hex(z[i]) << "): got " << hex(got[i]) << ", want " << hex(want);
        }
      }
      ++ops_checked;
    }
  }
  EXPECT_EQ(ops_checked, 16 * 8);  // 15 binary/compare integer ops and MULACC on 8 dtypes
}

TEST(IntOps, IntegerCastsWrapAndExtend) {
  Gen g(7);
  for (DType from : kIntDTypes) {
    for (DType to : kIntDTypes) {
      std::vector<uint64_t> x(500);
      for (auto& v : x) v = g.bits(from);
      std::vector<uint64_t> got = tensor_of_bits(x, {500}, from).cast(to).bits();
      for (size_t i = 0; i < x.size(); ++i)
        ASSERT_EQ(got[i], wrap(to, value(from, x[i])))
            << dtype_name(from) << " -> " << dtype_name(to) << " of " << hex(x[i]);
    }
  }
}

#else
TEST(IntOps, TheWideIntegerModelNeedsA128BitType) {
  GTEST_SKIP() << "no 128-bit integer type on this target for the model";
}
#endif  // __SIZEOF_INT128__

}  // namespace
}  // namespace maroon::test
