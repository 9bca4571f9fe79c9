// Tensor methods that are layers: linear, convolution, pooling, normalization, attention, the
// losses, and the linear algebra (einsum, qr, svd, keccak).
#include "bind.h"

namespace maroon::py_bind {

namespace {

// kernel_size / stride / dilation / padding: an int or a tuple (tinygrad's make_tuple).
std::vector<int64_t> ints(const py::handle& o, const char* op) { return int_list(o, op); }

// One int stands for a square kernel (tinygrad's make_tuple); the C++ pools check the values.
std::vector<int64_t> kernel_of(const py::handle& o) {
  auto k = ints(o, "pool");
  return k.size() == 1 ? std::vector<int64_t>{k[0], k[0]} : k;
}

std::vector<int64_t> stride_of(const py::handle& o) {
  return o.is_none() ? std::vector<int64_t>{} : ints(o, "pool");
}

// Arguments tinygrad's Python signature has and the C++ API does not (dtype=): the
// binding refuses a value it cannot pass on. Every other check is the C++ API's.
void refuse(bool given, const char* op, const char* what) {
  if (given) throw ShapeError(std::string("[") + op + "] " + what + " is not supported");
}

// tinygrad's resolve_pool_pads: flat (left, right, top, bottom, ...) pads, last axis first.
std::vector<int64_t> pool_pads(const std::vector<int64_t>& p, size_t dims, const char* op) {
  if (p.size() == 1) return std::vector<int64_t>(2 * dims, p[0]);
  if (p.size() == 2 * dims) return p;
  if (p.size() != dims)
    throw ShapeError(std::string("[") + op + "] padding must be an int or " + std::to_string(dims) + " or " +
                     std::to_string(2 * dims) + " ints, got " + shape_str(p));
  std::vector<int64_t> out;
  for (auto it = p.rbegin(); it != p.rend(); ++it) out.insert(out.end(), {*it, *it});
  return out;
}

int64_t floordiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// tinygrad's _apply_ceil_mode: extra padding after each spatial axis so that the pool's output
// size is the ceil division (a window may not start in that extra padding). Kernel, stride and
// dilation are per axis here; the C++ pool checks them.
std::vector<int64_t> ceil_pads(const Tensor& x, std::vector<int64_t> pads, const std::vector<int64_t>& k,
                               std::vector<int64_t> s, std::vector<int64_t> d) {
  const size_t n = k.size();
  if (s.empty()) s = k;
  if (s.size() == 1) s.assign(n, s[0]);
  if (d.size() == 1) d.assign(n, d[0]);
  if (s.size() != n || d.size() != n || x.ndim() < static_cast<int64_t>(n)) return pads;  // the pool reports it
  for (size_t j = 0; j < n; ++j) {
    const int64_t i = x.shape()[x.ndim() - n + j], pb = pads[2 * (n - 1 - j)], pa = pads[2 * (n - 1 - j) + 1];
    const int64_t span = d[j] * (k[j] - 1) + 1;
    if (s[j] < 1) return pads;
    const int64_t o = -floordiv(-(i + pb + pa - span), s[j]) + 1;
    pads[2 * (n - 1 - j) + 1] = pa + s[j] * (o - 1) + span - (i + pb + pa) - std::max<int64_t>(s[j] * (o - 1) - (pb + i - 1), 0);
  }
  return pads;
}

}  // namespace

void bind_layers(py::class_<Tensor>& t) {
  t.def("linear", [](const Tensor& x, const Tensor& w, std::optional<Tensor> b, const py::object& d, std::optional<bool> fused) {
    auto dt = dtype_arg(d);
    if (!dt) return x.linear(w, b, fused);
    Tensor y = w.ndim() == 1 ? x.mul(w) : x.dot(w, dt, fused);  // tinygrad's linear with an accumulation dtype
    return b ? y.add(*b) : y;
  }, py::arg("weight"), py::arg("bias") = py::none(), py::arg("dtype") = py::none(), py::arg("fused") = py::none());
  t.def("conv2d", [](const Tensor& x, const Tensor& w, std::optional<Tensor> b, int64_t groups, const py::object& stride,
                     const py::object& dilation, const py::object& padding, const py::object& d, std::optional<bool> fused) {
    refuse(!d.is_none(), "conv2d", "dtype=");
    return x.conv2d(w, b, groups, ints(stride, "conv2d"), ints(dilation, "conv2d"), ints(padding, "conv2d"), fused);
  }, py::arg("weight"), py::arg("bias") = py::none(), py::arg("groups") = 1, py::arg("stride") = 1, py::arg("dilation") = 1,
     py::arg("padding") = 0, py::arg("dtype") = py::none(), py::arg("fused") = py::none());
  t.def("conv_transpose2d", [](const Tensor& x, const Tensor& w, std::optional<Tensor> b, int64_t groups, const py::object& stride,
                               const py::object& dilation, const py::object& padding, const py::object& out_pad) {
    return x.conv_transpose2d(w, b, groups, ints(stride, "conv_transpose2d"), ints(dilation, "conv_transpose2d"),
                              ints(padding, "conv_transpose2d"), ints(out_pad, "conv_transpose2d"));
  }, py::arg("weight"), py::arg("bias") = py::none(), py::arg("groups") = 1, py::arg("stride") = 1, py::arg("dilation") = 1,
     py::arg("padding") = 0, py::arg("output_padding") = 0);
  t.def("max_pool2d", [](const Tensor& x, const py::object& k, const py::object& s, const py::object& dil, const py::object& pad,
                         bool ceil_mode, bool return_indices) -> py::object {
    auto kk = kernel_of(k);
    auto pads = ints(pad, "max_pool2d");
    // ceil_mode: more padding after each axis, with the dtype's minimum as every max_pool2d pad
    if (ceil_mode) pads = ceil_pads(x, pool_pads(pads, kk.size(), "max_pool2d"), kk, stride_of(s), ints(dil, "max_pool2d"));
    if (return_indices) return py::cast(x.max_pool2d_with_indices(kk, stride_of(s), ints(dil, "max_pool2d"), pads));
    return py::cast(x.max_pool2d(kk, stride_of(s), ints(dil, "max_pool2d"), pads));
  }, py::arg("kernel_size") = py::make_tuple(2, 2), py::arg("stride") = py::none(), py::arg("dilation") = 1,
     py::arg("padding") = 0, py::arg("ceil_mode") = false, py::arg("return_indices") = false);
  t.def("avg_pool2d", [](const Tensor& x, const py::object& k, const py::object& s, const py::object& dil, const py::object& pad,
                         bool ceil_mode, bool count_include_pad) {
    auto kk = kernel_of(k), d = ints(dil, "avg_pool2d"), pads = ints(pad, "avg_pool2d");
    if (!ceil_mode) return x.avg_pool2d(kk, stride_of(s), d, pads, count_include_pad);
    auto reg = pool_pads(pads, kk.size(), "avg_pool2d"), cp = ceil_pads(x, reg, kk, stride_of(s), d);
    if (!count_include_pad) return x.avg_pool2d(kk, stride_of(s), d, cp, false);
    // tinygrad's formula: the window sums over all the padding, divided by the count of the input
    // and regular padding only (the ceil padding is never counted). The same as x padded by the
    // regular pads, then pooled over the ceil pads with count_include_pad=False: the same sums,
    // the same counts, the same bits.
    if (x.ndim() < static_cast<int64_t>(kk.size())) return x.avg_pool2d(kk, stride_of(s), d, cp, false);  // reports it
    Pairs grouped(x.ndim(), {0, 0});
    std::vector<int64_t> extra(cp.size());
    for (size_t j = 0; j < kk.size(); ++j)
      grouped[x.ndim() - kk.size() + j] = {reg[2 * (kk.size() - 1 - j)], reg[2 * (kk.size() - 1 - j) + 1]};
    for (size_t i = 0; i < cp.size(); ++i) extra[i] = cp[i] - reg[i];
    return x.pad(grouped).avg_pool2d(kk, stride_of(s), d, extra, false);
  }, py::arg("kernel_size") = py::make_tuple(2, 2), py::arg("stride") = py::none(), py::arg("dilation") = 1,
     py::arg("padding") = 0, py::arg("ceil_mode") = false, py::arg("count_include_pad") = true);
  t.def("max_unpool2d", [](const Tensor& x, const Tensor& idx, const py::object& k, const py::object& s, const py::object& dil,
                           const py::object& pad, const py::object& out) {
    std::optional<Shape> os;
    if (!out.is_none()) os = ints(out, "max_unpool2d");
    return x.max_unpool2d(idx, kernel_of(k), stride_of(s), ints(dil, "max_unpool2d"), ints(pad, "max_unpool2d"), os);
  }, py::arg("indices"), py::arg("kernel_size") = py::make_tuple(2, 2), py::arg("stride") = py::none(),
     py::arg("dilation") = 1, py::arg("padding") = 0, py::arg("output_size") = py::none());
  t.def("batchnorm", [](const Tensor& x, std::optional<Tensor> w, std::optional<Tensor> b, const Tensor& mean, const Tensor& invstd,
                        const py::object& axis) { return x.batchnorm(w, b, mean, invstd, axis_arg(axis)); },
        py::arg("weight"), py::arg("bias"), py::arg("mean"), py::arg("invstd"), py::arg("axis") = 1);
  t.def("layernorm", [](const Tensor& x, const py::object& axis, double eps) { return x.layernorm(axis_arg(axis), eps); },
        py::arg("axis") = -1, py::arg("eps") = 1e-5);
  t.def("scaled_dot_product_attention", [](const Tensor& q, Tensor k, Tensor v, std::optional<Tensor> mask, double p,
                                           bool causal, bool gqa) {
    if (gqa) {  // tinygrad's enable_gqa: repeat the key/value heads to the query's
      if (q.ndim() < 3 || k.ndim() < 3) throw ShapeError("[scaled_dot_product_attention] enable_gqa needs 3-D inputs");
      int64_t r = q.shape()[q.ndim() - 3] / k.shape()[k.ndim() - 3];
      k = k.repeat_interleave(r, -3);
      v = v.repeat_interleave(r, -3);
    }
    return q.scaled_dot_product_attention(k, v, mask, p, causal);
  }, py::arg("key"), py::arg("value"), py::arg("attn_mask") = py::none(), py::arg("dropout_p") = 0.0,
     py::arg("is_causal") = false, py::arg("enable_gqa") = false);

  // ---- losses ----
  t.def("sparse_categorical_crossentropy", [](const Tensor& x, const Tensor& y, int64_t ignore, double ls, const std::string& r) {
    return x.sparse_categorical_crossentropy(y, ignore, ls, reduction_from_name(r));
  }, py::arg("Y"), py::arg("ignore_index") = -1, py::arg("label_smoothing") = 0.0, py::arg("reduction") = "mean");
  t.def("cross_entropy", [](const Tensor& x, const Tensor& y, const std::string& r, double ls) {
    return x.cross_entropy(y, reduction_from_name(r), ls);
  }, py::arg("Y"), py::arg("reduction") = "mean", py::arg("label_smoothing") = 0.0);
  t.def("nll_loss", [](const Tensor& x, const Tensor& y, std::optional<Tensor> w, std::optional<int64_t> ignore, const std::string& r) {
    return x.nll_loss(y, w, ignore, reduction_from_name(r));
  }, py::arg("Y"), py::arg("weight") = py::none(), py::arg("ignore_index") = py::none(), py::arg("reduction") = "mean");
  t.def("binary_crossentropy", [](const Tensor& x, const Tensor& y, const std::string& r) {
    return x.binary_crossentropy(y, reduction_from_name(r));
  }, py::arg("Y"), py::arg("reduction") = "mean");
  t.def("binary_crossentropy_logits", [](const Tensor& x, const Tensor& y, const std::string& r, std::optional<Tensor> pw) {
    return x.binary_crossentropy_logits(y, reduction_from_name(r), pw);
  }, py::arg("Y"), py::arg("reduction") = "mean", py::arg("pos_weight") = py::none());
  t.def("mse", [](const Tensor& x, const Tensor& y, const std::string& r) { return x.mse(y, reduction_from_name(r)); },
        py::arg("Y"), py::arg("reduction") = "mean");

  // ---- linear algebra and hashing ----
  t.def_static("einsum", [](const std::string& formula, const py::args& ops, const py::object& d) {
    std::vector<Tensor> ts;
    for (auto o : ops) {
      if (py::isinstance<py::list>(o) || py::isinstance<py::tuple>(o))
        for (auto e : py::reinterpret_borrow<py::sequence>(o)) ts.push_back(e.cast<Tensor>());
      else
        ts.push_back(o.cast<Tensor>());
    }
    refuse(!d.is_none(), "einsum", "dtype=");
    return Tensor::einsum(formula, ts);
  }, py::arg("formula"), py::kw_only(), py::arg("dtype") = py::none());
  t.def("qr", &Tensor::qr);
  t.def("svd", &Tensor::svd, py::arg("full_matrices") = true);
  t.def("newton_schulz", [](const Tensor& x, int64_t steps, const std::vector<double>& params, double eps) {
    return x.newton_schulz(steps, params, eps);
  }, py::arg("steps"), py::arg("params"), py::arg("eps") = 1e-7);
  t.def("keccak", [](const Tensor& x, const py::object& cfg) {
    if (!py::isinstance<py::str>(cfg)) throw ShapeError("[keccak] cfg must be 'sha3_224', 'sha3_256' or 'shake_128'");
    return x.keccak(cfg.cast<std::string>());
  }, py::arg("cfg") = "sha3_256");
  t.def("hash", &Tensor::hash);
}

}  // namespace maroon::py_bind
