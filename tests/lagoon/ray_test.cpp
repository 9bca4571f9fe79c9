// Rays, jam/cue (with hostile input), Maroon tensors, and the arms Lagoon lacks.
#include <random>

#include "lagoon/lagoon.hpp"
#include "maroon/tensor.h"
#include "util.h"

using namespace lagoon_test;
namespace lg = maroon::lagoon;
using maroon::Tensor;

namespace {

std::vector<uint8_t> u(std::initializer_list<unsigned> b) { return std::vector<uint8_t>(b.begin(), b.end()); }

lg::NounP A(uint64_t v) { return lg::Noun::make_atom(v); }
lg::NounP C(lg::NounP h, lg::NounP t) { return lg::Noun::make_cell(std::move(h), std::move(t)); }

std::vector<uint8_t> jam_of(const lg::NounP& n) { return lg::jam(*n); }
std::vector<uint8_t> le(uint64_t v) {
  std::vector<uint8_t> b(8);
  std::memcpy(b.data(), &v, 8);
  while (!b.empty() && b.back() == 0) b.pop_back();
  return b;
}

// lagoon.md's worked example: the 2x2 f32 ray [[1 2] [3 4]].
ORay example_ray() {
  return make({2, 2}, 5, MAROON_LAGOON_I754, {0x3f800000, 0x40000000, 0x40400000, 0x40800000});
}

int check(const ORay& r) {
  auto c = r.c();
  maroon_lagoon_error err{};
  return maroon_lagoon_check(&c, &err);
}

}  // namespace

// +check: the pin must be the highest set bit, inside element N.
TEST(LagoonRay, CheckFollowsLagoon) {
  ORay r = example_ray();
  EXPECT_EQ(check(r), 0);
  EXPECT_EQ(r.data.size(), 17u);  // four LE floats, then the 0x01 pin byte (lagoon.md)
  ORay no_pin = r;
  no_pin.data.back() = 0;
  EXPECT_EQ(check(no_pin), MAROON_LAGOON_EFORMAT);
  ORay wide_pin = r;  // +check only asks that the top bit lie in element N: 0x101 passes ...
  wide_pin.data.push_back(1);
  EXPECT_EQ(check(wide_pin), 0);
  wide_pin.data.insert(wide_pin.data.end(), {0, 0, 0, 1});  // ... a bit in element N+1 does not
  EXPECT_EQ(check(wide_pin), MAROON_LAGOON_EFORMAT);
  ORay padded = r;
  padded.data.push_back(0);  // trailing zero bytes are not part of the atom
  EXPECT_EQ(check(padded), 0);
  ORay wrong_shape = r;
  wrong_shape.shape = {3, 2};
  EXPECT_EQ(check(wrong_shape), MAROON_LAGOON_EFORMAT);
  ORay huge = r;
  huge.shape = {uint64_t{1} << 40, uint64_t{1} << 40};  // product overflows: refused, not allocated
  EXPECT_EQ(check(huge), MAROON_LAGOON_ENOMEM);
  // Sub-byte bloqs: 4 two-bit elements 0,1,2,3 = 0b11100100, pin at bit 8.
  ORay b1{{4}, 1, MAROON_LAGOON_UINT, u({0xe4, 0x01})};
  EXPECT_EQ(check(b1), 0);
  b1.data = u({0xe4, 0x04});  // top bit 10: element 5
  EXPECT_EQ(check(b1), MAROON_LAGOON_EFORMAT);
}

// jam and cue, against the values Urbit's docs and lagoon.md §7 give.
TEST(LagoonJam, KnownValues) {
  EXPECT_EQ(jam_of(A(0)), le(2));
  EXPECT_EQ(jam_of(A(1)), le(12));
  EXPECT_EQ(jam_of(C(A(1), A(2))), le(4657));
  EXPECT_EQ(jam_of(C(A(1), A(1))), le(817));
  EXPECT_EQ(jam_of(C(A(0), A(19))), le(39689));
  // The 2x2 ray, 225 bits.
  ORay r = example_ray();
  auto c = r.c();
  uint8_t* out = nullptr;
  size_t len = 0;
  maroon_lagoon_error err{};
  ASSERT_EQ(maroon_lagoon_jam(&c, &out, &len, &err), 0) << err.message;
  std::vector<uint8_t> j(out, out + len);
  maroon_lagoon_free(out);
  EXPECT_EQ(hex(j), "0x14080000040400000400000003f80000003005a1a9bb4f406e1a43215");
  maroon_lagoon_result res{};
  ASSERT_EQ(maroon_lagoon_cue(j.data(), j.size(), &res, &err), 0) << err.message;
  EXPECT_EQ(take(res), r);
}

// Backreferences: a repeated cell is always one; a repeated atom only when it is longer than
// the offset. cue(jam(x)) == x for nouns with sharing.
TEST(LagoonJam, BackreferencesRoundTrip) {
  auto big = lg::Noun::make_atom(std::vector<uint8_t>(40, 0xab));
  auto pair = C(A(7), big);
  auto n = C(pair, C(pair, C(big, C(A(7), A(0)))));
  auto j = jam_of(n);
  auto back = lg::cue(j.data(), j.size());
  EXPECT_TRUE(lg::noun_equal(*back, *n));
  // Sharing makes the jam much shorter than writing `big` three times.
  EXPECT_LT(j.size(), 3 * 40u);
  std::mt19937_64 rng(7);
  for (int t = 0; t < 200; ++t) {
    std::vector<lg::NounP> pool{A(0), A(1), A(rng())};
    for (int k = 0; k < 30; ++k) {
      auto& x = pool[rng() % pool.size()];
      auto& y = pool[rng() % pool.size()];
      pool.push_back(rng() % 3 ? C(x, y) : A(rng() % 1000));
    }
    auto root = pool.back();
    auto jj = jam_of(root);
    auto cc = lg::cue(jj.data(), jj.size());
    ASSERT_TRUE(lg::noun_equal(*cc, *root));
    ASSERT_EQ(jam_of(cc), jj);  // canonical: re-jamming gives the same bits
  }
}

// Malformed input is rejected with an error, never a crash or an unbounded allocation.
TEST(LagoonJam, MalformedInputIsRejected) {
  maroon_lagoon_error err{};
  maroon_lagoon_result res{};
  auto cue_rc = [&](const std::vector<uint8_t>& b) { return maroon_lagoon_cue(b.data(), b.size(), &res, &err); };
  EXPECT_EQ(cue_rc({}), MAROON_LAGOON_EFORMAT);            // 0 is not a jam
  EXPECT_EQ(cue_rc(le(0b1111)), MAROON_LAGOON_EFORMAT);    // backreference to offset 0 from offset 0
  EXPECT_EQ(cue_rc(le(0b01)), MAROON_LAGOON_EFORMAT);      // a cell with nothing after it
  // An atom whose length field claims 2^62 bits: refused before allocating.
  std::vector<uint8_t> huge(12, 0);
  huge[0] = 0;          // atom tag 0, then 63 zero bits ...
  huge[8] = 0x80;       // ... a 1 (c = 63), then the length bits run off the end
  EXPECT_EQ(cue_rc(huge), MAROON_LAGOON_EFORMAT);
  // A valid noun that is not a ray: the atom 5, a cell of atoms, a ray with a bad kind or tail.
  EXPECT_EQ(cue_rc(jam_of(A(5))), MAROON_LAGOON_EFORMAT);
  EXPECT_EQ(cue_rc(jam_of(C(A(1), A(2)))), MAROON_LAGOON_EFORMAT);
  ORay r = example_ray();
  auto noun = lg::ray_to_noun(lg::view(lg::Meta{{2, 2}, 5, lg::Kind::I754}, r.data.data(), r.data.size()));
  auto with_kind = [&](const char* kind, lg::NounP tail) {
    std::vector<uint8_t> k(kind, kind + std::strlen(kind));
    auto meta = C(noun->head->head, C(A(5), C(lg::Noun::make_atom(k), tail)));
    return jam_of(C(meta, noun->tail));
  };
  EXPECT_EQ(cue_rc(with_kind("i754", A(0))), 0);
  maroon_lagoon_result_free(&res);
  EXPECT_EQ(cue_rc(with_kind("cplx", A(0))), MAROON_LAGOON_EKIND);
  EXPECT_EQ(cue_rc(with_kind("i754", C(A(1), A(2)))), MAROON_LAGOON_EFORMAT);
  // Data that fails +check (the shape says 2x2, the data holds 3 elements).
  auto short_data = lg::Noun::make_atom(std::vector<uint8_t>(r.data.begin() + 4, r.data.end()));
  EXPECT_EQ(cue_rc(jam_of(C(noun->head, short_data))), MAROON_LAGOON_EFORMAT);
  // Every truncation and every single-bit flip of a valid jam: an error or a valid ray.
  auto good = jam_of(noun);
  for (size_t n = 0; n < good.size(); ++n) {
    std::vector<uint8_t> t(good.begin(), good.begin() + n);
    int rc = cue_rc(t);
    if (rc == 0) maroon_lagoon_result_free(&res);
    EXPECT_TRUE(rc == 0 || rc == MAROON_LAGOON_EFORMAT || rc == MAROON_LAGOON_EKIND) << n;
  }
  for (size_t bit = 0; bit < good.size() * 8; ++bit) {
    auto t = good;
    t[bit / 8] ^= uint8_t(1u << (bit % 8));
    int rc = cue_rc(t);
    if (rc == 0) maroon_lagoon_result_free(&res);
    EXPECT_TRUE(rc == 0 || rc == MAROON_LAGOON_EFORMAT || rc == MAROON_LAGOON_EKIND || rc == MAROON_LAGOON_ENOMEM)
        << bit;
  }
  // Random bytes.
  std::mt19937_64 rng(11);
  for (int t = 0; t < 3000; ++t) {
    std::vector<uint8_t> b(1 + rng() % 40);
    for (auto& x : b) x = uint8_t(rng());
    int rc = cue_rc(b);
    if (rc == 0) maroon_lagoon_result_free(&res);
    EXPECT_NE(rc, MAROON_LAGOON_EINTERNAL) << err.message;
  }
  // Deep nesting does not overflow the stack (cue is iterative): 200000 nested cells.
  lg::NounP deep = A(0);
  for (int i = 0; i < 200000; ++i) deep = C(A(1), deep);
  std::vector<uint8_t> dj = jam_of(deep);  // jam, hashing and destruction are iterative too
  auto back = lg::cue(dj.data(), dj.size());
  int depth = 0;
  for (const lg::Noun* p = back.get(); p->is_cell; p = p->tail.get()) ++depth;
  EXPECT_EQ(depth, 200000);
}

// A ray's elements are a Maroon tensor's buffer: the conversion round-trips bit for bit, and a
// Maroon op on the tensor sees Lagoon's values.
TEST(LagoonTensor, RoundTripAndCompute) {
  ORay r = example_ray();
  auto ref = lg::view(lg::Meta{{2, 2}, 5, lg::Kind::I754}, r.data.data(), r.data.size());
  Tensor t = lg::to_tensor(ref);
  EXPECT_EQ(t.shape(), (maroon::Shape{2, 2}));
  EXPECT_EQ(t.dtype(), maroon::DType::Float32);
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  lg::Ray back = lg::from_tensor(t);
  EXPECT_EQ(back.data, r.data);
  for (auto [bloq, kind, dt] : {std::tuple{3, lg::Kind::Int2, maroon::DType::Int8},
                                {4, lg::Kind::I754, maroon::DType::Float16},
                                {6, lg::Kind::Uint, maroon::DType::UInt64}}) {
    lg::Ray z = lg::iota(lg::Meta{{5}, bloq, lg::Kind::Uint});
    z.meta.kind = kind;
    Tensor tz = lg::to_tensor(z.ref());
    EXPECT_EQ(tz.dtype(), dt);
    EXPECT_EQ(lg::from_tensor(tz).data, z.data);
  }
  lg::Ray q = lg::zeros(lg::Meta{{2}, 7, lg::Kind::I754});
  EXPECT_THROW(lg::to_tensor(q.ref()), lg::Error);  // binary128 has no Maroon dtype
}

// ---- Lagoon's own semantics where they are easy to get wrong ----
TEST(LagoonSemantics, ReductionsAndComparisons) {
  maroon_lagoon_result res{};
  maroon_lagoon_error err{};
  const maroon::u128 NaN = 0x7fc00000, one = 0x3f800000, two = 0x40000000, negz = 0x80000000;
  // max: the accumulator starts at x0 and scans x_{n-1}..x_0 with a strict >: a NaN at x0
  // sticks, an interior NaN is skipped.
  ORay a = make({3}, 5, MAROON_LAGOON_I754, {NaN, two, one});
  auto c = a.c();
  ASSERT_EQ(maroon_lagoon_max(&c, 'z', &res, &err), 0);
  EXPECT_EQ(take(res).at(0), NaN);
  ORay b = make({3}, 5, MAROON_LAGOON_I754, {one, NaN, two});
  c = b.c();
  ASSERT_EQ(maroon_lagoon_max(&c, 'z', &res, &err), 0);
  EXPECT_EQ(take(res).at(0), two);
  uint64_t idx = 99;
  ASSERT_EQ(maroon_lagoon_argmax(&c, &idx, &err), 0);
  EXPECT_EQ(idx, 2u);
  // equ is bit equality: -0 != +0, identical NaN bits are equal; gte is IEEE (-0 >= +0).
  ORay x = make({2}, 5, MAROON_LAGOON_I754, {negz, NaN}), y = make({2}, 5, MAROON_LAGOON_I754, {0, NaN});
  auto cx = x.c(), cy = y.c();
  ASSERT_EQ(maroon_lagoon_equ(&cx, &cy, 'z', &res, &err), 0);
  ORay e = take(res);
  EXPECT_EQ(e.at(0), 0u);
  EXPECT_EQ(e.at(1), one);
  ASSERT_EQ(maroon_lagoon_gte(&cx, &cy, 'z', &res, &err), 0);
  ORay ge = take(res);
  EXPECT_EQ(ge.at(0), one);
  EXPECT_EQ(ge.at(1), 0u);
  // abs keeps -0 (gte -0 0 holds) and flips negatives.
  ORay m = make({2}, 5, MAROON_LAGOON_I754, {negz, 0xbf800000});
  auto cm = m.c();
  ASSERT_EQ(maroon_lagoon_abs(&cm, 'z', &res, &err), 0);
  ORay ab = take(res);
  EXPECT_EQ(ab.at(0), negz);
  EXPECT_EQ(ab.at(1), one);
  // Mismatched metas are an argument error naming the arm.
  ORay w = make({3}, 5, MAROON_LAGOON_I754, {one, one, one});
  auto cw = w.c();
  EXPECT_EQ(maroon_lagoon_add(&cx, &cw, 'z', &res, &err), MAROON_LAGOON_EARG);
  EXPECT_NE(std::string(err.message).find("add"), std::string::npos);
  // range that would never end in Lagoon: an error, not a hang.
  std::vector<uint64_t> s1{1};
  maroon_lagoon_meta m5{s1.data(), 1, 5, MAROON_LAGOON_I754};
  auto zero = le_bytes(0, 4), onev = le_bytes(one, 4), negone = le_bytes(0xbf800000, 4);
  EXPECT_EQ(maroon_lagoon_range(&m5, atom(zero), atom(onev), atom(negone), 'z', 0, &res, &err), MAROON_LAGOON_EDOMAIN);
  EXPECT_EQ(maroon_lagoon_range(&m5, atom(zero), atom(onev), atom(zero), 'z', 0, &res, &err), MAROON_LAGOON_EDOMAIN);
}

// ---- the arms Lagoon lacks ----
namespace {
ORay iota_f32(std::vector<uint64_t> shape) {
  uint64_t n = 1;
  for (auto d : shape) n *= d;
  std::vector<maroon::u128> v(n);
  for (uint64_t i = 0; i < n; ++i) {
    float f = float(i) * 0.5f - 3.0f;
    uint32_t b;
    std::memcpy(&b, &f, 4);
    v[i] = b;
  }
  return make(std::move(shape), 5, MAROON_LAGOON_I754, v);
}
std::vector<uint8_t> elems(const ORay& r) { return std::vector<uint8_t>(r.data.begin(), r.data.end() - 1); }
std::vector<uint8_t> elems(const Tensor& t) { return t.bytes(); }
Tensor as_tensor(const ORay& r) {
  maroon::Shape s(r.shape.begin(), r.shape.end());
  return Tensor::from_bytes(r.data.data(), r.data.size() - 1, s, maroon::DType::Float32);
}
}  // namespace

// Movement arms are bit copies; Maroon's own views must agree.
TEST(LagoonExtra, MovementMatchesMaroonViews) {
  ORay a = iota_f32({2, 3, 4});
  auto c = a.c();
  maroon_lagoon_result res{};
  maroon_lagoon_error err{};
  uint32_t order[] = {2, 0, 1};
  ASSERT_EQ(maroon_lagoon_permute(&c, order, 3, &res, &err), 0) << err.message;
  ORay p = take(res);
  EXPECT_EQ(p.shape, (std::vector<uint64_t>{4, 2, 3}));
  EXPECT_EQ(elems(p), elems(as_tensor(a).permute({2, 0, 1})));
  uint32_t axes[] = {0, 2};
  ASSERT_EQ(maroon_lagoon_flip(&c, axes, 2, &res, &err), 0);
  EXPECT_EQ(elems(take(res)), elems(as_tensor(a).flip({0, 2})));
  uint64_t before[] = {1, 0, 2}, after[] = {0, 1, 1};
  ASSERT_EQ(maroon_lagoon_pad(&c, before, after, 3, &res, &err), 0);
  EXPECT_EQ(elems(take(res)), elems(as_tensor(a).pad({{1, 0}, {0, 1}, {2, 1}})));
  ORay v = iota_f32({3, 1});
  auto cv = v.c();
  uint64_t to[] = {2, 3, 4};
  ASSERT_EQ(maroon_lagoon_broadcast_to(&cv, to, 3, &res, &err), 0);
  EXPECT_EQ(elems(take(res)), elems(as_tensor(v).reshape({1, 3, 1}).expand({2, 3, 4})));
  // Broadcasting arithmetic equals the same arm on explicitly broadcast rays.
  ASSERT_EQ(maroon_lagoon_broadcast_op("mul", &c, &cv, 'u', &res, &err), 0) << err.message;
  ORay bm = take(res);
  ASSERT_EQ(maroon_lagoon_broadcast_to(&cv, to, 3, &res, &err), 0);
  ORay vb = take(res);
  auto cvb = vb.c();
  ASSERT_EQ(maroon_lagoon_mul(&c, &cvb, 'u', &res, &err), 0);
  EXPECT_EQ(take(res), bm);
  EXPECT_EQ(maroon_lagoon_broadcast_op("mul", &c, &c, 'u', &res, &err), 0);
  maroon_lagoon_result_free(&res);
  ORay bad = iota_f32({3, 2});
  auto cb = bad.c();
  EXPECT_EQ(maroon_lagoon_broadcast_op("add", &c, &cb, 'z', &res, &err), MAROON_LAGOON_EARG);
}

// sum along an axis is cumsum's right fold on each line; max along an axis is Lagoon's max.
TEST(LagoonExtra, AxisReductionsMatchWholeRayArms) {
  ORay a = iota_f32({3, 5});
  auto c = a.c();
  maroon_lagoon_result res{};
  maroon_lagoon_error err{};
  for (int rnd : {'n', 'z', 'u', 'd'}) {
    ASSERT_EQ(maroon_lagoon_sum_axis(&c, 1, rnd, &res, &err), 0) << err.message;
    ORay s = take(res);
    ASSERT_EQ(s.shape, (std::vector<uint64_t>{3, 1}));
    ASSERT_EQ(maroon_lagoon_sum_axis(&c, 0, rnd, &res, &err), 0);
    ORay s0 = take(res);
    ASSERT_EQ(s0.shape, (std::vector<uint64_t>{1, 5}));
    for (uint64_t i = 0; i < 3; ++i) {
      uint64_t idx[] = {i};
      ASSERT_EQ(maroon_lagoon_get_row(&c, idx, 1, &res, &err), 0);
      ORay row = take(res);
      auto cr = row.c();
      ASSERT_EQ(maroon_lagoon_cumsum(&cr, rnd, &res, &err), 0);
      EXPECT_EQ(take(res).at(0), s.at(i));
      ASSERT_EQ(maroon_lagoon_max(&cr, rnd, &res, &err), 0);
      ORay mx = take(res);
      ASSERT_EQ(maroon_lagoon_max_axis(&c, 1, &res, &err), 0);
      EXPECT_EQ(take(res).at(i), mx.at(0));
    }
    ASSERT_EQ(maroon_lagoon_transpose(&c, rnd, &res, &err), 0);
    ORay t = take(res);
    auto ct = t.c();
    ASSERT_EQ(maroon_lagoon_sum_axis(&ct, 1, rnd, &res, &err), 0);
    ORay st = take(res);
    for (uint64_t j = 0; j < 5; ++j) EXPECT_EQ(st.at(j), s0.at(j));
  }
}

// conv2d = mmul's left fold over im2col rows: build im2col by hand and compare with mmul.
TEST(LagoonExtra, Conv2dIsMmulOverIm2col) {
  const uint64_t N = 2, Cc = 3, H = 5, W = 4, O = 2, KH = 3, KW = 2;
  const uint32_t stride[2] = {2, 1}, padding[2] = {1, 0};
  ORay x = iota_f32({N, Cc, H, W}), w = iota_f32({O, Cc, KH, KW});
  auto cx = x.c(), cw = w.c();
  maroon_lagoon_result res{};
  maroon_lagoon_error err{};
  for (int rnd : {'n', 'd'}) {
    ASSERT_EQ(maroon_lagoon_conv2d(&cx, &cw, stride, padding, rnd, &res, &err), 0) << err.message;
    ORay y = take(res);
    const uint64_t OH = (H + 2 - KH) / 2 + 1, OW = (W - KW) / 1 + 1, KK = Cc * KH * KW;
    ASSERT_EQ(y.shape, (std::vector<uint64_t>{N, O, OH, OW}));
    // cols: [N*OH*OW, KK]; weights as [KK, O] (transposed [O, KK]).
    std::vector<maroon::u128> cols;
    for (uint64_t n = 0; n < N; ++n)
      for (uint64_t oh = 0; oh < OH; ++oh)
        for (uint64_t ow = 0; ow < OW; ++ow)
          for (uint64_t c = 0; c < Cc; ++c)
            for (uint64_t kh = 0; kh < KH; ++kh)
              for (uint64_t kw = 0; kw < KW; ++kw) {
                int64_t ih = int64_t(oh * 2 + kh) - 1, iw = int64_t(ow + kw);
                bool in = ih >= 0 && ih < int64_t(H) && iw < int64_t(W);
                cols.push_back(in ? x.at(((n * Cc + c) * H + uint64_t(ih)) * W + uint64_t(iw)) : 0);
              }
    ORay cm = make({N * OH * OW, KK}, 5, MAROON_LAGOON_I754, cols);
    ORay wm = make({O, KK}, 5, MAROON_LAGOON_I754, std::vector<maroon::u128>(w.numel()));
    std::memcpy(wm.data.data(), w.data.data(), w.data.size());
    auto cwm = wm.c();
    ASSERT_EQ(maroon_lagoon_transpose(&cwm, rnd, &res, &err), 0);
    ORay wt = take(res);
    auto ccm = cm.c(), cwt = wt.c();
    ASSERT_EQ(maroon_lagoon_mmul(&ccm, &cwt, rnd, &res, &err), 0);
    ORay prod = take(res);
    for (uint64_t n = 0; n < N; ++n)
      for (uint64_t o = 0; o < O; ++o)
        for (uint64_t p = 0; p < OH * OW; ++p)
          ASSERT_EQ(y.at((n * O + o) * OH * OW + p), prod.at((n * OH * OW + p) * O + o));
  }
}

// softmax is Maroon's Tensor::softmax (Lagoon has none): the same bits, through the ray.
TEST(LagoonExtra, SoftmaxIsMaroons) {
  ORay a = iota_f32({2, 6});
  auto c = a.c();
  maroon_lagoon_result res{};
  maroon_lagoon_error err{};
  ASSERT_EQ(maroon_lagoon_softmax(&c, 1, 'n', &res, &err), 0) << err.message;
  ORay s = take(res);
  EXPECT_EQ(s.shape, a.shape);
  EXPECT_EQ(elems(s), elems(as_tensor(a).softmax(1)));
  float row = 0;
  for (int i = 0; i < 6; ++i) {
    float f;
    uint32_t b = uint32_t(s.at(i));
    std::memcpy(&f, &b, 4);
    row += f;
  }
  EXPECT_NEAR(row, 1.0f, 1e-5f);
}

// From Lagoon's later jet-parity suite (lagoon-jet-parity.hoon, quoted in
// shared/reference/lagoon.md §6): range:la [~[1] 5 %i754 ~] [.0 .1] .0.1 under bare %z.
TEST(LagoonSemantics, RangeJetParityVector) {
  std::vector<uint64_t> s1{1};
  maroon_lagoon_meta m{s1.data(), 1, 5, MAROON_LAGOON_I754};
  auto lo = le_bytes(0, 4), hi = le_bytes(0x3f800000, 4), step = le_bytes(0x3dcccccd, 4);  // .0 .1 .0.1
  maroon_lagoon_result res{};
  maroon_lagoon_error err{};
  ASSERT_EQ(maroon_lagoon_range(&m, atom(lo), atom(hi), atom(step), MAROON_LAGOON_RND_DEFAULT, 0, &res, &err), 0)
      << err.message;
  ORay r = take(res);
  EXPECT_EQ(r.shape, std::vector<uint64_t>{11});
  EXPECT_EQ(hex(r.data),
            "0x13f7ffffd3f6666643f4ccccb3f3333323f1999993effffff3ecccccc3e9999993e4ccccd3dcccccd00000000");
}

// Scalar arms fill and divide: 21/7 is exactly 3 (SoftBLAS's reciprocal gave 2.9999998).
TEST(LagoonSemantics, ScalarArmsAreTrueElementwiseOps) {
  ORay a = make({1}, 5, MAROON_LAGOON_I754, {0x41a80000});  // 21
  auto c = a.c();
  auto seven = le_bytes(0x40e00000, 4);
  maroon_lagoon_result res{};
  maroon_lagoon_error err{};
  ASSERT_EQ(maroon_lagoon_div_scalar(&c, atom(seven), 'z', &res, &err), 0);
  EXPECT_EQ(take(res).at(0), 0x40400000u);  // 3.0
  // fill keeps the scalar's low 32 bits, as ++fil does.
  auto wide = le_bytes((maroon::u128)(0x1ull) << 32 | 0x40e00000, 8);
  ASSERT_EQ(maroon_lagoon_div_scalar(&c, atom(wide), 'z', &res, &err), 0);
  EXPECT_EQ(take(res).at(0), 0x40400000u);
}

// jam/cue round-trips rays of every bloq, including sub-byte elements.
TEST(LagoonJam, RaysOfEveryBloqRoundTrip) {
  std::mt19937_64 rng(5);
  for (uint32_t bloq = 0; bloq <= 7; ++bloq)
    for (uint32_t kind : {MAROON_LAGOON_UINT, MAROON_LAGOON_INT2, MAROON_LAGOON_I754}) {
      uint64_t n = 1 + rng() % 20;
      uint64_t bits = n << bloq;
      ORay r{{n}, bloq, kind, std::vector<uint8_t>(bits / 8 + 1, 0)};
      for (auto& b : r.data) b = uint8_t(rng());
      // Clear everything from bit `bits` up, then set the pin.
      for (uint64_t i = bits; i < r.data.size() * 8; ++i) r.data[i / 8] &= uint8_t(~(1u << (i % 8)));
      r.data[bits / 8] |= uint8_t(1u << (bits % 8));
      auto c = r.c();
      uint8_t* out = nullptr;
      size_t len = 0;
      maroon_lagoon_error err{};
      ASSERT_EQ(maroon_lagoon_jam(&c, &out, &len, &err), 0) << err.message;
      maroon_lagoon_result res{};
      ASSERT_EQ(maroon_lagoon_cue(out, len, &res, &err), 0) << err.message;
      maroon_lagoon_free(out);
      ORay back = take(res);
      while (!r.data.empty() && r.data.back() == 0) r.data.pop_back();
      EXPECT_EQ(back, r) << "bloq " << bloq;
    }
}

// Lagoon's max among equal extremes: x_0 if it is one, otherwise the highest index (the reel
// visits x_{n-1} first and replaces only on a strict >). -0 and +0 make the choice visible.
TEST(LagoonSemantics, MaxTiesFollowTheReel) {
  const maroon::u128 pz = 0, nz = 0x80000000, neg1 = 0xbf800000;
  auto max_of = [](std::vector<maroon::u128> v) {
    ORay a = make({v.size()}, 5, MAROON_LAGOON_I754, v);
    auto c = a.c();
    maroon_lagoon_result res{};
    maroon_lagoon_error err{};
    EXPECT_EQ(maroon_lagoon_max(&c, 'z', &res, &err), 0);
    return take(res).at(0);
  };
  EXPECT_EQ(max_of({pz, nz}), pz);          // x_0 is an extreme: it stays
  EXPECT_EQ(max_of({nz, pz}), nz);
  EXPECT_EQ(max_of({neg1, pz, nz}), nz);    // x_2 is visited first and never beaten
  EXPECT_EQ(max_of({neg1, nz, pz}), pz);
}

// ++prod folds from the atom 1 (the gate's default sample `c=_1`), which for %i754 is the
// smallest subnormal rather than 1.0: prod([2.0]) is 2 * 2^-149 = 2^-148. For %uint it is 1.
TEST(LagoonSemantics, ProdStartsFromTheAtomOne) {
  maroon_lagoon_result res{};
  maroon_lagoon_error err{};
  ORay f = make({1}, 5, MAROON_LAGOON_I754, {0x40000000});  // 2.0
  auto cf = f.c();
  ASSERT_EQ(maroon_lagoon_prod(&cf, 'n', &res, &err), 0);
  EXPECT_EQ(take(res).at(0), 0x2u);
  ORay u = make({3}, 5, MAROON_LAGOON_UINT, {2, 3, 7});
  auto cu = u.c();
  ASSERT_EQ(maroon_lagoon_prod(&cu, 'z', &res, &err), 0);
  EXPECT_EQ(take(res).at(0), 42u);
}
