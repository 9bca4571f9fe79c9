// Creation and random methods: tinygrad's static constructors (Tensor.zeros(2, 3, dtype=...)),
// the *_like methods and Tensor.manual_seed with tinygrad's Threefry stream.
#include "bind.h"

namespace maroon::py_bind {

namespace {

// The keyword arguments tinygrad's creation methods pass through (**kwargs): dtype is used;
// device, requires_grad, contiguous and buffer are accepted and have nothing to change here.
std::optional<DType> creation_kwargs(const py::kwargs& kw, const char* op) {
  std::optional<DType> dtype;
  for (auto [k, v] : kw) {
    std::string key = k.cast<std::string>();
    if (key == "dtype") dtype = dtype_arg(v);
    else if (key != "device" && key != "requires_grad" && key != "contiguous" && key != "buffer")
      throw py::type_error(std::string(op) + "() got an unexpected keyword argument '" + key + "'");
  }
  return dtype;
}

using Maker = Tensor (*)(const Shape&, DType);
void def_shape_maker(py::class_<Tensor>& t, const char* name, Maker make) {
  t.def_static(name, [name, make](const py::args& s, const py::kwargs& kw) {
    return make(shape_args(s, name), creation_kwargs(kw, name).value_or(DType::Float32));
  });
}

}  // namespace

// tinygrad's OverflowError: an integer range whose values the dtype cannot hold.
// A float keyword argument of the random functions: pybind11 will not convert an int for a
// double next to *args/**kwargs, and tinygrad's Tensor.uniform(2, 3, low=0, high=10) passes ints.
static double number(const py::object& o, const char* op) {
  Scalar v = scalar_arg(o, op);
  return v.kind == Scalar::Kind::Float ? v.f : static_cast<double>(v.i);
}

static void check_arange_range(Scalar a, Scalar b, Scalar st, std::optional<DType> dtype) {
  if (!dtype || !is_int(*dtype) || a.kind != Scalar::Kind::Int || b.kind != Scalar::Kind::Int ||
      st.kind != Scalar::Kind::Int || st.i == 0)
    return;
  __int128 lo = st.i > 0 ? a.i : __int128{b.i} - st.i, hi = st.i > 0 ? __int128{b.i} - st.i : a.i;
  if (hi < lo) return;  // empty
  const int bits = bitwidth(*dtype);
  __int128 min = is_unsigned(*dtype) ? 0 : -(__int128{1} << (bits - 1));
  __int128 max = is_unsigned(*dtype) ? (__int128{1} << bits) - 1 : (__int128{1} << (bits - 1)) - 1;
  if (lo < min || hi > max)
    raise_builtin(PyExc_OverflowError, "[arange] [" + std::to_string(a.i) + ", " + std::to_string(b.i) +
                                           ") is not representable in " + std::string(dtype_name(*dtype)));
}

void bind_creation(py::class_<Tensor>& t) {
  def_shape_maker(t, "zeros", [](const Shape& s, DType d) { return Tensor::zeros(s, d); });
  def_shape_maker(t, "ones", [](const Shape& s, DType d) { return Tensor::ones(s, d); });
  def_shape_maker(t, "empty", [](const Shape& s, DType d) { return Tensor::empty(s, d); });
  def_shape_maker(t, "rand", [](const Shape& s, DType d) { return Tensor::rand(s, d); });
  def_shape_maker(t, "randn", [](const Shape& s, DType d) { return Tensor::randn(s, d); });
  def_shape_maker(t, "scaled_uniform", [](const Shape& s, DType d) { return Tensor::scaled_uniform(s, d); });
  def_shape_maker(t, "glorot_uniform", [](const Shape& s, DType d) { return Tensor::glorot_uniform(s, d); });
  t.def_static("full", [](const py::object& shape, const py::object& v, const py::object& d, const py::kwargs& kw) {
    creation_kwargs(kw, "full");
    Shape s = int_list(shape, "full");
    auto dt = dtype_arg(d);
    return dt ? Tensor::full(s, scalar_arg(v, "full"), *dt) : Tensor::full(s, scalar_arg(v, "full"));
  }, py::arg("shape"), py::arg("fill_value"), py::arg("dtype") = py::none());
  t.def_static("arange", [](const py::object& start, const py::object& stop, const py::object& step, const py::object& d) {
    Scalar a = scalar_arg(start, "arange"), st = scalar_arg(step, "arange");
    Scalar b = stop.is_none() ? a : scalar_arg(stop, "arange");
    if (stop.is_none()) a = Scalar(int64_t{0});
    check_arange_range(a, b, st, dtype_arg(d));
    return Tensor::arange(a, b, st, dtype_arg(d));
  }, py::arg("start"), py::arg("stop") = py::none(), py::arg("step") = 1, py::arg("dtype") = py::none());
  t.def_static("linspace", [](double start, double stop, int64_t steps, const py::object& d) {
    return Tensor::linspace(start, stop, steps, dtype_arg(d).value_or(DType::Float32));
  }, py::arg("start"), py::arg("stop"), py::arg("steps"), py::arg("dtype") = py::none());
  t.def_static("eye", [](int64_t n, std::optional<int64_t> m, const py::object& d) {
    return Tensor::eye(n, m, dtype_arg(d).value_or(DType::Float32));
  }, py::arg("n"), py::arg("m") = py::none(), py::arg("dtype") = py::none());
  t.def_static("const", [](const py::object& v, const py::object& d) { return Tensor::const_(scalar_arg(v, "const"), dtype_arg(d)); },
               py::arg("b"), py::arg("dtype") = py::none());

  t.def_static("uniform", [](const py::args& s, const py::object& low, const py::object& high, const py::kwargs& kw) {
    return Tensor::uniform(shape_args(s, "uniform"), number(low, "uniform"), number(high, "uniform"), creation_kwargs(kw, "uniform").value_or(DType::Float32));
  }, py::kw_only(), py::arg("low") = 0.0, py::arg("high") = 1.0);
  t.def_static("normal", [](const py::args& s, const py::object& mean, const py::object& std, const py::kwargs& kw) {
    return Tensor::normal(shape_args(s, "normal"), number(mean, "normal"), number(std, "normal"), creation_kwargs(kw, "normal").value_or(DType::Float32));
  }, py::kw_only(), py::arg("mean") = 0.0, py::arg("std") = 1.0);
  t.def_static("randint", [](const py::args& s, int64_t low, int64_t high, const py::kwargs& kw) {
    return Tensor::randint(shape_args(s, "randint"), low, high, creation_kwargs(kw, "randint").value_or(DType::Int32));
  }, py::kw_only(), py::arg("low") = 0, py::arg("high") = 10);
  t.def_static("kaiming_uniform", [](const py::args& s, const py::object& a, const py::kwargs& kw) {
    return Tensor::kaiming_uniform(shape_args(s, "kaiming_uniform"), number(a, "kaiming_uniform"), creation_kwargs(kw, "kaiming_uniform").value_or(DType::Float32));
  }, py::kw_only(), py::arg("a") = 0.01);
  t.def_static("kaiming_normal", [](const py::args& s, const py::object& a, const py::kwargs& kw) {
    return Tensor::kaiming_normal(shape_args(s, "kaiming_normal"), number(a, "kaiming_normal"), creation_kwargs(kw, "kaiming_normal").value_or(DType::Float32));
  }, py::kw_only(), py::arg("a") = 0.01);
  t.def_static("randperm", [](int64_t n, const py::object&, const py::object& d) {
    return Tensor::randperm(n, dtype_arg(d).value_or(DType::Int32));
  }, py::arg("n"), py::arg("device") = py::none(), py::arg("dtype") = py::none());
  t.def_static("random_bits", &Tensor::random_bits, py::arg("key"), py::arg("counter"), py::arg("num"));
  t.def_static("manual_seed", &Tensor::manual_seed, py::arg("seed") = 0);
  // The stream's position (seed, words drawn): TinyJit's first call sees whether a step draws.
  t.def_static("_random_state", [] {
    Tensor::RandomState s = Tensor::random_state();
    return py::make_tuple(s.seed, s.counter);
  });
  t.def("threefry", &Tensor::threefry, py::arg("seed"));
  t.def("dropout", &Tensor::dropout, py::arg("p") = 0.5);
  t.def("multinomial", &Tensor::multinomial, py::arg("num_samples") = 1, py::arg("replacement") = false);

  // ---- *_like ----
  t.def("zeros_like", [](const Tensor& x, const py::kwargs& kw) { return x.zeros_like(creation_kwargs(kw, "zeros_like")); });
  t.def("ones_like", [](const Tensor& x, const py::kwargs& kw) { return x.ones_like(creation_kwargs(kw, "ones_like")); });
  t.def("empty_like", [](const Tensor& x, const py::kwargs& kw) { return x.empty_like(creation_kwargs(kw, "empty_like")); });
  t.def("rand_like", [](const Tensor& x, const py::kwargs& kw) { return x.rand_like(creation_kwargs(kw, "rand_like")); });
  t.def("randn_like", [](const Tensor& x, const py::kwargs& kw) { return x.randn_like(creation_kwargs(kw, "randn_like")); });
  t.def("full_like", [](const Tensor& x, const py::object& v, const py::kwargs& kw) {
    return x.full_like(scalar_arg(v, "full_like"), creation_kwargs(kw, "full_like"));
  }, py::arg("fill_value"));
  t.def("const_like", [](const Tensor& x, const py::object& v, const py::object& d) {
    auto dt = dtype_arg(d);
    return dt ? x.full_like(scalar_arg(v, "const_like"), dt) : x.const_like(scalar_arg(v, "const_like"));
  }, py::arg("b"), py::arg("dtype") = py::none());

  // ---- folds and composition ----
  t.def("usum", [](const Tensor& x, const py::args& more) {
    std::vector<Tensor> ts{x};
    for (auto o : more) ts.push_back(o.cast<Tensor>());
    return Tensor::usum(ts);
  });
  t.def("uprod", [](const Tensor& x, const py::args& more) {
    std::vector<Tensor> ts{x};
    for (auto o : more) ts.push_back(o.cast<Tensor>());
    return Tensor::uprod(ts);
  });
  t.def("sequential", [](const Tensor& x, const py::list& fs) {
    py::object y = py::cast(x);
    for (auto f : fs) y = f(y);
    return y;
  }, py::arg("ll"));

  // tinygrad's Tensor.training (a class attribute there, a global switch here).
  t.def_property_static("training", [](const py::object&) { return Tensor::training(); },
                        [](const py::object&, bool on) { Tensor::set_training(on); });
}

}  // namespace maroon::py_bind
