// Movement ops against explicit index arithmetic: a naive model materializes every step with
// loops over indices; the engine must read the same elements through its views, alone and in
// random compositions, without copying the buffer.
#include <gtest/gtest.h>

#include "util.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

// A dense row-major array of element bits: the model.
struct Dense {
  Shape shape;
  std::vector<uint64_t> v;

  int64_t at(const std::vector<int64_t>& idx) const {
    int64_t lin = 0;
    for (size_t i = 0; i < shape.size(); ++i) lin = lin * shape[i] + idx[i];
    return lin;
  }
  template <class F>
  static Dense make(const Shape& s, F value_of_index) {
    Dense d{s, {}};
    std::vector<int64_t> idx(s.size(), 0);
    int64_t n = numel(s);
    for (int64_t k = 0; k < n; ++k) {
      d.v.push_back(value_of_index(idx));
      for (size_t i = s.size(); i-- > 0;) {
        if (++idx[i] < s[i]) break;
        idx[i] = 0;
      }
    }
    return d;
  }
};

Dense m_reshape(const Dense& x, const Shape& s) { return Dense{s, x.v}; }
Dense m_permute(const Dense& x, const std::vector<int64_t>& p) {
  Shape s;
  for (int64_t a : p) s.push_back(x.shape[a]);
  return Dense::make(s, [&](const std::vector<int64_t>& idx) {
    std::vector<int64_t> src(idx.size());
    for (size_t i = 0; i < p.size(); ++i) src[p[i]] = idx[i];
    return x.v[x.at(src)];
  });
}
Dense m_expand(const Dense& x, const Shape& s) {
  return Dense::make(s, [&](const std::vector<int64_t>& idx) {
    std::vector<int64_t> src(idx);
    for (size_t i = 0; i < s.size(); ++i) if (x.shape[i] == 1) src[i] = 0;
    return x.v[x.at(src)];
  });
}
Dense m_pad(const Dense& x, const Pairs& p) {
  Shape s = x.shape;
  for (size_t i = 0; i < s.size(); ++i) s[i] += p[i].first + p[i].second;
  return Dense::make(s, [&](const std::vector<int64_t>& idx) -> uint64_t {
    std::vector<int64_t> src(idx.size());
    for (size_t i = 0; i < idx.size(); ++i) {
      src[i] = idx[i] - p[i].first;
      if (src[i] < 0 || src[i] >= x.shape[i]) return 0;
    }
    return x.v[x.at(src)];
  });
}
Dense m_shrink(const Dense& x, const Pairs& p) {
  Shape s;
  for (auto [b, e] : p) s.push_back(e - b);
  return Dense::make(s, [&](const std::vector<int64_t>& idx) {
    std::vector<int64_t> src(idx.size());
    for (size_t i = 0; i < idx.size(); ++i) src[i] = idx[i] + p[i].first;
    return x.v[x.at(src)];
  });
}
Dense m_flip(const Dense& x, const std::vector<int64_t>& axes) {
  return Dense::make(x.shape, [&](const std::vector<int64_t>& idx) {
    std::vector<int64_t> src(idx);
    for (int64_t a : axes) src[a] = x.shape[a] - 1 - idx[a];
    return x.v[x.at(src)];
  });
}

// One random movement op applied to both the model and the tensor.
void random_step(std::mt19937_64& rng, Op op, Dense& m, Tensor& t) {
  const Shape& s = m.shape;
  const size_t n = s.size();
  auto rnd = [&](int64_t k) { return k <= 0 ? int64_t{0} : static_cast<int64_t>(rng() % k); };
  switch (op) {
    case Op::RESHAPE: {  // split or merge axes, or flatten
      Shape ns;
      int64_t total = numel(s);
      if (rng() % 3 == 0 || n == 0) ns = {total};
      else if (rng() % 2 && n >= 2) {  // merge two neighbours
        size_t i = rnd(n - 1);
        for (size_t k = 0; k < n; ++k) {
          if (k == i) { ns.push_back(s[k] * s[k + 1]); ++k; }
          else ns.push_back(s[k]);
        }
      } else {  // split an axis into (1, d) or (d, 1) or a factorization
        ns = s;
        size_t i = rnd(n);
        int64_t d = s[i];
        int64_t f = 1;
        for (int64_t c = 2; c <= d; ++c) if (d % c == 0) { f = c; break; }
        ns[i] = d / f;
        ns.insert(ns.begin() + i + 1, f);
      }
      m = m_reshape(m, ns);
      t = t.reshape(ns);
      break;
    }
    case Op::PERMUTE: {
      std::vector<int64_t> p(n);
      for (size_t i = 0; i < n; ++i) p[i] = static_cast<int64_t>(i);
      std::shuffle(p.begin(), p.end(), rng);
      m = m_permute(m, p);
      t = t.permute(p);
      break;
    }
    case Op::EXPAND: {  // make an axis 1 first if none is, then grow the size-1 axes
      Shape ns = s;
      bool any = false;
      for (size_t i = 0; i < n; ++i) if (s[i] == 1) { ns[i] = 1 + rnd(3); any = true; }
      if (!any) {
        Shape r = s;
        r.insert(r.begin() + rnd(n + 1), 1);
        m = m_reshape(m, r);
        t = t.reshape(r);
        ns = r;
        for (auto& d : ns) if (d == 1) d = 2;
      }
      m = m_expand(m, ns);
      t = t.expand(ns);
      break;
    }
    case Op::PAD: {
      Pairs p(n);
      for (auto& q : p) q = {rnd(3), rnd(3)};
      m = m_pad(m, p);
      t = t.pad(p);
      break;
    }
    case Op::SHRINK: {
      Pairs p(n);
      for (size_t i = 0; i < n; ++i) {
        int64_t b = rnd(s[i] + 1);
        p[i] = {b, b + rnd(s[i] - b + 1)};
      }
      m = m_shrink(m, p);
      t = t.shrink(p);
      break;
    }
    case Op::FLIP: {
      std::vector<int64_t> axes;
      for (size_t i = 0; i < n; ++i) if (rng() % 2) axes.push_back(static_cast<int64_t>(i));
      m = m_flip(m, axes);
      t = t.flip(axes);
      break;
    }
    case Op::DETACH:  // graph-only markers: identity views
      t = Tensor(make_node(op, t.dtype(), t.shape(), {t.node()}));
      break;
    case Op::CONTIGUOUS_BACKWARD:
      t = Tensor(make_node(op, t.dtype(), t.shape(), {t.node()}));
      break;
    default: FAIL() << "no movement model for " << op_name(op);
  }
}


// batch_axes' promise, checked at every position: index(c) is the batch part plus the inner
// stack's index, or -1 where that is -1. Returns the number of batch axes.
int check_batch_axes(const ShapeTracker& st, const std::string& what) {
  std::vector<int64_t> bs;
  ShapeTracker inner;
  const int k = st.batch_axes(&bs, &inner);
  const Shape& sh = st.shape();
  if (k == 0 || numel(sh) == 0) return k;
  std::vector<int64_t> c(sh.size(), 0);
  for (int64_t p = 0, n = numel(sh); p < n; ++p) {
    int64_t b = 0;
    for (int d = 0; d < k; ++d) b += c[d] * bs[d];
    const int64_t in = inner.index(c.data() + k), want = st.index(c.data());
    EXPECT_EQ(in < 0 ? -1 : b + in, want) << what << " at flat position " << p << " with " << k << " batch axes";
    if ((in < 0 ? -1 : b + in) != want) return k;
    for (size_t d = sh.size(); d-- > 0;) { if (++c[d] < sh[d]) break; c[d] = 0; }
  }
  return k;
}

std::vector<Op> movement_ops() {
  std::vector<Op> ops;
  for (const OpInfo& o : all_ops()) if (o.kind == OpKind::Movement) ops.push_back(o.op);
  return ops;
}

TEST(Movement, EveryMovementOpAloneInEveryDtype) {
  std::mt19937_64 rng(11);
  for (DType d : kConcreteDTypes) {
    Gen g(static_cast<uint64_t>(d));
    for (Op op : movement_ops()) {
      for (int trial = 0; trial < 20; ++trial) {
        Shape s;
        for (int64_t r = 1 + rng() % 3, i = 0; i < r; ++i) s.push_back(1 + rng() % 4);
        Dense m = Dense::make(s, [&](const std::vector<int64_t>&) { return g.bits(d); });
        Tensor base = tensor_of_bits(m.v, s, d), t = base;
        random_step(rng, op, m, t);
        ASSERT_EQ(t.shape(), m.shape) << op_name(op);
        ASSERT_EQ(t.bits(), m.v) << op_name(op) << " " << dtype_name(d);
        EXPECT_TRUE(t.shares_buffer_with(base)) << op_name(op) << " copied its source";
      }
    }
  }
}

TEST(Movement, RandomCompositionsOfViews) {
  std::mt19937_64 rng(12);
  std::vector<Op> ops = movement_ops();
  int nontrivial = 0, batched = 0;
  for (int trial = 0; trial < 400; ++trial) {
    Shape s;
    for (int64_t r = 1 + rng() % 4, i = 0; i < r; ++i) s.push_back(rng() % 5);  // zero sizes too
    int64_t k = 0;
    Dense m = Dense::make(s, [&](const std::vector<int64_t>&) { return static_cast<uint64_t>(++k); });
    Tensor base = tensor_of_bits(m.v, s, DType::Int32), t = base;
    std::string chain;
    for (int step = 0, len = 1 + rng() % 6; step < len; ++step) {
      Op op = ops[rng() % ops.size()];
      chain += std::string(op_name(op)) + " ";
      random_step(rng, op, m, t);
      if (numel(m.shape) > 4096) break;
    }
    ASSERT_EQ(t.shape(), m.shape) << chain;
    ASSERT_EQ(t.bits(), m.v) << chain;
    // A compute op reads through the same views: x + 0 (int32) must not change a thing.
    ASSERT_EQ(prim::add(t, 0).bits(), m.v) << chain;
    EXPECT_TRUE(t.shares_buffer_with(base)) << chain;
    // row_indices walks a row incrementally; it must agree with index() everywhere.
    const ShapeTracker& st = t.node()->view;
    const Shape& sh = st.shape();
    if (!sh.empty() && numel(sh) > 0) {
      std::vector<int64_t> c(sh.size(), 0), row(sh.back());
      do {
        st.row_indices(c.data(), sh.back(), row.data());
        std::vector<int64_t> e = c;
        for (int64_t i = 0; i < sh.back(); ++i) {
          e.back() = i;
          ASSERT_EQ(row[i], st.index(e.data())) << chain << " at row element " << i;
        }
        size_t d = sh.size() - 1;  // next row: odometer over all but the last axis
        while (d-- > 0 && ++c[d] == sh[d]) c[d] = 0;
        if (d == static_cast<size_t>(-1)) break;
      } while (true);
    }
    if (t.node()->view.views().size() > 1) {
      ++nontrivial;
      if (check_batch_axes(t.node()->view, chain) > 0) ++batched;
    }
  }
  std::printf("random compositions: %d of 400 need several views, %d of those have batch axes\n", nontrivial, batched);
  EXPECT_GT(nontrivial, 10);  // some chains needed a second view (reshape after permute/pad)
}

TEST(Movement, ConstantsAndBuffersInEveryDtype) {
  for (DType d : kConcreteDTypes) {
    Tensor c = Tensor::full({2, 3}, 1, d);
    std::vector<uint64_t> want(6, parse(d, d == DType::Bool ? "true" : "1"));
    EXPECT_EQ(c.bits(), want) << dtype_name(d);
    Tensor b = tensor_of_bits({parse(d, "0"), parse(d, "1")}, {2}, d);
    EXPECT_EQ(b.bits(), (std::vector<uint64_t>{parse(d, "0"), parse(d, "1")}));
  }
  // Weak scalars: an int8 tensor times 300 stays int8 and wraps (300 -> 44 first).
  Tensor i8 = Tensor::from_vector<int8_t>({1, 2}, {2});
  Tensor y = prim::mul(i8, 300);
  EXPECT_EQ(y.dtype(), DType::Int8);
  EXPECT_EQ(y.to_vector<int8_t>(), (std::vector<int8_t>{44, 88}));
}

}  // namespace
}  // namespace maroon::test

namespace maroon::test {
namespace {

// tinygrad's pool (conv2d's windows) builds its windows from a repeat, a flatten and a re-split,
// two views deep. Without padding the composition is affine, x[oy*s + ky*d], and the views
// merge into one strided view, which is what lets the matmul kernel read conv2d's operand in
// place. Every window must still read exactly the elements the index arithmetic says.
TEST(Movement, PoolWindowsReadTheRightElementsAndMergeWhenAffine) {
  std::mt19937_64 rng(13);
  int merged = 0, unpadded = 0, batched = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t b = 1 + rng() % 2, c = 1 + rng() % 3, h = 1 + rng() % 9, w = 1 + rng() % 9;
    const int64_t p = trial % 3 == 0 ? rng() % 3 : 0, s = 1 + rng() % 3, dl = 1 + rng() % 2;
    const int64_t kh = 1 + rng() % 4, kw = 1 + rng() % 4;
    if ((kh - 1) * dl + 1 > h + 2 * p || (kw - 1) * dl + 1 > w + 2 * p) continue;
    Shape xs{b, c, h, w};
    int64_t k = 0;
    Dense x = Dense::make(xs, [&](const std::vector<int64_t>&) { return static_cast<uint64_t>(++k); });
    Tensor t = tensor_of_bits(x.v, xs, DType::Int32).pad({{0, 0}, {0, 0}, {p, p}, {p, p}}).pool({kh, kw}, {s, s}, {dl, dl});
    const int64_t oh = (h + 2 * p - (kh - 1) * dl - 1) / s + 1, ow = (w + 2 * p - (kw - 1) * dl - 1) / s + 1;
    Dense want = Dense::make({b, c, oh, ow, kh, kw}, [&](const std::vector<int64_t>& i) -> uint64_t {
      const int64_t iy = i[2] * s + i[4] * dl - p, ix = i[3] * s + i[5] * dl - p;
      if (iy < 0 || iy >= h || ix < 0 || ix >= w) return 0;
      return x.v[x.at({i[0], i[1], iy, ix})];
    });
    ASSERT_EQ(t.shape(), want.shape);
    ASSERT_EQ(t.bits(), want.v) << "pool " << kh << "x" << kw << " stride " << s << " dilation " << dl << " pad " << p;
    const auto& views = t.node()->view.views();
    if (p == 0 && s == 1 && dl == 1) {
      ++unpadded;
      EXPECT_EQ(views.size(), 1u) << "unpadded stride-1 windows are affine: " << kh << "x" << kw << " on " << h << "x" << w;
    }
    if (views.size() == 1) ++merged;
    else if (check_batch_axes(t.node()->view, "pool") >= 2) ++batched;
  }
  EXPECT_GT(batched, 20);  // padded windows keep (batch, channel) as batch axes
  std::printf("pool windows: %d of 300 trials merged into one view (%d unpadded stride-1), %d batched\n", merged,
              unpadded, batched);
  EXPECT_GT(unpadded, 20);
  EXPECT_GT(merged, unpadded);  // strided and dilated windows merge too, where they are affine
}

}  // namespace
}  // namespace maroon::test
