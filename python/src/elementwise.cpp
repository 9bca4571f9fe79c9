// Elementwise methods and Python's operators. A Python scalar on either side stays weak
// (int8_tensor * 300 stays int8), as a tinygrad literal does.
#include <array>
#include <cstring>
#include <string>
#include <utility>

#include "bind.h"
#include "fast_methods.h"

namespace maroon::py_bind {

namespace {

using TT = Tensor (*)(const Tensor&, const Tensor&);
using TS = Tensor (*)(const Tensor&, Scalar);

// a (op) b, or b (op) a when reversed. A scalar operand uses the C++ scalar overload where there
// is one (the same recipe C++ callers get), else a weak constant shaped against `a`.
Tensor binary(const Tensor& a, const py::handle& b, bool reverse, const char* op, TT ft, TS fs) {
  if (is_tensor(b)) {  // the usual operand, read in place: tensor_of's copy of the handle was an
    const Tensor& t = b.cast<const Tensor&>();  // atomic increment and decrement per operator
    return reverse ? ft(t, a) : ft(a, t);
  }
  if (auto t = tensor_of(b)) return reverse ? ft(*t, a) : ft(a, *t);
  Scalar s = scalar_arg(b, op);
  if (reverse) return ft(a.scalar_operand(s), a);
  return fs ? fs(a, s) : ft(a, a.scalar_operand(s));
}

struct BinaryOp {
  const char* name;
  TT ft;
  TS fs;
};

#define MAROON_TT(expr) [](const Tensor& a, const Tensor& b) -> Tensor { return expr; }
#define MAROON_TS(expr) [](const Tensor& a, Scalar b) -> Tensor { return expr; }
const BinaryOp kBinary[] = {
    {"add", MAROON_TT(a.add(b)), MAROON_TS(a.add(b))},
    {"sub", MAROON_TT(a.sub(b)), MAROON_TS(a.sub(b))},
    {"mul", MAROON_TT(a.mul(b)), MAROON_TS(a.mul(b))},
    {"truediv", MAROON_TT(a.div(b)), MAROON_TS(a.div(b))},
    {"floordiv", MAROON_TT(a.div(b, "floor")), MAROON_TS(a.div(b, "floor"))},
    {"mod", MAROON_TT(a.mod(b)), nullptr},
    {"fmod", MAROON_TT(a.fmod(b)), nullptr},
    {"pow", MAROON_TT(a.pow(b)), MAROON_TS(a.pow(b))},
    {"maximum", MAROON_TT(a.maximum(b)), MAROON_TS(a.maximum(b))},
    {"minimum", MAROON_TT(a.minimum(b)), MAROON_TS(a.minimum(b))},
    {"bitwise_and", MAROON_TT(a.bitwise_and(b)), nullptr},
    {"bitwise_or", MAROON_TT(a.bitwise_or(b)), nullptr},
    {"bitwise_xor", MAROON_TT(a.bitwise_xor(b)), nullptr},
    {"lshift", MAROON_TT(a.lshift(b)), MAROON_TS(a.lshift(b))},
    {"rshift", MAROON_TT(a.rshift(b)), MAROON_TS(a.rshift(b))},
    {"lt", MAROON_TT(a.lt(b)), MAROON_TS(a.lt(b))},
    {"gt", MAROON_TT(a.gt(b)), MAROON_TS(a.gt(b))},
    {"le", MAROON_TT(a.le(b)), MAROON_TS(a.le(b))},
    {"ge", MAROON_TT(a.ge(b)), MAROON_TS(a.ge(b))},
    {"eq", MAROON_TT(a.eq(b)), MAROON_TS(a.eq(b))},
    {"ne", MAROON_TT(a.ne(b)), MAROON_TS(a.ne(b))},
    {"logaddexp", MAROON_TT(a.logaddexp(b)), MAROON_TS(a.logaddexp(b))},
    {"copysign", MAROON_TT(a.copysign(b)), nullptr},
    {"matmul", MAROON_TT(a.matmul(b)), nullptr},
};

const BinaryOp& op_named(const std::string& name) {
  for (const auto& op : kBinary)
    if (name == op.name) return op;
  throw std::logic_error("no binary op " + name);
}

// Python's binary operators (a + b, a * b, a < b, ...), one call per op of every expression:
// METH_O descriptors (fast_methods.h) running binary() above, NotImplemented for an operand type
// it does not take.
template <size_t I, bool Reverse>
PyObject* operator_slot(PyObject* self, PyObject* other) {
  return call_guarded([&]() -> PyObject* {
    py::handle b(other);
    if (!is_operand(b)) return Py_NewRef(Py_NotImplemented);
    const Tensor& a = py::handle(self).cast<const Tensor&>();
    const BinaryOp& op = kBinary[I];
    return py::cast(binary(a, b, Reverse, op.name, op.ft, op.fs)).release().ptr();
  });
}

template <size_t... I>
constexpr std::array<PyCFunction, 2 * sizeof...(I)> operator_slots(std::index_sequence<I...>) {
  return {reinterpret_cast<PyCFunction>(&operator_slot<I, false>)..., reinterpret_cast<PyCFunction>(&operator_slot<I, true>)...};
}
constexpr size_t kBinaryCount = sizeof(kBinary) / sizeof(kBinary[0]);

// A Python operator: NotImplemented for an operand type it does not take, so Python can try
// the other side or raise its usual TypeError. Its __doc__ is the signature pybind11 wrote
// (tools/python/gen_stubs.py reads it).
void def_operator(py::class_<Tensor>& t, const char* dunder, const char* op_name, bool reverse) {
  static constexpr auto slots = operator_slots(std::make_index_sequence<kBinaryCount>{});
  const size_t i = static_cast<size_t>(&op_named(op_name) - kBinary);
  def_descriptor(t, dunder, slots[i + (reverse ? kBinaryCount : 0)], METH_O,
                 std::string(dunder) + "(self: maroon._maroon.Tensor, arg0: object) -> object\n");
}

void def_inplace(py::class_<Tensor>& t, const char* dunder, const char* op_name) {
  const BinaryOp& op = op_named(op_name);
  t.def(dunder, [op](Tensor& a, const py::object& b) {
    Tensor r = binary(a, b, false, op.name, op.ft, op.fs);
    a.assign(r);
    return a;
  });
}

}  // namespace

void bind_elementwise(py::class_<Tensor>& t) {
#define MAROON_UNARY(name, call) t.def(name, [](const Tensor& x) { return x.call(); });
  MAROON_UNARY("exp2", exp2) MAROON_UNARY("log2", log2) MAROON_UNARY("sin", sin) MAROON_UNARY("sqrt", sqrt)
  MAROON_UNARY("reciprocal", reciprocal) MAROON_UNARY("trunc", trunc) MAROON_UNARY("neg", neg)
  MAROON_UNARY("logical_not", logical_not) MAROON_UNARY("bitwise_not", bitwise_not) MAROON_UNARY("exp", exp)
  MAROON_UNARY("log", log) MAROON_UNARY("log10", log10) MAROON_UNARY("rsqrt", rsqrt) MAROON_UNARY("cos", cos)
  MAROON_UNARY("tan", tan) MAROON_UNARY("square", square) MAROON_UNARY("sign", sign) MAROON_UNARY("abs", abs)
  MAROON_UNARY("floor", floor) MAROON_UNARY("ceil", ceil) MAROON_UNARY("round", round) MAROON_UNARY("relu", relu)
  MAROON_UNARY("relu6", relu6) MAROON_UNARY("sigmoid", sigmoid) MAROON_UNARY("logsigmoid", logsigmoid)
  MAROON_UNARY("tanh", tanh) MAROON_UNARY("quick_gelu", quick_gelu) MAROON_UNARY("swish", swish)
  MAROON_UNARY("silu", silu) MAROON_UNARY("hardswish", hardswish) MAROON_UNARY("mish", mish)
  MAROON_UNARY("softsign", softsign) MAROON_UNARY("erf", erf) MAROON_UNARY("sinh", sinh) MAROON_UNARY("cosh", cosh)
  MAROON_UNARY("atanh", atanh) MAROON_UNARY("asinh", asinh) MAROON_UNARY("acosh", acosh) MAROON_UNARY("isnan", isnan)
  MAROON_UNARY("isfinite", isfinite) MAROON_UNARY("asin", asin) MAROON_UNARY("acos", acos) MAROON_UNARY("atan", atan)
  MAROON_UNARY("float", float_) MAROON_UNARY("half", half) MAROON_UNARY("double", double_) MAROON_UNARY("int", int_)
  MAROON_UNARY("long", long_) MAROON_UNARY("short", short_) MAROON_UNARY("bool", bool_)
  MAROON_UNARY("bfloat16", bfloat16)
  MAROON_UNARY("__neg__", neg) MAROON_UNARY("__invert__", bitwise_not) MAROON_UNARY("__abs__", abs)
#undef MAROON_UNARY

  t.def("cast", [](const Tensor& x, const py::object& d) { return x.cast(*dtype_arg(d)); }, py::arg("dtype"));
  t.def("bitcast", [](const Tensor& x, const py::object& d) { return x.bitcast(*dtype_arg(d)); }, py::arg("dtype"));
  t.def("leaky_relu", &Tensor::leaky_relu, py::arg("neg_slope") = 0.01);
  t.def("elu", &Tensor::elu, py::arg("alpha") = 1.0);
  t.def("celu", &Tensor::celu, py::arg("alpha") = 1.0);
  t.def("selu", &Tensor::selu, py::arg("alpha") = 1.67326, py::arg("gamma") = 1.0507);
  t.def("hardsigmoid", &Tensor::hardsigmoid, py::arg("alpha") = 1.0 / 6, py::arg("beta") = 0.5);
  t.def("hardtanh", &Tensor::hardtanh, py::arg("min_val") = -1.0, py::arg("max_val") = 1.0);
  t.def("gelu", &Tensor::gelu, py::arg("approximate") = "tanh");
  t.def("softplus", &Tensor::softplus, py::arg("beta") = 1.0);
  t.def("isinf", &Tensor::isinf, py::arg("detect_positive") = true, py::arg("detect_negative") = true);
  auto bound = [](const py::object& o) -> std::optional<Scalar> {
    if (o.is_none()) return std::nullopt;
    return scalar_arg(o, "clamp");
  };
  t.def("clamp", [bound](const Tensor& x, const py::object& lo, const py::object& hi) { return x.clamp(bound(lo), bound(hi)); },
        py::arg("min_") = py::none(), py::arg("max_") = py::none());
  t.def("clip", [bound](const Tensor& x, const py::object& lo, const py::object& hi) { return x.clip(bound(lo), bound(hi)); },
        py::arg("min_") = py::none(), py::arg("max_") = py::none());

  // Binary methods with tinygrad's `reverse` flag, and their operators.
  for (const auto& op : kBinary) {
    std::string name = op.name;
    if (name == "truediv" || name == "floordiv" || name == "matmul") continue;
    bool has_reverse = name == "add" || name == "sub" || name == "mul" || name == "mod" || name == "pow" ||
                       name == "bitwise_and" || name == "bitwise_or" || name == "bitwise_xor" || name == "lshift" ||
                       name == "rshift";
    if (has_reverse)
      t.def(op.name, [op](const Tensor& a, const py::object& b, bool rev) { return binary(a, b, rev, op.name, op.ft, op.fs); },
            py::arg("x"), py::arg("reverse") = false);
    else
      t.def(op.name, [op](const Tensor& a, const py::object& b) { return binary(a, b, false, op.name, op.ft, op.fs); },
            py::arg("x"));
  }
  t.def("div", [](const Tensor& a, const py::object& b, bool rev, const py::object& mode) {
    std::string m = mode.is_none() ? "" : mode.cast<std::string>();  // C++ checks the mode
    if (auto t = tensor_of(b)) return rev ? t->div(a, m) : a.div(*t, m);
    Scalar s = scalar_arg(b, "div");
    return rev ? a.scalar_operand(s).div(a, m) : a.div(s, m);
  }, py::arg("x"), py::arg("reverse") = false, py::arg("rounding_mode") = py::none());
  // fused (Maroon's, not tinygrad's): sum each output as a chain of fused multiply-adds; None
  // follows maroon.set_fused (off unless turned on).
  t.def("matmul", [](const Tensor& a, const Tensor& b, bool rev, const py::object& d, std::optional<bool> fused) {
    return rev ? b.matmul(a, dtype_arg(d), fused) : a.matmul(b, dtype_arg(d), fused);
  }, py::arg("x"), py::arg("reverse") = false, py::arg("dtype") = py::none(), py::arg("fused") = py::none());
  t.def("dot", [](const Tensor& a, const Tensor& w, const py::object& d, std::optional<bool> fused) {
    return a.dot(w, dtype_arg(d), fused);
  }, py::arg("w"), py::arg("dtype") = py::none(), py::arg("fused") = py::none());

  const std::pair<const char*, const char*> ops[] = {
      {"add", "add"}, {"sub", "sub"}, {"mul", "mul"}, {"truediv", "truediv"}, {"floordiv", "floordiv"},
      {"mod", "mod"}, {"pow", "pow"}, {"and", "bitwise_and"}, {"or", "bitwise_or"}, {"xor", "bitwise_xor"},
      {"lshift", "lshift"}, {"rshift", "rshift"}, {"matmul", "matmul"}};
  for (auto [py_name, op] : ops) {
    def_operator(t, ("__" + std::string(py_name) + "__").c_str(), op, false);
    def_operator(t, ("__r" + std::string(py_name) + "__").c_str(), op, true);
    def_inplace(t, ("__i" + std::string(py_name) + "__").c_str(), op);
  }
  for (auto [py_name, op] : {std::pair{"lt", "lt"}, {"gt", "gt"}, {"le", "le"}, {"ge", "ge"}, {"eq", "eq"}, {"ne", "ne"}})
    def_operator(t, ("__" + std::string(py_name) + "__").c_str(), op, false);

  // this is the condition; x and y are tensors or weak scalars
  t.def("where", [](const Tensor& c, const py::object& x, const py::object& y) {
    auto tx = tensor_of(x), ty = tensor_of(y);
    if (tx && ty) return c.where(*tx, *ty);
    if (tx) return c.where(*tx, scalar_arg(y, "where"));
    if (ty) return c.where(scalar_arg(x, "where"), *ty);
    return c.where(scalar_arg(x, "where"), scalar_arg(y, "where"));
  }, py::arg("x"), py::arg("y"));
  t.def("masked_fill", [](const Tensor& x, const Tensor& mask, const py::object& v) {
    if (auto tv = tensor_of(v)) return mask.where(*tv, x);  // tinygrad's recipe for a tensor value
    return x.masked_fill(mask, scalar_arg(v, "masked_fill"));
  }, py::arg("mask"), py::arg("value"));
  t.def("lerp", [](const Tensor& x, const Tensor& end, const py::object& w) {
    if (auto tw = tensor_of(w)) return x.lerp(end, *tw);
    return x.lerp(end, scalar_arg(w, "lerp"));
  }, py::arg("end"), py::arg("weight"));
  t.def("isclose", [](const Tensor& x, const py::object& o, double rtol, double atol, bool nan) {
    return x.isclose(operand(o, x, "isclose"), rtol, atol, nan);
  }, py::arg("other"), py::arg("rtol") = 1e-5, py::arg("atol") = 1e-8, py::arg("equal_nan") = false);
  t.def("allclose", [](const Tensor& x, const py::object& o, double rtol, double atol, bool nan) {
    return x.allclose(operand(o, x, "allclose"), rtol, atol, nan);
  }, py::arg("other"), py::arg("rtol") = 1e-5, py::arg("atol") = 1e-8, py::arg("equal_nan") = false);
}

}  // namespace maroon::py_bind
