// The Tensor object itself: construction, properties, reading data out, autograd and indexing.
#include <cstring>

#include "bind.h"
#include "fast_methods.h"
#include "maroon/read.h"

namespace maroon::py_bind {

namespace {

std::string type_name(const py::handle& o) { return py::str(py::type::of(o).attr("__name__")); }

std::optional<int64_t> opt_int(const py::handle& o) {
  if (o.is_none()) return std::nullopt;
  return int_list(o, "getitem").at(0);
}

Index index_entry(const py::handle& o) {
  if (o.is_none()) return Index::none();
  if (o.ptr() == Py_Ellipsis) return Index::ellipsis();
  if (py::isinstance<py::slice>(o))
    return Index(slice(opt_int(o.attr("start")), opt_int(o.attr("stop")), opt_int(o.attr("step"))));
  if (py::isinstance<py::bool_>(o)) throw IndexError("[getitem] bool indices are not supported");
  if (auto t = tensor_of(o)) return Index(*t);
  if (auto s = scalar_of(o); s && s->kind == Scalar::Kind::Int) return Index(s->i);
  throw IndexError("[getitem] unsupported index type " + type_name(o));
}

// tinygrad's rule: a tuple is one entry per axis; a list of ints is one index tensor.
std::vector<Index> index_of(const py::handle& idx) {
  std::vector<Index> out;
  if (py::isinstance<py::tuple>(idx))
    for (auto o : py::reinterpret_borrow<py::tuple>(idx)) out.push_back(index_entry(o));
  else
    out.push_back(index_entry(idx));
  return out;
}

// One axis of a basic index: the coordinates start, start+step, ... (count of them).
struct Run {
  int64_t start, step, count;
};

// Moves axis `a` of t (count entries) to coordinates start + k*step of an axis of `size`, zero
// (false) elsewhere: flips, interleaves and pads, all views.
Tensor place(Tensor t, size_t a, Run r, int64_t size) {
  if (r.step < 0) {
    t = t.flip({static_cast<int64_t>(a)});
    r.start += (r.count - 1) * r.step;
    r.step = -r.step;
  }
  if (r.step > 1) {
    Shape s = t.shape();
    t = t.unsqueeze(static_cast<int64_t>(a) + 1);
    Pairs p(t.ndim(), {0, 0});
    p[a + 1] = {0, r.step - 1};
    Shape merged = s;
    merged[a] = r.count * r.step;
    t = t.pad(p).reshape(merged);
    Pairs sh;
    for (int64_t d : merged) sh.push_back({0, d});
    sh[a] = {0, (r.count - 1) * r.step + 1};
    t = t.shrink(sh);
  }
  Pairs p(t.ndim(), {0, 0});
  p[a] = {r.start, size - r.start - ((r.count - 1) * r.step + 1)};
  return t.pad(p);
}

// x[idx] = v for ints, slices, None and Ellipsis: v and a mask placed at the selected box, then
// one WHERE (O(numel)). Returns false for anything else (index tensors, lists, bad indices).
bool set_box(Tensor& x, const py::handle& idx, const Tensor& val) {
  std::vector<py::handle> entries;
  if (py::isinstance<py::tuple>(idx))
    for (auto o : py::reinterpret_borrow<py::tuple>(idx)) entries.push_back(o);
  else
    entries.push_back(idx);
  int64_t real = 0, ellipses = 0;
  for (auto o : entries) {
    if (o.ptr() == Py_Ellipsis) ++ellipses;
    else if (py::isinstance<py::slice>(o) || (!py::isinstance<py::bool_>(o) && scalar_of(o) && scalar_of(o)->kind == Scalar::Kind::Int)) ++real;
    else if (!o.is_none()) return false;
  }
  if (ellipses > 1 || real > x.ndim()) return false;
  std::vector<Run> runs;
  Shape view;
  int64_t d = 0;
  auto full = [&] { runs.push_back({0, 1, x.shape()[d]}); view.push_back(x.shape()[d]); ++d; };
  for (auto o : entries) {
    if (o.is_none()) { view.push_back(1); continue; }
    if (o.ptr() == Py_Ellipsis) { for (int64_t k = 0; k < x.ndim() - real; ++k) full(); continue; }
    int64_t size = x.shape()[d];
    if (py::isinstance<py::slice>(o)) {
      Py_ssize_t start, stop, step;
      if (PySlice_Unpack(o.ptr(), &start, &stop, &step) < 0) { PyErr_Clear(); return false; }
      Py_ssize_t n = PySlice_AdjustIndices(size, &start, &stop, step);
      runs.push_back({start, step, n});
      view.push_back(n);
    } else {
      int64_t i = scalar_of(o)->i;
      if (i < -size || i >= size) return false;  // the general path raises the IndexError
      runs.push_back({i < 0 ? i + size : i, 1, 1});
    }
    ++d;
  }
  while (d < x.ndim()) full();
  for (const Run& r : runs)
    if (r.count == 0) return true;  // nothing selected
  Shape box;
  for (const Run& r : runs) box.push_back(r.count);
  Tensor v = val.expand_to(view).reshape(box);
  Tensor m = Tensor::ones(box, DType::Bool);
  for (size_t a = 0; a < runs.size(); ++a) {
    v = place(v, a, runs[a], x.shape()[a]);
    m = place(m, a, runs[a], x.shape()[a]);
  }
  x.assign(m.where(v, x));
  return true;
}

// x[idx] = v. Basic indices place v directly; index tensors go through the flat positions x[idx]
// reads and a scatter. Every handle of x sees the result (assign), as in tinygrad.
void setitem(Tensor& x, const py::handle& idx, const py::handle& v) {
  Tensor val = py::isinstance<Tensor>(v) ? v.cast<Tensor>() : from_python(v, x.dtype());
  if (val.dtype() != x.dtype())
    throw DTypeError("[setitem] dtype mismatch: tensor is " + std::string(dtype_name(x.dtype())) + ", value is " +
                     std::string(dtype_name(val.dtype())));
  if (set_box(x, idx, val)) return;
  DType pos_dtype = x.numel() > INT32_MAX ? DType::Int64 : DType::Int32;
  Tensor pos = Tensor::arange(x.numel(), pos_dtype).reshape(x.shape())[index_of(idx)];
  Tensor placed = val.expand_to(pos.shape()).flatten();
  x.assign(x.flatten().scatter(0, pos.flatten(), placed).reshape(x.shape()));
}

// The one element as numpy's item() gives it (bool, int, float), read straight from the bytes
// without building an array: the common per-step read (a loss). float16 and bfloat16 keep going
// through numpy (bfloat16 widened by the engine's cast), so their values are numpy's.
py::object item_of(const Tensor& x) {
  if (x.numel() != 1) x.item();  // throws C++'s [item] error naming the shape
  const DType d = x.dtype();
  if (d == DType::Float16 || d == DType::BFloat16) return to_numpy(x).attr("item")();
  uint64_t bits = 0;
  copy_bytes_to(x, &bits, itemsize(d));  // little-endian hosts only
  auto sext = [&](int w) { return static_cast<long long>(bits << (64 - w)) >> (64 - w); };
  switch (d) {
    case DType::Bool: return py::bool_(bits != 0);
    case DType::Int8: return py::int_(sext(8));
    case DType::Int16: return py::int_(sext(16));
    case DType::Int32: return py::int_(sext(32));
    case DType::Int64: return py::int_(static_cast<long long>(bits));
    case DType::Float32: {
      float f;
      std::memcpy(&f, &bits, 4);
      return py::float_(static_cast<double>(f));  // exact, as numpy's float32.item()
    }
    case DType::Float64: {
      double f;
      std::memcpy(&f, &bits, 8);
      return py::float_(f);
    }
    default: return py::int_(static_cast<unsigned long long>(bits));  // uint8..uint64
  }
}

// x.item(), the per-step read of a loss: a METH_NOARGS descriptor, no pybind11 dispatch.
PyObject* item_descr(PyObject* self, PyObject*) {
  return call_guarded([&] { return item_of(py::handle(self).cast<const Tensor&>()).release().ptr(); });
}

// x.numpy(), the read at the end of most calls: a METH_NOARGS descriptor, as item() (pybind11's
// dispatcher was ~0.2 us of a 64x64 product's ~11 us call).
PyObject* numpy_descr(PyObject* self, PyObject*) {
  return call_guarded([&] { return to_numpy(py::handle(self).cast<const Tensor&>()).release().ptr(); });
}

}  // namespace

void bind_tensor_core(py::class_<Tensor>& t) {
  // Tensor(data, device=None, dtype=None): Python floats default to float32 and ints to int32,
  // as in tinygrad; the device is accepted and ignored (there is one).
  t.def(py::init([](const py::object& data, const py::object&, const py::object& dtype, const py::object&) {
          return from_python(data, dtype_arg(dtype));
        }),
        py::arg("data") = py::none(), py::arg("device") = py::none(), py::arg("dtype") = py::none(),
        py::arg("requires_grad") = py::none());

  // ---- properties ----
  t.def_property_readonly("shape", [](const Tensor& x) { return py::tuple(py::cast(x.shape())); });
  t.def_property_readonly("dtype", &Tensor::dtype);
  t.def_property_readonly("ndim", &Tensor::ndim);
  t.def_property_readonly("device", [](const Tensor&) { return "CPU"; });
  t.def_property_readonly("max_shape", [](const Tensor& x) { return py::tuple(py::cast(x.shape())); });
  t.def("numel", &Tensor::numel);
  t.def("max_numel", &Tensor::max_numel);
  t.def("element_size", &Tensor::element_size);
  t.def("nbytes", &Tensor::nbytes);
  t.def("is_floating_point", &Tensor::is_floating_point);
  t.def("size", [](const Tensor& x, const py::object& dim) -> py::object {
    if (dim.is_none()) return py::tuple(py::cast(x.shape()));
    return py::int_(x.size(int_list(dim, "size").at(0)));
  }, py::arg("dim") = py::none());
  t.def("to", [](const Tensor& x, const py::object&) { return x; }, py::arg("device"));
  t.def("to_", [](const Tensor& x, const py::object&) { return x; }, py::arg("device"));
  // Every float tensor in a graph gets a gradient (tinygrad has no requires_grad flag any
  // more); the setter is accepted for older tinygrad and PyTorch programs.
  t.def_property("requires_grad", [](const Tensor& x) { return x.is_floating_point(); },
                 [](Tensor&, const py::object&) {});

  // ---- data out ----
  t.def("numpy", &to_numpy);
  def_descriptor(t, "numpy", &numpy_descr, METH_NOARGS, py::str(t.attr("numpy").attr("__doc__")));
  t.def("__array__", [](const Tensor& x, const py::object& dtype) {
    py::array a = to_numpy(x);
    return dtype.is_none() ? a : py::array(a.attr("astype")(dtype));
  }, py::arg("dtype") = py::none());
  t.def("tolist", [](const Tensor& x) { return to_numpy(x).attr("tolist")(); });
  t.def("item", &item_of);
  def_descriptor(t, "item", &item_descr, METH_NOARGS, py::str(t.attr("item").attr("__doc__")));
  t.def("data", [](const Tensor& x) { return py::memoryview(to_numpy(x).attr("reshape")(-1)); });
  t.def("realize", [](Tensor& x, const py::args& others) {
    // Handles of their own on the nodes, then the graphs run without the GIL (to_numpy too).
    std::vector<Tensor> run;
    for (auto o : others) run.emplace_back(o.cast<Tensor&>().node());
    run.emplace_back(x.node());
    {
      py::gil_scoped_release release;
      for (Tensor& r : run) r.realize();
    }
    return x;
  });
  t.def("__repr__", [](const Tensor& x) {
    return "<Tensor shape=" + shape_str(x.shape()) + " dtype=dtypes." + std::string(dtype_name(x.dtype())) + ">";
  });
  t.def("__len__", [](const Tensor& x) {
    if (x.ndim() == 0) throw py::type_error("len() of a 0-d tensor");
    return x.shape()[0];
  });
  t.def("__bool__", [](const Tensor&) -> bool { throw py::type_error("__bool__ on Tensor is not defined"); });
  t.def("__hash__", [](const Tensor& x) { return reinterpret_cast<intptr_t>(x.state().get()); });

  // ---- autograd ----
  t.def_property("grad", &Tensor::grad, [](Tensor& x, std::optional<Tensor> g) { x.set_grad(g); });
  t.def("backward", [](Tensor& x, std::optional<Tensor> g) { x.backward(g); return x; },
        py::arg("gradient") = py::none());
  t.def("gradient", [](const Tensor& x, const py::args& targets, std::optional<Tensor> g) {
    std::vector<Tensor> ts;
    for (auto o : targets) ts.push_back(o.cast<Tensor>());
    return x.gradient(ts, g);
  }, py::kw_only(), py::arg("gradient") = py::none());
  t.def("detach", &Tensor::detach);
  t.def("contiguous", [](const Tensor& x, const py::kwargs&) { return x.contiguous(); });
  t.def("contiguous_backward", &Tensor::contiguous_backward);
  t.def("clone", [](const Tensor& x, const py::object&) { return x.clone(); }, py::arg("device") = py::none());
  t.def("assign", [](Tensor& x, const py::object& v) {
    Tensor val = py::isinstance<Tensor>(v) ? v.cast<Tensor>() : from_python(v, x.dtype());
    x.assign(val);
    return x;
  }, py::arg("x"));
  t.def("replace", [](Tensor& x, const Tensor& v) { x.assign(v); return x; }, py::arg("x"));

  // ---- indexing ----
  t.def("__getitem__", [](const Tensor& x, const py::object& idx) { return x[index_of(idx)]; });
  t.def("__setitem__", [](Tensor& x, const py::object& idx, const py::object& v) { setitem(x, idx, v); });
  t.def("__delitem__", [](Tensor&, const py::object&) { throw py::type_error("Tensor does not support deleting items"); });
}

}  // namespace maroon::py_bind
