// Elementwise operators: each is the Tensor API method of the same meaning (src/api), so its bits
// are the ones docs/spec.md gives that method's decomposition. ONNX broadcasting is numpy's, as
// the Tensor API's is.
#include <cmath>

#include "onnx/graph.h"

namespace maroon::onnx {

namespace {

using Unary = Tensor (*)(const Tensor&);

void unary(OpTable& t, const char* name, Unary f) {
  t[name] = [f](const OpCtx& c) { return std::vector<Tensor>{f(c.input(0))}; };
}

// Float-only operators refuse integer inputs by name instead of computing something ONNX does not
// define (the Tensor API would promote an int to float).
Tensor need_float(const OpCtx& c, const Tensor& x) {
  if (!is_float(x.dtype())) c.fail("needs a float input, got " + std::string(dtype_name(x.dtype())));
  return x;
}

void float_unary(OpTable& t, const char* name, Unary f) {
  t[name] = [f](const OpCtx& c) { return std::vector<Tensor>{f(need_float(c, c.input(0)))}; };
}

Tensor same_dtype(const OpCtx& c, const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype())
    c.fail("inputs must have one dtype, got " + std::string(dtype_name(a.dtype())) + " and " +
           std::string(dtype_name(b.dtype())));
  return b;
}

// Before opset 7, broadcasting was opt-in (broadcast=1) and aligned B at `axis` of A (default:
// the trailing axes); B is reshaped to numpy's right-aligned form.
Tensor legacy_broadcast(const OpCtx& c, const Tensor& a, const Tensor& b) {
  if (c.opset >= 7 || !c.attr_i("broadcast", 0) || !c.has_attr("axis")) return b;
  int64_t axis = c.axis(c.attr_i("axis", 0), a.ndim());
  if (axis + b.ndim() > a.ndim()) c.fail("B " + shape_str(b.shape()) + " does not fit A " + shape_str(a.shape()) + " at axis " + std::to_string(axis));
  Shape s = b.shape();
  s.insert(s.end(), a.ndim() - axis - b.ndim(), 1);
  return b.reshape(s);
}

void binary(OpTable& t, const char* name, Tensor (*f)(const Tensor&, const Tensor&)) {
  t[name] = [f](const OpCtx& c) {
    const Tensor& a = c.input(0);
    return std::vector<Tensor>{f(a, legacy_broadcast(c, a, same_dtype(c, a, c.input(1))))};
  };
}

// Max, Min, Sum, Mean: a left fold over the inputs in order, broadcasting.
void variadic(OpTable& t, const char* name, Tensor (*f)(const Tensor&, const Tensor&), bool mean) {
  t[name] = [f, mean](const OpCtx& c) {
    if (c.count() == 0) c.fail("needs at least one input");
    Tensor acc = c.input(0);
    for (size_t i = 1; i < c.count(); ++i) acc = f(acc, same_dtype(c, acc, c.input(i)));
    if (mean) acc = acc.div(Tensor::full({}, static_cast<int64_t>(c.count()), acc.dtype()));
    return std::vector<Tensor>{acc};
  };
}

std::vector<Tensor> clip(const OpCtx& c) {
  Tensor x = c.input(0);
  if (c.opset < 11) {
    double lo = c.attr_f("min", -INFINITY), hi = c.attr_f("max", INFINITY);
    return {x.maximum(Tensor::full({}, lo, x.dtype())).minimum(Tensor::full({}, hi, x.dtype()))};
  }
  if (c.has(1)) x = x.maximum(same_dtype(c, x, c.input(1)));
  if (c.has(2)) x = x.minimum(same_dtype(c, x, c.input(2)));
  return {x};
}

std::vector<Tensor> pow(const OpCtx& c) {
  const Tensor& x = c.input(0);
  const Tensor& y = c.input(1);
  // A float base squared (LayerNormalization's variance as exporters write it) is x * x: POW is
  // correctly rounded (docs/spec.md), so pow(x, 2) is x * x rounded once, special cases included
  // (+0 for ±0, +inf for ±inf, a canonical NaN), the same bits for the cost of one MUL.
  if (is_float(x.dtype()) && y.numel() == 1 && y.ndim() <= x.ndim() && c.scalar(1) == 2.0) return {x.mul(x)};
  // The output has the base's dtype (ONNX); an exponent of another dtype converts first.
  return {x.pow(y.dtype() == x.dtype() || !is_float(x.dtype()) ? y : y.cast(x.dtype())).cast(x.dtype())};
}

std::vector<Tensor> div(const OpCtx& c) {
  const Tensor& a = c.input(0);
  Tensor b = legacy_broadcast(c, a, same_dtype(c, a, c.input(1)));
  // Integer division truncates toward zero (ONNX follows C); float division is IEEE's.
  return {is_float(a.dtype()) ? a.div(b) : a.div(b, "trunc")};
}

std::vector<Tensor> mod(const OpCtx& c) {
  const Tensor& a = c.input(0);
  const Tensor& b = same_dtype(c, a, c.input(1));
  if (c.attr_i("fmod", 0)) return {a.fmod(b)};
  if (is_float(a.dtype())) c.fail("fmod=0 is defined for integers only (ONNX)");
  return {a.mod(b)};
}

Tensor gelu(const OpCtx& c) {
  std::string approx = c.attr_s("approximate", "none");
  if (approx == "tanh") return need_float(c, c.input(0)).gelu("tanh");
  if (approx != "none") c.fail("approximate must be 'none' or 'tanh', got '" + approx + "'");
  const Tensor& x = need_float(c, c.input(0));
  // 0.5 * x * (1 + erf(x / sqrt(2))), the definition (tinygrad's gelu is the tanh form).
  return x.mul(0.5).mul(x.mul(0.7071067811865476).erf().add(1.0));
}

void add_activations(OpTable& t) {
  unary(t, "Relu", [](const Tensor& x) { return x.relu(); });
  float_unary(t, "Sigmoid", [](const Tensor& x) { return x.sigmoid(); });
  float_unary(t, "Tanh", [](const Tensor& x) { return x.tanh(); });
  float_unary(t, "Softplus", [](const Tensor& x) { return x.softplus(); });
  float_unary(t, "Softsign", [](const Tensor& x) { return x.softsign(); });
  float_unary(t, "HardSwish", [](const Tensor& x) { return x.hardswish(); });
  float_unary(t, "Mish", [](const Tensor& x) { return x.mish(); });
  t["LeakyRelu"] = [](const OpCtx& c) { return std::vector<Tensor>{need_float(c, c.input(0)).leaky_relu(c.attr_f("alpha", 0.01))}; };
  t["Elu"] = [](const OpCtx& c) { return std::vector<Tensor>{need_float(c, c.input(0)).elu(c.attr_f("alpha", 1.0))}; };
  t["Celu"] = [](const OpCtx& c) { return std::vector<Tensor>{need_float(c, c.input(0)).celu(c.attr_f("alpha", 1.0))}; };
  t["Selu"] = [](const OpCtx& c) {
    return std::vector<Tensor>{need_float(c, c.input(0)).selu(c.attr_f("alpha", 1.67326319217681884765625),
                                                              c.attr_f("gamma", 1.05070102214813232421875))};
  };
  t["HardSigmoid"] = [](const OpCtx& c) {
    const Tensor& x = need_float(c, c.input(0));
    // max(0, min(1, alpha * x + beta))
    return std::vector<Tensor>{x.mul(c.attr_f("alpha", 0.2)).add(c.attr_f("beta", 0.5)).maximum(0.0).minimum(1.0)};
  };
  t["ThresholdedRelu"] = [](const OpCtx& c) {
    const Tensor& x = need_float(c, c.input(0));
    return std::vector<Tensor>{x.gt(c.attr_f("alpha", 1.0)).where(x, 0.0)};
  };
  t["PRelu"] = [](const OpCtx& c) {
    const Tensor& x = c.input(0);
    Tensor slope = same_dtype(c, x, c.input(1));
    // Before opset 7 a 1-D slope of C entries applies per channel (axis 1).
    if (c.opset < 7 && slope.ndim() == 1 && x.ndim() > 2 && slope.shape()[0] == x.shape()[1]) {
      Shape s(static_cast<size_t>(x.ndim() - 1), 1);
      s[0] = -1;
      slope = slope.reshape(s);
    }
    return std::vector<Tensor>{x.lt(0).where(x.mul(slope), x)};
  };
  t["Gelu"] = [](const OpCtx& c) { return std::vector<Tensor>{gelu(c)}; };
  t["Clip"] = clip;
}

void add_math(OpTable& t) {
  unary(t, "Abs", [](const Tensor& x) { return x.abs(); });
  unary(t, "Neg", [](const Tensor& x) { return x.neg(); });
  unary(t, "Sign", [](const Tensor& x) { return x.sign(); });
  unary(t, "Identity", [](const Tensor& x) { return x; });
  float_unary(t, "Exp", [](const Tensor& x) { return x.exp(); });
  float_unary(t, "Log", [](const Tensor& x) { return x.log(); });
  float_unary(t, "Sqrt", [](const Tensor& x) { return x.sqrt(); });
  float_unary(t, "Reciprocal", [](const Tensor& x) { return x.reciprocal(); });
  float_unary(t, "Floor", [](const Tensor& x) { return x.floor(); });
  float_unary(t, "Ceil", [](const Tensor& x) { return x.ceil(); });
  float_unary(t, "Round", [](const Tensor& x) { return x.round(); });
  float_unary(t, "Erf", [](const Tensor& x) { return x.erf(); });
  float_unary(t, "Sin", [](const Tensor& x) { return x.sin(); });
  float_unary(t, "Cos", [](const Tensor& x) { return x.cos(); });
  float_unary(t, "Tan", [](const Tensor& x) { return x.tan(); });
  float_unary(t, "Asin", [](const Tensor& x) { return x.asin(); });
  float_unary(t, "Acos", [](const Tensor& x) { return x.acos(); });
  float_unary(t, "Atan", [](const Tensor& x) { return x.atan(); });
  float_unary(t, "Sinh", [](const Tensor& x) { return x.sinh(); });
  float_unary(t, "Cosh", [](const Tensor& x) { return x.cosh(); });
  float_unary(t, "Asinh", [](const Tensor& x) { return x.asinh(); });
  float_unary(t, "Acosh", [](const Tensor& x) { return x.acosh(); });
  float_unary(t, "Atanh", [](const Tensor& x) { return x.atanh(); });
  float_unary(t, "IsNaN", [](const Tensor& x) { return x.isnan(); });
  t["IsInf"] = [](const OpCtx& c) {
    return std::vector<Tensor>{need_float(c, c.input(0)).isinf(c.attr_i("detect_positive", 1) != 0,
                                                               c.attr_i("detect_negative", 1) != 0)};
  };
  binary(t, "Add", [](const Tensor& a, const Tensor& b) { return a.add(b); });
  binary(t, "Sub", [](const Tensor& a, const Tensor& b) { return a.sub(b); });
  binary(t, "Mul", [](const Tensor& a, const Tensor& b) { return a.mul(b); });
  t["Div"] = div;
  t["Mod"] = mod;
  t["Pow"] = pow;
  variadic(t, "Max", [](const Tensor& a, const Tensor& b) { return a.maximum(b); }, false);
  variadic(t, "Min", [](const Tensor& a, const Tensor& b) { return a.minimum(b); }, false);
  variadic(t, "Sum", [](const Tensor& a, const Tensor& b) { return a.add(b); }, false);
  variadic(t, "Mean", [](const Tensor& a, const Tensor& b) { return a.add(b); }, true);
}

void add_logic(OpTable& t) {
  binary(t, "Equal", [](const Tensor& a, const Tensor& b) { return a.eq(b); });
  binary(t, "Less", [](const Tensor& a, const Tensor& b) { return a.lt(b); });
  binary(t, "LessOrEqual", [](const Tensor& a, const Tensor& b) { return a.le(b); });
  binary(t, "Greater", [](const Tensor& a, const Tensor& b) { return a.gt(b); });
  binary(t, "GreaterOrEqual", [](const Tensor& a, const Tensor& b) { return a.ge(b); });
  binary(t, "And", [](const Tensor& a, const Tensor& b) { return a.bitwise_and(b); });
  binary(t, "Or", [](const Tensor& a, const Tensor& b) { return a.bitwise_or(b); });
  binary(t, "Xor", [](const Tensor& a, const Tensor& b) { return a.bitwise_xor(b); });
  binary(t, "BitwiseAnd", [](const Tensor& a, const Tensor& b) { return a.bitwise_and(b); });
  binary(t, "BitwiseOr", [](const Tensor& a, const Tensor& b) { return a.bitwise_or(b); });
  binary(t, "BitwiseXor", [](const Tensor& a, const Tensor& b) { return a.bitwise_xor(b); });
  unary(t, "Not", [](const Tensor& x) { return x.logical_not(); });
  unary(t, "BitwiseNot", [](const Tensor& x) { return x.bitwise_not(); });
  t["Where"] = [](const OpCtx& c) {
    const Tensor& x = c.input(1);
    if (c.input(0).dtype() != DType::Bool) c.fail("condition must be bool");
    return std::vector<Tensor>{c.input(0).where(x, same_dtype(c, x, c.input(2)))};
  };
  t["Cast"] = [](const OpCtx& c) {
    if (!c.has_attr("to")) c.fail("attribute 'to' is required");
    return std::vector<Tensor>{c.input(0).cast(dtype_from_onnx(static_cast<int32_t>(c.attr_i("to", 0)), c.node.label()))};
  };
  t["CastLike"] = [](const OpCtx& c) { return std::vector<Tensor>{c.input(0).cast(c.input(1).dtype())}; };
}

}  // namespace

void add_elementwise_ops(OpTable& t) {
  add_activations(t);
  add_math(t);
  add_logic(t);
}

}  // namespace maroon::onnx
