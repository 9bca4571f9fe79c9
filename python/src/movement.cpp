// Movement, joining and index-driven methods, with tinygrad's argument forms (shapes as
// varargs or one sequence, padding flat or grouped, None meaning "this axis unchanged").
#include <climits>

#include "bind.h"

namespace maroon::py_bind {

namespace {

std::vector<Tensor> others_of(const py::args& args) {
  std::vector<Tensor> out;
  for (auto o : args) {
    if (py::isinstance<py::list>(o) || py::isinstance<py::tuple>(o))  // Tensor.cat([a, b]) / stack((a, b))
      for (auto e : py::reinterpret_borrow<py::sequence>(o)) out.push_back(e.cast<Tensor>());
    else
      out.push_back(o.cast<Tensor>());
  }
  return out;
}

// cat/stack's tensors: `self` then `args`, where `self` may itself be a list or tuple of them.
std::pair<Tensor, std::vector<Tensor>> first_and_rest(const py::object& self, const py::args& args, const char* op) {
  std::vector<Tensor> all;
  if (py::isinstance<Tensor>(self)) {
    all.push_back(self.cast<Tensor>());
  } else if (py::isinstance<py::list>(self) || py::isinstance<py::tuple>(self)) {
    if (!args.empty())  // Tensor.stack((a, b), c): tinygrad's ValueError
      throw ShapeError(std::string("[") + op + "] give the tensors either as one sequence or as arguments, not both");
    for (auto e : py::reinterpret_borrow<py::sequence>(self)) all.push_back(e.cast<Tensor>());
  } else {
    throw py::type_error(std::string("[") + op + "] expected a Tensor or a sequence of Tensors");
  }
  for (auto& t : others_of(args)) all.push_back(t);
  if (all.empty()) throw ShapeError(std::string("[") + op + "] needs at least one tensor");
  return {all.front(), std::vector<Tensor>(all.begin() + 1, all.end())};
}

// (before, after) per axis from tinygrad's padding forms: flat as PyTorch's (last axis first)
// or grouped per axis with None for (0, 0).
Pairs padding_of(const Tensor& x, const py::handle& padding) {
  py::sequence seq = py::reinterpret_borrow<py::sequence>(padding);
  bool grouped = false;
  for (auto p : seq) grouped = grouped || p.is_none() || py::isinstance<py::tuple>(p) || py::isinstance<py::list>(p);
  Pairs out;
  if (grouped) {
    for (auto p : seq) {
      if (p.is_none()) { out.push_back({0, 0}); continue; }
      auto v = int_list(p, "pad");
      if (v.size() != 2) throw ShapeError("[pad] each axis needs (before, after), got " + std::to_string(v.size()) + " values");
      out.push_back({v[0], v[1]});
    }
  } else {
    auto flat = int_list(padding, "pad");
    if (flat.size() % 2) throw ShapeError("[pad] flat padding must have an even number of pads");
    if (static_cast<int64_t>(flat.size() / 2) > x.ndim())
      throw ShapeError("[pad] " + std::to_string(flat.size()) + " pads for shape " + shape_str(x.shape()));
    out.assign(x.ndim() - flat.size() / 2, {0, 0});
    for (size_t i = flat.size(); i >= 2; i -= 2) out.push_back({flat[i - 2], flat[i - 1]});
  }
  if (static_cast<int64_t>(out.size()) != x.ndim())
    throw ShapeError("[pad] padding for " + std::to_string(out.size()) + " axes, shape " + shape_str(x.shape()));
  return out;
}

Shape keep_none(const Tensor& x, Shape s, const char* op) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != INT64_MIN) continue;
    if (static_cast<int64_t>(i) >= x.ndim()) throw ShapeError(std::string("[") + op + "] None past the last axis of " + shape_str(x.shape()));
    s[i] = x.shape()[i];
  }
  return s;
}

// tinygrad's size=/fill_value= on data-dependent results: exactly `size` rows, cut or filled.
Tensor fixed_rows(const Tensor& r, const py::object& size, const py::object& fill, const char* op) {
  if (size.is_none()) return r;
  int64_t n = int_list(size, op).at(0), have = r.shape()[0];
  if (n <= have) return r.shrink_to([&] { Shape s = r.shape(); s[0] = n; return s; }());
  Pairs p(r.ndim(), {0, 0});
  p[0] = {0, n - have};
  // The fill takes the result's dtype (an index stays an integer: nonzero(fill_value=-1.5) is -1).
  py::object f = r.dtype() != DType::Bool && !is_float(r.dtype()) && py::isinstance<py::float_>(fill) ? py::int_(fill) : fill;
  return r.pad(p, "constant", scalar_arg(f, op));
}

// A shape given as varargs, one sequence, or tinygrad's keyword (`reshape(shape=(2, 3))`,
// `permute(order=...)`): the keyword's value is the one sequence.
Shape shape_or_kw(const py::args& s, const py::kwargs& kw, const char* key, const char* op) {
  if (kw.empty()) return shape_args(s, op);
  if (kw.size() != 1 || !kw.contains(key) || !s.empty())
    throw py::type_error(std::string(op) + "() takes the shape as arguments or as " + key + "=, not both or others");
  return shape_args(py::make_tuple(kw[key]), op);
}

}  // namespace

void bind_movement(py::class_<Tensor>& t) {
  t.def("reshape", [](const Tensor& x, const py::args& s, const py::kwargs& kw) {
    return x.reshape(keep_none(x, shape_or_kw(s, kw, "shape", "reshape"), "reshape"));
  });
  t.def("view", [](const Tensor& x, const py::args& s, const py::kwargs& kw) {
    return x.view(keep_none(x, shape_or_kw(s, kw, "shape", "view"), "view"));
  });
  t.def("expand", [](const Tensor& x, const py::args& s, const py::kwargs& kw) { return x.expand_to(shape_or_kw(s, kw, "shape", "expand")); });
  t.def("permute", [](const Tensor& x, const py::args& s, const py::kwargs& kw) { return x.permute(shape_or_kw(s, kw, "order", "permute")); });
  t.def("flip", [](const Tensor& x, const py::args& s, const py::kwargs& kw) { return x.flip(shape_or_kw(s, kw, "axis", "flip")); });
  t.def("repeat", [](const Tensor& x, const py::args& s, const py::kwargs& kw) { return x.repeat(shape_or_kw(s, kw, "repeats", "repeat")); });
  t.def("shrink_to", [](const Tensor& x, const py::args& s, const py::kwargs& kw) {
    return x.shrink_to(shape_or_kw(s, kw, "shape", "shrink_to"));
  });
  t.def("pad_to", [](const Tensor& x, const py::args& s, const py::object& value) {
    Shape to = shape_args(s, "pad_to");
    if (static_cast<int64_t>(to.size()) != x.ndim())
      throw ShapeError("[pad_to] shape " + shape_str(to) + " for a tensor of shape " + shape_str(x.shape()));
    Pairs p;
    for (int64_t i = 0; i < x.ndim(); ++i) p.push_back({0, to[i] < 0 ? 0 : to[i] - x.shape()[i]});
    return x.pad(p, "constant", scalar_arg(value, "pad_to"));
  }, py::kw_only(), py::arg("value") = 0);
  t.def("shrink", [](const Tensor& x, const py::sequence& arg) {
    if (static_cast<int64_t>(arg.size()) != x.ndim())
      throw ShapeError("[shrink] " + std::to_string(arg.size()) + " ranges for shape " + shape_str(x.shape()));
    Pairs p;
    for (size_t i = 0; i < arg.size(); ++i) {
      if (arg[i].is_none()) { p.push_back({0, x.shape()[i]}); continue; }
      auto v = int_list(arg[i], "shrink");
      if (v.size() != 2) throw ShapeError("[shrink] each axis needs (start, end)");
      p.push_back({v[0], v[1]});
    }
    return x.shrink(p);
  }, py::arg("arg"));
  t.def("pad", [](const Tensor& x, const py::object& padding, const std::string& mode, const py::object& value) {
    if (mode != "constant" && mode != "reflect" && mode != "replicate" && mode != "circular")  // tinygrad's class
      raise_builtin(PyExc_NotImplementedError, "[pad] mode '" + mode + "' is not supported");
    return x.pad(padding_of(x, padding), mode, scalar_arg(value, "pad"));
  }, py::arg("padding"), py::arg("mode") = "constant", py::arg("value") = 0.0);
  t.def("transpose", &Tensor::transpose, py::arg("dim0") = 1, py::arg("dim1") = 0);
  t.def_property_readonly("T", &Tensor::T);
  t.def("flatten", &Tensor::flatten, py::arg("start_dim") = 0, py::arg("end_dim") = -1);
  t.def("unflatten", [](const Tensor& x, int64_t dim, const py::object& sizes) { return x.unflatten(dim, int_list(sizes, "unflatten")); },
        py::arg("dim"), py::arg("sizes"));
  t.def("squeeze", [](const Tensor& x, std::optional<int64_t> d) { return x.squeeze(d); }, py::arg("dim") = py::none());
  t.def("unsqueeze", &Tensor::unsqueeze, py::arg("dim"));
  t.def("repeat_interleave", [](const Tensor& x, int64_t r, std::optional<int64_t> d) { return x.repeat_interleave(r, d); },
        py::arg("repeats"), py::arg("dim") = py::none());
  t.def("split", [](const Tensor& x, const py::object& sizes, int64_t dim) {
    auto parts = py::isinstance<py::int_>(sizes) ? x.split(sizes.cast<int64_t>(), dim) : x.split(int_list(sizes, "split"), dim);
    return tuple_of(parts);
  }, py::arg("sizes"), py::arg("dim") = 0);
  t.def("chunk", &Tensor::chunk, py::arg("chunks"), py::arg("dim") = 0);
  // Tensor.cat(a, b, dim=0) and a.cat(b, dim=0), as tinygrad (self is the first tensor).
  // Also Tensor.stack([a, b], dim=1): the first argument may be the whole sequence.
  t.def("cat", [](const py::object& x, const py::args& others, int64_t dim) {
    auto [first, rest] = first_and_rest(x, others, "cat");
    return first.cat(rest, dim);
  }, py::kw_only(), py::arg("dim") = 0);
  t.def("stack", [](const py::object& x, const py::args& others, int64_t dim) {
    auto [first, rest] = first_and_rest(x, others, "stack");
    return first.stack(rest, dim);
  }, py::kw_only(), py::arg("dim") = 0);
  t.def("meshgrid", [](const Tensor& x, const py::args& others, const std::string& indexing) {
    return tuple_of(x.meshgrid(others_of(others), indexing));
  }, py::kw_only(), py::arg("indexing") = "ij");
  t.def("roll", [](const Tensor& x, const py::object& shifts, const py::object& dims) {
    return x.roll(int_list(shifts, "roll"), dims.is_none() ? std::vector<int64_t>{} : int_list(dims, "roll"));
  }, py::arg("shifts"), py::arg("dims") = py::none());
  t.def("diag", &Tensor::diag);
  t.def("diagonal", &Tensor::diagonal, py::arg("offset") = 0, py::arg("dim1") = 0, py::arg("dim2") = 1);
  t.def("unfold", &Tensor::unfold, py::arg("dim"), py::arg("size"), py::arg("step"));
  t.def("rearrange", [](const Tensor& x, const std::string& formula, const py::kwargs& sizes) {
    std::vector<std::pair<std::string, int64_t>> s;
    for (auto [k, v] : sizes) s.push_back({k.cast<std::string>(), int_list(v, "rearrange").at(0)});
    return x.rearrange(formula, s);
  }, py::arg("formula"));
  t.def("triu", &Tensor::triu, py::arg("diagonal") = 0);
  t.def("tril", &Tensor::tril, py::arg("diagonal") = 0);

  // ---- index-driven ----
  t.def("gather", &Tensor::gather, py::arg("dim"), py::arg("index"));
  t.def("one_hot", &Tensor::one_hot, py::arg("num_classes"));
  t.def("masked_select", [](const Tensor& x, const Tensor& mask, const py::object& size, const py::object& fill) {
    return fixed_rows(x.masked_select(mask), size, fill, "masked_select");
  }, py::arg("mask"), py::arg("size") = py::none(), py::arg("fill_value") = 0);
  t.def("nonzero", [](const Tensor& x, const py::object& size, const py::object& fill) {
    return fixed_rows(x.nonzero(), size, fill, "nonzero");
  }, py::arg("size") = py::none(), py::arg("fill_value") = 0);
  t.def("scatter", [](const Tensor& x, int64_t dim, const Tensor& index, const py::object& src, const py::object& reduce) {
    std::string r = reduce.is_none() ? "" : reduce.cast<std::string>();
    if (!r.empty() && r != "add" && r != "multiply")
      throw py::type_error("[scatter] reduce='" + r + "' must be None, 'add' or 'multiply'");
    if (auto ts = tensor_of(src)) {
      if (!r.empty())  // tinygrad: a tensor src with reduce is scatter_reduce's job
        throw py::type_error("[scatter] a tensor src is not supported with reduce; use scatter_reduce");
      return x.scatter(dim, index, *ts, r);
    }
    return x.scatter(dim, index, scalar_arg(src, "scatter"), r);
  }, py::arg("dim"), py::arg("index"), py::arg("src"), py::arg("reduce") = py::none());
  t.def("scatter_reduce", &Tensor::scatter_reduce, py::arg("dim"), py::arg("index"), py::arg("src"), py::arg("reduce"),
        py::arg("include_self") = true);
  t.def("interpolate", [](const Tensor& x, const py::object& size, const std::string& mode, bool align) {
    return x.interpolate(int_list(size, "interpolate"), mode, align);
  }, py::arg("size"), py::arg("mode") = "linear", py::arg("align_corners") = false);
}

}  // namespace maroon::py_bind
