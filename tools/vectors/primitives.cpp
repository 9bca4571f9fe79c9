// Every primitive of include/maroon/ops.def in every dtype it accepts and every rounding mode, on
// special values: each elementwise op on all pairs (triples for MULACC) of a dtype's special
// values, CAST and BITCAST between every pair of dtypes, WHERE, REDUCE and REDUCE_MULACC folds
// whose order shows in the bits, and the movement ops.
#include "core/alu.h"
#include "core/ops.h"
#include "float/softfloat.h"
#include "maroon/shuffle.h"
#include "vectors.h"

namespace maroon::vectors {

namespace {

const std::string kFile = "primitives.safetensors";

// SplitMix64 (the shuffle's generator), for the few arbitrary values each list adds.
struct Mix {
  uint64_t s;
  uint64_t next() { return data::splitmix64(s); }
};

// A float format's special values (bits): zeros, subnormals, the smallest normal, values at and
// next to 1, halves and small integers, the largest exactly counted integer, the largest finite
// values, infinities and NaNs (canonical, and one with a sign and payload), then 8 arbitrary
// finite values.
std::vector<uint64_t> float_specials(DType d) {
  const sf::Format f = sf::format_of(d);
  const uint64_t S = f.sign_bit(), one = uint64_t(f.bias()) << f.mbits, two = uint64_t(f.bias() + 1) << f.mbits;
  const uint64_t half_m = uint64_t{1} << (f.mbits - 1);
  std::vector<uint64_t> v = {0,
                             S,
                             1,
                             S | 1,
                             f.man_mask(),
                             uint64_t{1} << f.mbits,
                             S | (uint64_t{1} << f.mbits),
                             uint64_t(f.bias() - 1) << f.mbits,  // 0.5
                             one,
                             S | one,
                             one + 1,
                             one - 1,
                             one | half_m,  // 1.5
                             S | one | half_m,
                             two,
                             two | half_m,                      // 3
                             S | two | (half_m >> 1),           // -2.5
                             (uint64_t(f.bias() + f.mbits) << f.mbits) | f.man_mask(),  // 2^(p+1) - 1
                             sf::max_finite(f, false),
                             sf::max_finite(f, true),
                             sf::infinity(f, false),
                             sf::infinity(f, true),
                             sf::canonical_nan(f),
                             S | (f.exp_mask() << f.mbits) | 1};  // -NaN with payload 1 (signalling)
  Mix m{static_cast<uint64_t>(f.bits) * 1000 + static_cast<uint64_t>(f.mbits)};
  for (int i = 0; i < 8; ++i) {
    uint64_t x = m.next() & (f.bits == 64 ? ~uint64_t{0} : (uint64_t{1} << f.bits) - 1);
    if (((x >> f.mbits) & f.exp_mask()) == f.exp_mask()) x &= ~(uint64_t{1} << (f.bits - 2));  // finite
    v.push_back(x);
  }
  return v;
}

uint64_t mask(int w) { return w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1; }

// An integer dtype's special values: 0, 1, -1, small values, the minimum and maximum and their
// neighbours, shift counts around the width, then 4 arbitrary values.
std::vector<uint64_t> int_specials(DType d) {
  const int w = bitwidth(d);
  const uint64_t M = mask(w);
  std::vector<uint64_t> v;
  if (d == DType::Bool) return {0, 1};
  const uint64_t W = static_cast<uint64_t>(w);
  if (is_unsigned(d)) {
    v = {0, 1, 2, 3, 7, M, M - 1, M >> 1, (M >> 1) + 1, W - 1, W, W + 1, 2 * W};
  } else {
    const uint64_t min = uint64_t{1} << (w - 1);
    v = {0, 1, M, 2, M - 1, 3, 7, (M - 6) & M, min, min + 1, min - 1, min - 2, W - 1, W, W + 1, 2 * W};
  }
  Mix m{static_cast<uint64_t>(w) * 7 + (is_unsigned(d) ? 1 : 0)};
  for (int i = 0; i < 4; ++i) v.push_back(m.next() & M);
  return v;
}

std::vector<uint64_t> specials(DType d) { return is_float(d) ? float_specials(d) : int_specials(d); }

// Values a cast or a function treats specially, as doubles rounded to the dtype: integer-range
// boundaries, ties, overflow thresholds of the narrow formats, and arguments of exp2/log2/sin.
std::vector<uint64_t> extra_values(DType d) {
  const double e[] = {0.25,    0.75,  10,     100,    1e-3,    1e-5,   0.1,    3.141592653589793, 1.5707963267948966,
                      1e4,     127.5, 128,    255,    256,     -0.5,   -127.5, -128.5,            32768,
                      65536,   65504, 65519,  65520,  2147483648.0,    -2147483648.0, 4294967296.0, 9.2233720368547758e18,
                      -9.2233720368547758e18, 1.8446744073709552e19, 1e10,  1e20,  3.4e38, 1e300, 88.7, -103.9,
                      700,     -1074.5, 1024, -1022,  0.3,     0.7,    1.0004882812500596, 1.0039062509313226, 2.5,
                      -3.5,    0.49999999999999994};
  std::vector<uint64_t> v;
  for (double x : e) v.push_back(sf::convert(sf::kF64, sf::format_of(d), sf::bits_of(x), Round::NearestEven));
  return v;
}

// The list a unary op or a cast reads: the specials, then (floats) the extra values; for
// integers also values at float-precision boundaries.
std::vector<uint64_t> unary_list(DType d) {
  std::vector<uint64_t> v = specials(d);
  if (is_float(d)) {
    for (uint64_t x : extra_values(d)) v.push_back(x);
  } else if (d != DType::Bool) {
    for (uint64_t x : {uint64_t{100}, uint64_t{127}, uint64_t{128}, uint64_t{255}, uint64_t{256},
                       uint64_t{2049}, (uint64_t{1} << 24) + 1, (uint64_t{1} << 53) + 1, ~uint64_t{128}})
      v.push_back(x & mask(bitwidth(d)));
  }
  return v;
}

struct Operand {
  std::string ref;  // "file:name" in the book
  Tensor t;
};

struct Inputs {
  Operand x, a, b, c, ta, tb, tc;
};

// Stores a dtype's operand lists: x (unary), a/b (every ordered pair), c (WHERE's condition over
// the pairs), ta/tb/tc (every triple of the first 12 specials, for MULACC).
Inputs inputs_for(Book& book, DType d) {
  const std::string p = dn(d) + "/";
  std::vector<uint64_t> u = unary_list(d), s = specials(d);
  std::vector<uint64_t> a, b, c, ta, tb, tc;
  for (uint64_t x : s)
    for (uint64_t y : s) a.push_back(x), b.push_back(y), c.push_back((a.size() * 7) % 3 == 0);
  const size_t k = std::min<size_t>(12, s.size());
  for (size_t i = 0; i < k; ++i)
    for (size_t j = 0; j < k; ++j)
      for (size_t l = 0; l < k; ++l) ta.push_back(s[i]), tb.push_back(s[j]), tc.push_back(s[l]);
  auto put = [&](const std::string& name, const std::vector<uint64_t>& bits, DType dt) {
    Tensor t = from_bits(bits, {static_cast<int64_t>(bits.size())}, dt);
    return Operand{book.input(kFile, name, t), t};
  };
  return Inputs{put(p + "x", u, d),
                put(p + "a", a, d),
                put(p + "b", b, d),
                put("bool/pair_condition_" + std::to_string(a.size()), c, DType::Bool),
                put(p + "ta", ta, d),
                put(p + "tb", tb, d),
                put(p + "tc", tc, d)};
}

void elementwise(Book& book, DType d, const Inputs& in) {
  for (const OpInfo& info : all_ops()) {
    if (info.kind != OpKind::Unary && info.kind != OpKind::Binary && info.kind != OpKind::Compare &&
        info.kind != OpKind::Ternary)
      continue;
    if (info.op == Op::CAST || info.op == Op::BITCAST || !op_accepts(info.op, d)) continue;
    for (Round r : kAllRounds) {
      RoundingScope scope(r);
      Entry e{std::string(info.name) + "/" + dn(d) + "/" + rn(r), std::string(info.name), dn(d), rn(r), "{}", {}, {}};
      std::vector<const Operand*> ops = info.op == Op::WHERE ? std::vector<const Operand*>{&in.c, &in.a, &in.b}
                                        : info.arity == 1   ? std::vector<const Operand*>{&in.x}
                                        : info.arity == 2   ? std::vector<const Operand*>{&in.a, &in.b}
                                                            : std::vector<const Operand*>{&in.ta, &in.tb, &in.tc};
      std::vector<Tensor> xs;
      for (const Operand* o : ops) xs.push_back(o->t), e.inputs.push_back(o->ref);
      Tensor out = alu(info.op, xs);
      e.outputs = {book.output(kFile, out)};
      book.add(e);
    }
  }
}

void casts(Book& book, DType from, const Inputs& in) {
  for (DType to : kConcreteDTypes)
    for (Round r : kAllRounds) {
      RoundingScope scope(r);
      std::string args = "{\"to\": \"" + dn(to) + "\"}";
      book.add({"CAST/" + dn(from) + "/" + dn(to) + "/" + rn(r), "CAST", dn(from), rn(r), args, {in.x.ref},
                {book.output(kFile, in.x.t.cast(to))}});
      if (!op_accepts(Op::BITCAST, from) || to == DType::Bool || itemsize(to) != itemsize(from)) continue;
      book.add({"BITCAST/" + dn(from) + "/" + dn(to) + "/" + rn(r), "BITCAST", dn(from), rn(r), args, {in.x.ref},
                {book.output(kFile, in.x.t.bitcast(to))}});
    }
}

// REDUCE over the columns, the rows and both axes of a (rows, 6) matrix of the unary list, and
// over float sequences whose fold order or start shows: [big, 1, -big, 1], negative zeros, and
// an empty axis.
void reductions(Book& book, DType d, const Inputs& in) {
  const int64_t cols = 6, rows = in.x.t.numel() / cols;
  Tensor m = in.x.t.shrink({{0, rows * cols}}).reshape({rows, cols});
  std::vector<std::pair<std::string, Tensor>> xs = {{dn(d) + "/matrix", m}};
  if (is_float(d)) {
    const sf::Format f = sf::format_of(d);
    const uint64_t big = uint64_t(f.bias() + f.mbits + 2) << f.mbits, one = uint64_t(f.bias()) << f.mbits;
    xs.push_back({dn(d) + "/order", from_bits({big, one, big | f.sign_bit(), one}, {1, 4}, d)});
    xs.push_back({dn(d) + "/negative_zeros", from_bits({f.sign_bit(), f.sign_bit(), f.sign_bit()}, {1, 3}, d)});
    xs.push_back({dn(d) + "/empty", from_bits({}, {2, 0}, d)});
  }
  for (auto& [name, x] : xs) {
    std::string ref = book.input(kFile, name, x);
    for (ReduceOp op : kAllReduceOps)
      for (const std::vector<int64_t>& axes : {std::vector<int64_t>{1}, {0}, {0, 1}})
        for (Round r : kAllRounds) {
          RoundingScope scope(r);
          std::string ax = axes.size() == 2 ? "0,1" : std::to_string(axes[0]);
          book.add({"REDUCE_" + std::string(reduce_op_name(op)) + "/" + name + "/axes" + ax + "/" + rn(r),
                    "REDUCE", dn(d), rn(r),
                    "{\"reduce_op\": \"" + std::string(reduce_op_name(op)) + "\", \"axes\": [" + ax + "]}", {ref},
                    {book.output(kFile, x.reduce(op, axes))}});
        }
  }
}

// REDUCE_MULACC: the (rows, 6) matrix against a row of the specials (broadcast), over axis 1;
// and the spec's example where fusing changes the bits (docs/spec.md section 14).
void fused(Book& book, DType d, const Inputs& in) {
  const int64_t cols = 6, rows = in.x.t.numel() / cols;
  Tensor a = in.x.t.shrink({{0, rows * cols}}).reshape({rows, cols});
  std::vector<uint64_t> s = specials(d);
  Tensor b = from_bits(std::vector<uint64_t>(s.begin() + 8, s.begin() + 14), {1, cols}, d);
  std::string ra = book.input(kFile, dn(d) + "/matrix", a), rb = book.input(kFile, dn(d) + "/fused_row", b);
  const sf::Format f = sf::format_of(d);
  const uint64_t one = uint64_t(f.bias()) << f.mbits, x = one | (uint64_t{1} << (f.mbits / 2));
  Tensor ea = from_bits({f.sign_bit() | one | (uint64_t{1} << (f.mbits / 2 + 1)), x}, {1, 2}, d);
  Tensor eb = from_bits({one, x}, {1, 2}, d);
  std::string rea = book.input(kFile, dn(d) + "/fused_example_a", ea), reb = book.input(kFile, dn(d) + "/fused_example_b", eb);
  for (Round r : kAllRounds) {
    RoundingScope scope(r);
    book.add({"REDUCE_MULACC/" + dn(d) + "/matrix/" + rn(r), "REDUCE_MULACC", dn(d), rn(r), "{\"axes\": [1]}",
              {ra, rb}, {book.output(kFile, prim::fused_reduce(a, b, {1}))}});
    book.add({"REDUCE_MULACC/" + dn(d) + "/example/" + rn(r), "REDUCE_MULACC", dn(d), rn(r), "{\"axes\": [1]}",
              {rea, reb}, {book.output(kFile, prim::fused_reduce(ea, eb, {1}))}});
    book.add({"REDUCE_ADD_MUL/" + dn(d) + "/example/" + rn(r), "REDUCE_ADD(MUL)", dn(d), rn(r), "{\"axes\": [1]}",
              {rea, reb}, {book.output(kFile, (ea * eb).reduce(ReduceOp::ADD, {1}))}});
  }
}

// The movement ops over float32 specials (NaN payloads and -0 pass through unchanged).
void movement(Book& book) {
  std::vector<uint64_t> s = float_specials(DType::Float32);
  Tensor x = from_bits(std::vector<uint64_t>(s.begin(), s.begin() + 24), {2, 3, 4}, DType::Float32);
  Tensor x1 = from_bits(std::vector<uint64_t>(s.begin(), s.begin() + 8), {2, 1, 4}, DType::Float32);
  std::string rx = book.input(kFile, "float32/cube", x), rx1 = book.input(kFile, "float32/cube_column", x1);
  auto add = [&](const std::string& op, const std::string& args, const std::string& in, const Tensor& out) {
    book.add({op + "/float32", op, "float32", "nearest", args, {in}, {book.output(kFile, out)}});
  };
  add("RESHAPE", "{\"shape\": [4, 6]}", rx, x.reshape({4, 6}));
  add("EXPAND", "{\"shape\": [2, 3, 4]}", rx1, x1.expand({2, 3, 4}));
  add("PERMUTE", "{\"order\": [2, 0, 1]}", rx, x.permute({2, 0, 1}));
  add("PAD", "{\"pairs\": [[1, 0], [0, 2], [1, 1]]}", rx, x.pad({{1, 0}, {0, 2}, {1, 1}}));
  add("SHRINK", "{\"pairs\": [[0, 1], [1, 3], [1, 4]]}", rx, x.shrink({{0, 1}, {1, 3}, {1, 4}}));
  add("FLIP", "{\"axes\": [0, 2]}", rx, x.flip({0, 2}));
}

}  // namespace

std::vector<uint64_t> special_values(DType d) { return specials(d); }

void add_primitives(Book& book) {
  for (DType d : kConcreteDTypes) {
    Inputs in = inputs_for(book, d);
    elementwise(book, d, in);
    casts(book, d, in);
    reductions(book, d, in);
    if (is_float(d)) fused(book, d, in);
  }
  movement(book);
}

}  // namespace maroon::vectors
