// Shape and movement operators. Movement ops are views in Maroon (no arithmetic, no new bits).
// Shape, Size, Constant, ConstantOfShape and Range make small tensors from host values, and the
// operators that need integers on the host (Reshape's shape, Slice's starts...) read them with
// OpCtx::ints: an exporter's Shape->Gather->Concat->Reshape chain thus folds into host integers
// when the run binds the input shapes.
#include <cmath>

#include "onnx/graph.h"

namespace maroon::onnx {

namespace {

Tensor int64_vector(const std::vector<int64_t>& v) {
  return Tensor::from_vector(v, {static_cast<int64_t>(v.size())}, DType::Int64);
}

// Axes from the attribute (before `input_opset`) or the optional input `i` (from it on).
std::vector<int64_t> axes_arg(const OpCtx& c, size_t i, int64_t input_opset) {
  if (c.opset < input_opset) return c.attr_ints("axes");
  return c.has(i) ? c.ints(i) : std::vector<int64_t>{};
}

std::vector<Tensor> reshape(const OpCtx& c) {
  const Tensor& x = c.input(0);
  std::vector<int64_t> want = c.opset < 5 ? c.attr_ints("shape") : c.ints(1);
  const bool allowzero = c.attr_i("allowzero", 0) != 0;
  int infer = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] == 0 && !allowzero) {
      if (static_cast<int64_t>(i) >= x.ndim()) c.fail("shape " + shape_str(want) + " copies dimension " + std::to_string(i) + " that " + shape_str(x.shape()) + " lacks");
      want[i] = x.shape()[i];
    }
    if (want[i] == -1) ++infer;
    else if (want[i] < 0) c.fail("shape " + shape_str(want) + " has a negative entry");
  }
  if (infer > 1) c.fail("shape " + shape_str(want) + " has more than one -1");
  return {x.reshape(want)};
}

std::vector<Tensor> flatten(const OpCtx& c) {
  const Tensor& x = c.input(0);
  int64_t axis = c.attr_i("axis", 1);
  if (axis < -x.ndim() || axis > x.ndim()) c.fail("axis " + std::to_string(axis) + " is out of range for " + shape_str(x.shape()));
  if (axis < 0) axis += x.ndim();
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < x.ndim(); ++i) (i < axis ? outer : inner) *= x.shape()[i];
  return {x.reshape({outer, inner})};
}

std::vector<Tensor> transpose(const OpCtx& c) {
  const Tensor& x = c.input(0);
  std::vector<int64_t> perm = c.attr_ints("perm");
  if (perm.empty())
    for (int64_t i = x.ndim(); i-- > 0;) perm.push_back(i);
  if (static_cast<int64_t>(perm.size()) != x.ndim()) c.fail("perm " + shape_str(perm) + " does not match " + shape_str(x.shape()));
  return {x.permute(perm)};
}

std::vector<Tensor> squeeze(const OpCtx& c) {
  const Tensor& x = c.input(0);
  std::vector<int64_t> axes = axes_arg(c, 1, 13);
  std::vector<bool> drop(x.ndim(), axes.empty());
  for (int64_t a : axes) {
    a = c.axis(a, x.ndim());
    if (x.shape()[a] != 1) c.fail("axis " + std::to_string(a) + " of " + shape_str(x.shape()) + " is not 1");
    drop[a] = true;
  }
  Shape out;
  for (int64_t i = 0; i < x.ndim(); ++i)
    if (!(drop[i] && x.shape()[i] == 1)) out.push_back(x.shape()[i]);
  return {x.reshape(out)};
}

std::vector<Tensor> unsqueeze(const OpCtx& c) {
  const Tensor& x = c.input(0);
  std::vector<int64_t> axes = axes_arg(c, 1, 13);
  const int64_t rank = x.ndim() + static_cast<int64_t>(axes.size());
  std::vector<bool> fresh(rank, false);
  for (int64_t a : axes) {
    a = c.axis(a, rank);
    if (fresh[a]) c.fail("axis " + std::to_string(a) + " is repeated");
    fresh[a] = true;
  }
  Shape out;
  size_t j = 0;
  for (int64_t i = 0; i < rank; ++i) out.push_back(fresh[i] ? 1 : x.shape()[j++]);
  return {x.reshape(out)};
}

std::vector<Tensor> shape(const OpCtx& c) {
  const Shape& s = c.input(0).shape();
  int64_t r = static_cast<int64_t>(s.size());
  int64_t start = c.attr_i("start", 0), end = c.attr_i("end", r);
  start = std::clamp<int64_t>(start < 0 ? start + r : start, 0, r);
  end = std::clamp<int64_t>(end < 0 ? end + r : end, 0, r);
  return {int64_vector(std::vector<int64_t>(s.begin() + start, s.begin() + std::max(start, end)))};
}

std::vector<Tensor> concat(const OpCtx& c) {
  if (!c.has_attr("axis")) c.fail("attribute 'axis' is required");
  std::vector<Tensor> xs;
  for (size_t i = 0; i < c.count(); ++i) xs.push_back(c.input(i));
  if (xs.empty()) c.fail("needs at least one input");
  return {Tensor::cat_all(xs, c.axis(c.attr_i("axis", 0), xs[0].ndim()))};
}

std::vector<Tensor> split(const OpCtx& c) {
  const Tensor& x = c.input(0);
  int64_t axis = c.axis(c.attr_i("axis", 0), x.ndim());
  std::vector<int64_t> sizes = c.opset < 13 ? c.attr_ints("split") : (c.has(1) ? c.ints(1) : std::vector<int64_t>{});
  if (sizes.empty()) {
    int64_t n = c.has_attr("num_outputs") ? c.attr_i("num_outputs", 1) : static_cast<int64_t>(c.node.outputs.size());
    if (n < 1) c.fail("needs at least one output");
    int64_t len = x.shape()[axis], each = (len + n - 1) / n;
    for (int64_t i = 0; i < n; ++i) sizes.push_back(std::max<int64_t>(0, std::min(each, len - i * each)));
  }
  return x.split(sizes, axis);
}

std::vector<Tensor> expand(const OpCtx& c) {
  const Tensor& x = c.input(0);
  std::vector<int64_t> s = c.ints(1);
  size_t rank = std::max(s.size(), static_cast<size_t>(x.ndim()));
  Shape xs(rank - x.ndim(), 1), out(rank);
  xs.insert(xs.end(), x.shape().begin(), x.shape().end());
  s.insert(s.begin(), rank - s.size(), 1);
  for (size_t i = 0; i < rank; ++i) {
    if (xs[i] != s[i] && xs[i] != 1 && s[i] != 1) c.fail("cannot broadcast " + shape_str(x.shape()) + " to " + shape_str(c.ints(1)));
    out[i] = xs[i] == 1 ? s[i] : xs[i];
  }
  return {x.reshape(xs).expand(out)};
}

std::vector<Tensor> pad(const OpCtx& c) {
  const Tensor& x = c.input(0);
  std::string mode = c.attr_s("mode", "constant");
  std::vector<int64_t> pads = c.opset < 11 ? c.attr_ints("pads") : c.ints(1);
  std::vector<int64_t> axes = c.opset >= 18 && c.has(3) ? c.ints(3) : std::vector<int64_t>{};
  if (axes.empty())
    for (int64_t i = 0; i < x.ndim(); ++i) axes.push_back(i);
  if (pads.size() != 2 * axes.size()) c.fail("pads " + shape_str(pads) + " must have two entries per axis padded");
  Pairs p(x.ndim(), {0, 0});
  for (size_t i = 0; i < axes.size(); ++i) p[c.axis(axes[i], x.ndim())] = {pads[i], pads[axes.size() + i]};
  Tensor value = Tensor::full({}, c.opset < 11 ? c.attr_f("value", 0.0) : 0.0, x.dtype());
  if (c.opset >= 11 && c.has(2)) value = c.input(2).reshape({});
  if (mode == "constant") {
    // Padded cells take the value's exact bits: pad with zeros, then select.
    Tensor mask = Tensor::full(x.shape(), true, DType::Bool).pad(p, "constant", false);
    return {mask.where(x.pad(p, "constant", 0), value.cast(x.dtype()))};
  }
  if (mode == "edge") mode = "replicate";
  else if (mode == "wrap") mode = "circular";
  else if (mode != "reflect") c.fail("mode '" + mode + "' is not constant, reflect, edge or wrap");
  return {x.pad(p, mode)};
}

std::vector<Tensor> constant(const OpCtx& c) {
  if (c.node.attrs.size() != 1) c.fail("needs exactly one value attribute");
  const auto& [name, a] = *c.node.attrs.begin();
  if (name == "value" && a.t) return {*a.t};
  if (name == "value_float") return {Tensor::full({}, c.attr_f(name, 0), DType::Float32)};
  if (name == "value_int") return {Tensor::full({}, c.attr_i(name, 0), DType::Int64)};
  if (name == "value_ints") return {int64_vector(c.attr_ints(name))};
  if (name == "value_floats") {
    std::vector<float> f;
    for (double d : c.attr_floats(name)) f.push_back(static_cast<float>(d));
    return {Tensor::from_vector(f, {static_cast<int64_t>(f.size())}, DType::Float32)};
  }
  c.fail("attribute '" + name + "' (" + a.type_name + ") is refused (strings and sparse tensors have no Maroon form)");
}

std::vector<Tensor> constant_of_shape(const OpCtx& c) {
  std::vector<int64_t> s = c.ints(0);
  for (int64_t d : s)
    if (d < 0) c.fail("shape " + shape_str(s) + " has a negative entry");
  const Attr* a = c.attr("value");
  Tensor v = a && a->t ? *a->t : Tensor::full({1}, 0.0, DType::Float32);
  if (v.numel() != 1) c.fail("'value' must hold one element");
  return {v.reshape(Shape(s.size(), 1)).expand(s)};
}

std::vector<Tensor> range(const OpCtx& c) {
  const Tensor& start = c.input(0);
  DType d = start.dtype();
  double s = c.scalar(0), l = c.scalar(1), delta = c.scalar(2);
  if (delta == 0) c.fail("delta must not be 0");
  double n = std::ceil((l - s) / delta);
  if (!(n < 1e12)) c.fail("the range is too long");
  int64_t count = std::max<int64_t>(0, static_cast<int64_t>(n));
  // start + i * delta, each term rounded in the dtype as ONNX's definition reads.
  Tensor i = Tensor::arange(count, DType::Int64).cast(d);
  return {i.mul(c.input(2).reshape({}).cast(d)).add(start.reshape({}))};
}

}  // namespace

void add_shape_ops(OpTable& t) {
  t["Reshape"] = reshape;
  t["Flatten"] = flatten;
  t["Transpose"] = transpose;
  t["Squeeze"] = squeeze;
  t["Unsqueeze"] = unsqueeze;
  t["Shape"] = shape;
  t["Size"] = [](const OpCtx& c) { return std::vector<Tensor>{Tensor::full({}, c.input(0).numel(), DType::Int64)}; };
  t["Concat"] = concat;
  t["Split"] = split;
  t["Expand"] = expand;
  t["Tile"] = [](const OpCtx& c) { return std::vector<Tensor>{c.input(0).repeat(c.ints(1))}; };
  t["Pad"] = pad;
  t["Constant"] = constant;
  t["ConstantOfShape"] = constant_of_shape;
  t["Range"] = range;
}

}  // namespace maroon::onnx
