// Programs of chain ops run as accumulator machines (cpu/kernel.h: Program::acc; fastops.h:
// AccStep): bits against the reference executor on every SIMD target and 1, 2 and 3 threads
// (harness.h), each case checked to have run an accumulator program, and the cases whose leaves
// all lie in place or are broadcast to have run whole tiles at once. Operands hold random bits
// (NaN payloads, infinities, signed zeros, subnormals); values are read again from slots; leaves
// are read in place, broadcast, staged through views and from other kernels' values.
#include <gtest/gtest.h>

#include "harness.h"
#include "cpu/kernel.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

constexpr DType kAccDtypes[] = {DType::Float32, DType::Float64};

void check_acc(const std::string& what, const std::function<Tensor()>& build) {
  check_path(what, build, [] { return cpu::acc_runs(); }, "run an accumulator program");
}
// ... and whole tiles with the leaves read in place (shapes of more than a tile plus slack).
void check_acc_in_place(const std::string& what, const std::function<Tensor()>& build) {
  check_path(what, build, [] { return cpu::acc_range_runs(); }, "run tiles in place");
  check_acc(what, build);
}

// One element, a partial vector, tiles with a partial last one, several tasks of tiles.
const Shape kSmall[] = {{1}, {7, 13}, {3, 300}};
const Shape kLarge[] = {{3, 24001}, {512, 100}};

Tensor scalar_of(const Shape& s, DType d, uint64_t seed) {
  return random_bits_tensor({1}, d, seed).reshape(Shape(s.size(), 1)).expand(s);
}

// optim.cpp's Adam: m, v and the parameter's kernels.
Tensor adam_m(const Shape& s, DType d) {
  Tensor m = random_bits_tensor(s, d, 1), g = random_bits_tensor(s, d, 2);
  return prim::add(prim::mul(0.9, m), prim::mul(0.1, g));
}
Tensor adam_v(const Shape& s, DType d) {
  Tensor v = random_bits_tensor(s, d, 3), g = random_bits_tensor(s, d, 2);
  return prim::add(prim::mul(0.999, v), prim::mul(0.001, prim::mul(g, g)));
}
Tensor adam_update(const Shape& s, DType d) {
  Tensor t = random_bits_tensor(s, d, 4), m = random_bits_tensor(s, d, 5), v = random_bits_tensor(s, d, 6);
  Tensor up = prim::mul(prim::mul(m, scalar_of(s, d, 7)),
                        prim::reciprocal(prim::add(prim::sqrt(prim::mul(v, scalar_of(s, d, 8))), 1e-8)));
  up = prim::add(up, prim::mul(0.0, t));
  return prim::add(t, prim::mul(prim::mul(up, scalar_of(s, d, 9)), -1.0));
}

TEST(CpuAccEval, AdamKernels) {
  for (DType d : kAccDtypes) {
    const std::string dn(dtype_name(d));
    for (const Shape& s : kSmall) {
      check_acc("adam m " + dn + " " + shape_str(s), [&] { return adam_m(s, d); });
      check_acc("adam v " + dn + " " + shape_str(s), [&] { return adam_v(s, d); });
      check_acc("adam update " + dn + " " + shape_str(s), [&] { return adam_update(s, d); });
    }
    for (const Shape& s : kLarge) {
      check_acc_in_place("adam m " + dn + " " + shape_str(s), [&] { return adam_m(s, d); });
      check_acc_in_place("adam v " + dn + " " + shape_str(s), [&] { return adam_v(s, d); });
      check_acc_in_place("adam update " + dn + " " + shape_str(s), [&] { return adam_update(s, d); });
    }
  }
}

// Values read more than once wait in slots: read by a later step, twice by one step (x + x,
// max(x, x), x * x), by several steps far apart, and from a leaf read by several steps.
Tensor slots_program(const Shape& s, DType d, uint64_t seed) {
  Tensor a = random_bits_tensor(s, d, seed), b = random_bits_tensor(s, d, seed + 1);
  Tensor c = near_one_tensor(d, s, seed + 2, true);
  Tensor h = prim::mul(a, b);                        // read four times below
  Tensor x = prim::add(h, c);
  Tensor y = prim::add(x, x);                        // the running value as both operands
  Tensor z = prim::maximum(prim::sqrt(h), prim::maximum(y, y));
  Tensor w = prim::mul(prim::reciprocal(z), h);
  Tensor q = prim::mul(prim::add(w, w), prim::mul(h, h));
  return prim::add(prim::mul(q, a), prim::maximum(x, c));  // x and leaves read again at the end
}

// Near one with specials: the steps' results mostly finite and rounded.
Tensor near_one_program(const Shape& s, DType d, uint64_t seed) {
  Tensor a = near_one_tensor(d, s, seed), b = near_one_tensor(d, s, seed + 1, true);
  Tensor h = prim::add(prim::mul(a, 0.25), b);
  return prim::add(prim::mul(prim::sqrt(prim::maximum(h, a)), h), prim::reciprocal(prim::add(h, 3.0)));
}

TEST(CpuAccEval, SlotsAndOperands) {
  for (DType d : kAccDtypes) {
    const std::string dn(dtype_name(d));
    for (const Shape& s : kSmall) {
      check_acc("slots " + dn + " " + shape_str(s), [&] { return slots_program(s, d, 11); });
      check_acc("near one " + dn + " " + shape_str(s), [&] { return near_one_program(s, d, 21); });
    }
    for (const Shape& s : kLarge) {
      check_acc_in_place("slots " + dn + " " + shape_str(s), [&] { return slots_program(s, d, 11); });
      check_acc_in_place("near one " + dn + " " + shape_str(s), [&] { return near_one_program(s, d, 21); });
    }
    // A broadcast scalar first (LoadS) and as every kind of operand.
    check_acc_in_place("scalars " + dn, [&] {
      const Shape s{3, 24001};
      Tensor a = random_bits_tensor(s, d, 31), k = scalar_of(s, d, 32);
      Tensor h = prim::maximum(prim::add(prim::mul(k, k), a), k);
      return prim::mul(prim::add(k, h), prim::sqrt(k));
    });
  }
}

// More computed values alive at once than there are slots: the program keeps its segments, the
// same bits. p0 + (p1 + (p2 + ...)) of products: the program computes every product first (its
// post order), so all but the last wait for the sums.
TEST(CpuAccEval, TooManySlotsFallsBack) {
  for (DType d : kAccDtypes) {
    const Shape s{3, 300};
    auto build = [&] {
      std::vector<Tensor> p;
      for (int i = 0; i < cpu::kAccSlots + 2; ++i)
        p.push_back(prim::mul(random_bits_tensor(s, d, 41 + i), random_bits_tensor(s, d, 51 + i)));
      Tensor r = p.back();
      for (size_t i = p.size() - 1; i-- > 0;) r = prim::add(p[i], r);
      return r;
    };
    const int64_t before = cpu::acc_runs();
    check("too many slots " + std::string(dtype_name(d)), build);
    EXPECT_EQ(cpu::acc_runs(), before) << "an accumulator program with more live values than slots";
  }
}

TEST(CpuAccEval, LeavesThroughViews) {
  for (DType d : kAccDtypes) {
    const std::string dn(dtype_name(d));
    // Permuted, padded and broadcast leaves are staged into tiles first.
    check_acc("permuted and padded " + dn, [&] {
      Tensor a = random_bits_tensor({300, 7}, d, 61).permute({1, 0});
      Tensor b = random_bits_tensor({5, 298}, d, 62).pad({{1, 1}, {2, 0}});
      Tensor c = random_bits_tensor({7, 1}, d, 63).expand({7, 300});
      return prim::mul(prim::add(prim::mul(a, b), c), prim::sqrt(c));
    });
    // Over a reduction's result read through a broadcast (a mean subtracted, squared).
    check_acc("after a reduction " + dn, [&] {
      Tensor a = random_bits_tensor({9, 2600}, d, 64);
      Tensor m = a.reduce(ReduceOp::ADD, {1}).expand({9, 2600});
      Tensor c = prim::add(a, prim::mul(m, -1.0));
      return prim::mul(c, c);
    });
    // A leaf that is a slice of a larger buffer: contiguous in shape only, read through a view.
    check_acc("sliced leaf " + dn, [&] {
      Tensor a = random_bits_tensor({40, 700}, d, 65).shrink({{1, 39}, {0, 700}});
      Tensor b = random_bits_tensor({38, 700}, d, 66);
      return prim::add(prim::mul(a, b), prim::sqrt(b));
    });
  }
}

// EXP2 as a step (float32, rounded to nearest): integers, tiny |x|, subnormal and underflowing
// results, overflow, NaN payloads, infinities.
TEST(CpuAccEval, Exp2Steps) {
  for (const Shape& s : kSmall)
    check_acc("exp2 " + shape_str(s), [&] {
      Tensor a = near_one_tensor(DType::Float32, s, 71, true), b = random_bits_tensor(s, DType::Float32, 72);
      Tensor e = prim::exp2(prim::mul(a, 160.0));
      return prim::add(prim::mul(e, prim::exp2(b)), e);
    });
  check_acc_in_place("exp2 in place", [&] {
    const Shape s{3, 24001};
    Tensor a = near_one_tensor(DType::Float32, s, 73, true);
    return prim::mul(prim::exp2(prim::mul(a, 160.0)), a);
  });
}

// Half the elements special: NaNs with random payloads and signs (a WHERE copies them, bits and
// all), infinities, signed zeros, subnormals; the rest near one.
Tensor specials_tensor(const Shape& s, DType d, uint64_t seed) {
  Gen g(seed);
  const sf::Format f = d == DType::Float32 ? sf::kF32 : sf::kF64;
  std::vector<uint64_t> v = near_one(g, static_cast<size_t>(numel(s)), f);
  for (auto& x : v) {
    const uint64_t sign = g.next() & 1 ? f.sign_bit() : 0;
    switch (g.next() % 10) {
      case 0: case 1: x = sign | (f.exp_mask() << f.mbits) | (1 + g.next() % f.man_mask()); break;
      case 2: x = sign | (f.exp_mask() << f.mbits); break;
      case 3: x = sign; break;
      case 4: x = sign | (1 + g.next() % f.man_mask()); break;
      default: break;
    }
  }
  return tensor_of_bits(v, s, d);
}

// ReLU and its gradient: WHERE over a compare with a scalar, the value picked from a leaf (its
// NaN payloads kept) or from a computed value (made canonical).
Tensor relu_program(const Shape& s, DType d, uint64_t seed) {
  Tensor x = specials_tensor(s, d, seed), g = specials_tensor(s, d, seed + 1);
  Tensor r = prim::where(prim::cmplt(prim::add(prim::mul(x, 0.0), 0.0), x), x, 0.0);  // (0 < x) ? x : 0
  Tensor back = prim::where(prim::cmplt(prim::add(prim::mul(x, 0.0), 0.0), r), g, 0.0);             // relu's gradient
  return prim::add(back, prim::where(prim::cmplt(x, g), prim::mul(x, g), r));
}

// Abramowitz-Stegun erf as tinygrad writes it for GELU: sign by compares and WHERE, a polynomial
// in 1 / (1 + p|x|), EXP2 of -x^2 log2(e).
Tensor erf_program(const Shape& s, DType d, uint64_t seed) {
  Tensor x = prim::mul(specials_tensor(s, d, seed), 3.0);
  Tensor neg = prim::cmplt(x, prim::mul(x, 0.0));
  Tensor ax = prim::where(neg, prim::mul(x, -1.0), x);
  Tensor t = prim::reciprocal(prim::add(prim::mul(ax, 0.3275911), 1.0));
  Tensor poly = prim::mul(t, prim::add(prim::mul(t, prim::add(prim::mul(t, 1.421413741), -0.284496736)), 0.254829592));
  Tensor e = d == DType::Float32 ? prim::exp2(prim::mul(prim::mul(ax, ax), -1.4426950408889634)) : prim::sqrt(ax);
  Tensor y = prim::add(prim::mul(prim::mul(poly, e), -1.0), 1.0);
  return prim::where(neg, prim::mul(y, -1.0), y);
}

// The other step kinds: CMPNE (true on NaN), CMPLT with the running value second, x < x, a mask
// read by two WHEREs far apart (a slot), the WHERE's value operands in every place (running value,
// slot, leaf, scalar), a WHERE of WHEREs, and bool leaves read in place and broadcast.
Tensor mask_program(const Shape& s, DType d, uint64_t seed) {
  Tensor a = specials_tensor(s, d, seed), b = specials_tensor(s, d, seed + 1);
  Tensor c = random_bits_tensor(s, DType::Bool, seed + 2);
  Tensor k = random_bits_tensor({1}, DType::Bool, seed + 3).reshape(Shape(s.size(), 1)).expand(s);
  Tensor h = prim::add(a, b);
  Tensor ne = prim::cmpne(h, b);                       // read by two WHEREs
  Tensor w1 = prim::where(ne, a, h);                   // h running, a a leaf
  Tensor gt = prim::cmplt(prim::mul(b, b), w1);        // w1 running, the other operand first
  Tensor w2 = prim::where(gt, w1, prim::sqrt(h));      // b's square root running: SelN over w1
  Tensor w3 = prim::where(c, w2, b);                   // a bool leaf in place
  Tensor w4 = prim::where(k, scalar_of(s, d, seed + 4), w3);  // a broadcast bool and value
  Tensor w5 = prim::where(ne, w4, w4);                  // the same value twice
  Tensor self = prim::cmplt(w5, w5);                    // never true
  Tensor w6 = prim::where(self, a, prim::where(prim::cmpne(w5, w5), w1, w5));
  Tensor lt = prim::cmplt(b, prim::mul(w6, 2.0));        // a leaf < the running value
  Tensor ks = prim::cmplt(scalar_of(s, d, seed + 5), prim::sqrt(w6));  // a scalar < it
  Tensor p = prim::mul(w6, a);
  Tensor back = prim::cmplt(p, prim::add(p, 1.0));      // a slot < the running value
  return prim::where(lt, prim::where(ks, b, w6), prim::where(back, 1.5, p));
}

TEST(CpuAccEval, CompareAndWhereSteps) {
  for (DType d : kAccDtypes) {
    const std::string dn(dtype_name(d));
    for (const Shape& s : kSmall) {
      check_acc("relu " + dn + " " + shape_str(s), [&] { return relu_program(s, d, 81); });
      check_acc("erf " + dn + " " + shape_str(s), [&] { return erf_program(s, d, 83); });
      check_acc("masks " + dn + " " + shape_str(s), [&] { return mask_program(s, d, 85); });
    }
    for (const Shape& s : kLarge) {
      check_acc_in_place("relu " + dn + " " + shape_str(s), [&] { return relu_program(s, d, 81); });
      check_acc_in_place("erf " + dn + " " + shape_str(s), [&] { return erf_program(s, d, 83); });
      check_acc_in_place("masks " + dn + " " + shape_str(s), [&] { return mask_program(s, d, 85); });
    }
    // A WHERE last, copying a leaf's NaN payloads to the output: no Canon after it.
    check_acc_in_place("where last " + dn, [&] {
      const Shape s{3, 24001};
      Tensor a = specials_tensor(s, d, 91), b = specials_tensor(s, d, 92);
      return prim::where(prim::cmplt(prim::mul(a, 2.0), b), a, b);
    });
  }
}

}  // namespace
}  // namespace maroon::test
