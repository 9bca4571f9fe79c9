// Operators that are short compositions: block rearrangements (views), OneHot and EyeLike
// (comparisons with arange), TopK (the Tensor API's sort network), Shrink, BitShift, LRN,
// MeanVarianceNormalization (ONNX's function bodies), Compress and NonZero (their data-dependent
// sizes read on the host), and the integer matmul and convolution.
#include "onnx/graph.h"

namespace maroon::onnx {

namespace {

std::vector<Tensor> depth_to_space(const OpCtx& c, bool to_space) {
  const Tensor& x = c.input(0);
  int64_t b = c.attr_i("blocksize", 0);
  if (x.ndim() != 4 || b < 1) c.fail("needs a 4-D input and a positive blocksize");
  int64_t n = x.shape()[0], ch = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  if (!to_space) {
    if (h % b || w % b) c.fail("H and W must be multiples of blocksize");
    return {x.reshape({n, ch, h / b, b, w / b, b}).permute({0, 3, 5, 1, 2, 4}).reshape({n, ch * b * b, h / b, w / b})};
  }
  if (ch % (b * b)) c.fail("C must be a multiple of blocksize squared");
  if (c.attr_s("mode", "DCR") == "CRD")
    return {x.reshape({n, ch / (b * b), b, b, h, w}).permute({0, 1, 4, 2, 5, 3}).reshape({n, ch / (b * b), h * b, w * b})};
  return {x.reshape({n, b, b, ch / (b * b), h, w}).permute({0, 3, 4, 1, 5, 2}).reshape({n, ch / (b * b), h * b, w * b})};
}

std::vector<Tensor> one_hot(const OpCtx& c) {
  Tensor idx = c.input(0).cast(DType::Int64);
  int64_t depth = static_cast<int64_t>(c.scalar(1));
  const Tensor& values = c.input(2);
  if (depth < 1 || values.numel() != 2) c.fail("depth must be positive and values hold [off, on]");
  int64_t axis = c.axis(c.attr_i("axis", -1), idx.ndim() + 1);
  idx = idx.lt(0).where(idx.add(depth), idx);  // out of range: all off, as ONNX says
  Shape s(static_cast<size_t>(idx.ndim() + 1), 1);
  s[axis] = depth;
  Tensor hit = idx.unsqueeze(axis).eq(Tensor::arange(depth, DType::Int64).reshape(s));
  Tensor v = values.reshape({2});
  return {hit.where(v[1], v[0])};
}

std::vector<Tensor> eye_like(const OpCtx& c) {
  const Tensor& x = c.input(0);
  if (x.ndim() != 2) c.fail("needs a 2-D input");
  DType d = c.has_attr("dtype") ? dtype_from_onnx(static_cast<int32_t>(c.attr_i("dtype", 1)), c.node.label()) : x.dtype();
  Tensor rows = Tensor::arange(x.shape()[0], DType::Int64).reshape({-1, 1});
  Tensor cols = Tensor::arange(x.shape()[1], DType::Int64).reshape({1, -1});
  return {cols.sub(rows).eq(c.attr_i("k", 0)).cast(d)};
}

std::vector<Tensor> topk(const OpCtx& c) {
  const Tensor& x = c.input(0);
  int64_t axis = c.axis(c.attr_i("axis", -1), x.ndim());
  std::vector<int64_t> k = c.ints(1);
  if (k.size() != 1 || k[0] < 0 || k[0] > x.shape()[axis]) c.fail("K must be one value in [0, the axis size]");
  if (!c.attr_i("sorted", 1)) c.fail("sorted=0 is refused (the order would be unspecified)");
  auto [v, i] = x.topk(k[0], axis, c.attr_i("largest", 1) != 0);
  return {v, i.cast(DType::Int64)};
}

std::vector<Tensor> shrink(const OpCtx& c) {
  const Tensor& x = c.input(0);
  double l = c.attr_f("lambd", 0.5), b = c.attr_f("bias", 0.0);
  Tensor zero = Tensor::full({}, 0, x.dtype()), bias = Tensor::full({}, b, x.dtype());
  return {x.lt(-l).where(x.add(bias), x.gt(l).where(x.sub(bias), zero))};
}

std::vector<Tensor> bit_shift(const OpCtx& c) {
  const Tensor& x = c.input(0);
  std::string dir = c.attr_s("direction", "");
  if (!is_unsigned(x.dtype())) c.fail("needs unsigned integers");
  if (dir == "LEFT") return {x.lshift(c.input(1))};
  if (dir == "RIGHT") return {x.rshift(c.input(1))};
  c.fail("direction must be LEFT or RIGHT");
}

std::vector<Tensor> lrn(const OpCtx& c) {
  const Tensor& x = c.input(0);
  int64_t size = c.attr_i("size", 0);
  if (x.ndim() < 3 || size < 1) c.fail("needs (N, C, ...) and a positive size");
  std::vector<int64_t> to_last{0}, back{0};
  for (int64_t i = 2; i < x.ndim(); ++i) to_last.push_back(i);
  to_last.push_back(1);
  back.push_back(x.ndim() - 1);
  for (int64_t i = 1; i < x.ndim() - 1; ++i) back.push_back(i);
  Pairs p(x.ndim(), {0, 0});
  p.back() = {(size - 1) / 2, size / 2};  // floor((size-1)/2) before, ceil((size-1)/2) after
  Tensor sq = x.mul(x).permute(to_last).pad(p, "constant", 0).pool({size}, {1}, {1}).sum(-1).permute(back);
  Tensor denom = sq.mul(c.attr_f("alpha", 1e-4) / static_cast<double>(size)).add(c.attr_f("bias", 1.0));
  return {x.div(denom.pow(c.attr_f("beta", 0.75)))};
}

std::vector<Tensor> mvn(const OpCtx& c) {
  const Tensor& x = c.input(0);
  Axis axes(c.attr_ints("axes", {0, 2, 3}));
  Tensor mean = x.mean(axes, true);
  Tensor var = x.mul(x).mean(axes, true).sub(mean.mul(mean));
  return {x.sub(mean).div(var.sqrt().add(1e-9))};
}

std::vector<Tensor> compress(const OpCtx& c) {
  Tensor x = c.input(0);
  const Tensor& cond = c.input(1);
  if (cond.dtype() != DType::Bool || cond.ndim() != 1) c.fail("condition must be a 1-D bool tensor");
  int64_t axis = 0;
  if (c.has_attr("axis")) axis = c.axis(c.attr_i("axis", 0), x.ndim());
  else x = x.reshape({x.numel()});
  std::vector<int64_t> keep;
  std::vector<double> f = cond.tolist();
  for (size_t i = 0; i < f.size(); ++i)
    if (f[i] != 0) {
      if (static_cast<int64_t>(i) >= x.shape()[axis]) c.fail("condition is longer than the axis");
      keep.push_back(static_cast<int64_t>(i));
    }
  std::vector<Index> sel(axis, Index(maroon::slice()));
  Shape out = x.shape();
  out[axis] = static_cast<int64_t>(keep.size());
  if (keep.empty()) return {Tensor::zeros(out, x.dtype())};
  sel.push_back(Index(Tensor::from_vector(keep, {static_cast<int64_t>(keep.size())}, DType::Int64)));
  return {x[sel]};
}

std::vector<Tensor> nonzero(const OpCtx& c) {
  const Tensor& x = c.input(0);
  std::vector<double> v = x.tolist();
  std::vector<int64_t> st = strides_of(x.shape()), hits;
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != 0) hits.push_back(static_cast<int64_t>(i));
  const int64_t r = std::max<int64_t>(x.ndim(), 1), n = static_cast<int64_t>(hits.size());
  std::vector<int64_t> out(static_cast<size_t>(r * n));
  for (int64_t j = 0; j < n; ++j)
    for (int64_t a = 0; a < x.ndim(); ++a) out[a * n + j] = hits[j] / st[a] % x.shape()[a];
  return {Tensor::from_vector(out, {x.ndim() == 0 ? 1 : x.ndim(), n}, DType::Int64)};
}

// A - zero_point in int32; a per-row (A) or per-channel (W) zero point gets its broadcast axis.
Tensor minus_zero_point(const OpCtx& c, size_t i, size_t zp, int64_t axis) {
  Tensor x = c.input(i).cast(DType::Int32);
  if (!c.has(zp)) return x;
  Tensor z = c.input(zp).cast(DType::Int32);
  if (z.ndim() == 1 && z.numel() > 1) {
    Shape s(static_cast<size_t>(x.ndim()), 1);
    s[axis < 0 ? x.ndim() + axis : axis] = -1;
    z = z.reshape(s);
  }
  return x.sub(z);
}

std::vector<Tensor> matmul_integer(const OpCtx& c) {
  return {minus_zero_point(c, 0, 2, -2).matmul(minus_zero_point(c, 1, 3, -1))};
}

std::vector<Tensor> conv_integer(const OpCtx& c) {
  const Tensor& x = c.input(0);
  const Tensor& w = c.input(1);
  if (x.ndim() < 3 || w.ndim() != x.ndim()) c.fail("X and W must both be (N, C, spatial...)");
  std::vector<int64_t> pads = c.attr_ints("pads", std::vector<int64_t>(2 * (x.ndim() - 2), 0)), flat;
  const size_t n = pads.size() / 2;
  for (size_t i = n; i-- > 0;) flat.insert(flat.end(), {pads[i], pads[n + i]});
  // Padding takes the zero point's value (it is zero after the subtraction), as ONNX's reference.
  Tensor xi = minus_zero_point(c, 0, 2, 1), wi = minus_zero_point(c, 1, 3, 0);
  return {xi.conv2d(wi, std::nullopt, c.attr_i("group", 1), c.attr_ints("strides", {1}), c.attr_ints("dilations", {1}),
                    flat)};
}

}  // namespace

void add_misc_ops(OpTable& t) {
  t["DepthToSpace"] = [](const OpCtx& c) { return depth_to_space(c, true); };
  t["SpaceToDepth"] = [](const OpCtx& c) { return depth_to_space(c, false); };
  t["OneHot"] = one_hot;
  t["EyeLike"] = eye_like;
  t["TopK"] = topk;
  t["Shrink"] = shrink;
  t["BitShift"] = bit_shift;
  t["LRN"] = lrn;
  t["MeanVarianceNormalization"] = mvn;
  t["Compress"] = compress;
  t["NonZero"] = nonzero;
  t["MatMulInteger"] = matmul_integer;
  t["ConvInteger"] = conv_integer;
}

}  // namespace maroon::onnx
