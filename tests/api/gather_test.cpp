// Tensor indexing, gather and nn::Embedding through GATHER (docs/spec.md §15), against the
// one-hot formulation they replaced (tinygrad's recipe, written out here): the same forward bits
// except a chosen −0 (and NaN payloads), the same gradient bits always, one GATHER in the graph.
#include <gtest/gtest.h>

#include <cstring>
#include <unordered_set>

#include "core/graph.h"
#include "maroon/nn.h"
#include "maroon/primitives.h"
#include "util.h"

namespace maroon::apitest {
namespace {

// tinygrad's x[idx] for one index tensor at axis d: a one-hot mask over the candidates, a sum.
Tensor onehot_take(const Tensor& x, const Tensor& idx, int64_t d) {
  Tensor t = idx.lt(0).where(idx + x.shape()[d], idx);
  const Shape& b = t.shape();
  Shape pre(x.shape().begin(), x.shape().begin() + d), ra = pre;
  pre.insert(pre.end(), b.begin(), b.end());
  pre.insert(pre.end(), x.shape().begin() + d, x.shape().end());
  ra.insert(ra.end(), b.size(), 1);
  ra.insert(ra.end(), x.shape().begin() + d, x.shape().end());
  Shape ts = b;
  ts.insert(ts.end(), x.ndim() - d, 1);
  Tensor m = t.reshape(ts).expand_to(pre).one_hot_along_dim(x.shape()[d], d - x.ndim());
  return m.where(x.reshape(ra), 0).sum(Axis(d + static_cast<int64_t>(b.size())), false, x.dtype());
}

// tinygrad's Tensor.gather.
Tensor onehot_gather(const Tensor& x, int64_t dim, const Tensor& index) {
  Shape to;
  for (int64_t d = 0; d < x.ndim(); ++d) to.push_back(d == dim ? -1 : index.shape()[d]);
  Tensor xs = x.shrink_to(to).unsqueeze(-1).transpose(-1, dim);
  return index.unsqueeze(-1).one_hot_along_dim(x.shape()[dim]).where(xs, 0).sum(-1, false, x.dtype());
}

// tinygrad's nn.Embedding.__call__.
Tensor onehot_embedding(const Tensor& w, const Tensor& idx) {
  Tensor ar = Tensor::arange(w.shape()[0]);
  return (ar == idx.unsqueeze(-1)).unsqueeze(-1).where(w, 0).sum(-2, false, w.dtype());
}

int count_op(const Tensor& t, Op op) {
  int c = 0;
  std::unordered_set<const Node*> seen;
  std::vector<const Node*> stack{t.node().get()};
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    c += n->op == op;
    for (const auto& s : n->src) stack.push_back(s.get());
  }
  return c;
}

Tensor ints(const std::vector<int32_t>& v, const Shape& s) { return Tensor::from_vector<int32_t>(v, s); }

// Values of many magnitudes, so that the order of a gradient's sum shows in its bits.
Tensor data(const Shape& s, uint32_t seed, DType d) {
  std::vector<double> v = uniform_values(numel_of(s), -1, 1, seed);
  for (size_t i = 0; i < v.size(); ++i) v[i] *= static_cast<double>(1 << (i % 13));
  return f64(v, s).cast(d);
}

// Forward and gradient bits of `f` and `g` (each a function of x) are the same, for a loss
// sum(y * w) with w of y's shape.
void expect_same(const char* what, const Tensor& x, const std::function<Tensor(const Tensor&)>& f,
                 const std::function<Tensor(const Tensor&)>& g) {
  Tensor yf = f(x), yg = g(x);
  ASSERT_EQ(yf.shape(), yg.shape()) << what;
  EXPECT_EQ(yf.bits(), yg.bits()) << what << ": forward";
  if (!is_float(x.dtype())) return;
  Tensor w = data(yf.shape(), 99, x.dtype());
  Tensor gf = (yf * w).sum().gradient({x})[0], gg = (yg * w).sum().gradient({x})[0];
  EXPECT_EQ(gf.bits(), gg.bits()) << what << ": gradient";
}

TEST(Gather, IndexingGatherAndEmbeddingMatchTheOneHotBits) {
  // Repeated indices (a gradient sums several contributions), negative ones (x[idx] wraps them).
  Tensor rows = ints({3, -1, 0, 3, 5, 3, 1, 0}, {8});
  Tensor grid = ints({1, 1, 2, 0, 2, 1}, {2, 3});
  Tensor cols = ints({3, -1, 0, 3, 2, 3, 1, -4}, {8});
  for (DType d : {DType::Float32, DType::Float16, DType::BFloat16, DType::Float64, DType::Int32, DType::UInt8}) {
    std::string dn(dtype_name(d));
    Tensor x = data({6, 3, 4}, 1, d);
    expect_same(("x[rows] " + dn).c_str(), x, [&](const Tensor& t) { return t[{Index(rows)}]; },
                [&](const Tensor& t) { return onehot_take(t, rows, 0); });
    expect_same(("x[:, grid] " + dn).c_str(), x, [&](const Tensor& t) { return t[{Index(slice()), Index(grid)}]; },
                [&](const Tensor& t) { return onehot_take(t, grid, 1); });
    expect_same(("x[..., cols] " + dn).c_str(), x,
                [&](const Tensor& t) { return t[{Index::ellipsis(), Index(cols)}]; },
                [&](const Tensor& t) { return onehot_take(t, cols, 2); });
    // gather: indices past the end and negative ones select nothing (zeros), as the one-hot does.
    Tensor gi = ints({0, 2, 2, 1, 5, -1, 1, 0, 2, 2, 2, 0}, {2, 3, 2});
    for (int64_t dim : {0, 1, 2})
      expect_same(("gather dim " + std::to_string(dim) + " " + dn).c_str(), x,
                  [&](const Tensor& t) { return t.gather(dim, gi); },
                  [&](const Tensor& t) { return onehot_gather(t, dim, gi); });
  }
  Tensor tokens = ints({4, 0, 4, 9, 2, 4, -1, 10, 7, 0, 1, 4}, {3, 4});
  for (DType d : {DType::Float32, DType::Float16}) {
    nn::Embedding emb(10, 5);
    emb.weight = data({10, 5}, 7, d);
    expect_same(("Embedding " + std::string(dtype_name(d))).c_str(), emb.weight,
                [&](const Tensor& w) { nn::Embedding e(10, 5); e.weight = w; return e(tokens); },
                [&](const Tensor& w) { return onehot_embedding(w, tokens); });
  }
}

TEST(Gather, AChosenNegativeZeroIsCopiedWhereTheOneHotSumGavePlusZero) {
  Tensor x = Tensor::from_vector<float>({1.0f, -0.0f, 2.0f, -0.0f}, {4, 1});
  Tensor i = ints({1, 0, 3, 2}, {4});
  std::vector<uint64_t> now = x[{Index(i)}].bits(), before = onehot_take(x, i, 0).bits();
  EXPECT_EQ(now, (std::vector<uint64_t>{0x80000000, 0x3f800000, 0x80000000, 0x40000000}));
  EXPECT_EQ(before, (std::vector<uint64_t>{0, 0x3f800000, 0, 0x40000000}));
  nn::Embedding e(4, 1);
  e.weight = x;
  EXPECT_EQ(e(i).bits(), now);
  EXPECT_EQ(e(ints({-1, 4}, {2})).bits(), (std::vector<uint64_t>{0, 0}));  // outside [0, V): a zero row
}

TEST(Gather, OneIndexTensorBuildsOneGatherAndNoReduction) {
  Tensor x = Tensor::from_vector<float>(std::vector<float>(60 * 7, 1.0f), {60, 7});
  Tensor y = x[{Index(ints({59, 3, 0}, {3}))}];
  EXPECT_EQ(count_op(y, Op::GATHER), 1);
  EXPECT_EQ(count_op(y, Op::REDUCE), 0);
  EXPECT_EQ(y.shape(), (Shape{3, 7}));
  nn::Embedding e(60, 7);
  EXPECT_EQ(count_op(e(ints({1, 2}, {2})), Op::REDUCE), 0);
  EXPECT_EQ(count_op(x.gather(1, ints({6, 0}, {2, 1})), Op::REDUCE), 0);
}

TEST(Gather, BadIndicesAreNamedErrors) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2});
  EXPECT_THROW(prim::gather(x, x, 0), DTypeError);
  EXPECT_THROW(prim::gather(x, ints({0}, {1}), 0), ShapeError);      // rank
  EXPECT_THROW(prim::gather(x, ints({0, 0, 0}, {1, 3}), 0), ShapeError);  // off-axis size
  EXPECT_THROW(prim::gather(x, ints({0, 0}, {2, 1}), 2), IndexError);
  EXPECT_THROW(x.gather(0, x), DTypeError);
  try {
    prim::gather(x, x, 0);
  } catch (const DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("[gather]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace maroon::apitest
