// dot, matmul, linear (tinygrad's mixin/op.py): broadcast MUL then sum(-1); attention and the
// decompositions. einsum: src/api/einsum.cpp.
#include <cmath>
#include <map>

#include "api/dot_graph.h"
#include "api/internal.h"
#include "core/fpenv.h"
#include "maroon/tensor.h"
#include "maroon/primitives.h"

namespace maroon {

namespace {
thread_local bool g_fused = false;
}  // namespace

bool current_fused() { return g_fused; }
void set_current_fused(bool on) { g_fused = on; }

namespace api {
// Whether a contraction of these operands runs fused: the call's choice, else FusedScope's; only
// float results have roundings to fuse.
bool use_fused(std::optional<bool> fused, DType out) {
  return fused.value_or(current_fused()) && is_float(out);
}
}  // namespace api

Tensor Tensor::dot(const Tensor& w, std::optional<DType> dtype, std::optional<bool> fused) const {
  int64_t dx = ndim(), dw = w.ndim();
  if (dx == 0 || dw == 0)
    throw ShapeError("[dot] both tensors need to be at least 1D, got " + shape_str(shape()) + " and " +
                     shape_str(w.shape()));
  int64_t axis_w = -std::min<int64_t>(dw, 2);
  if (shape().back() != w.shape()[dw + axis_w])
    throw ShapeError("[dot] cannot dot " + shape_str(shape()) + " and " + shape_str(w.shape()));
  int64_t mid = std::min<int64_t>({dx - 1, dw - 1, 1});
  Shape xs;  // each shape in one block, not regrown per insert
  xs.reserve(dx + mid);
  xs.assign(shape().begin(), shape().end() - 1);
  xs.insert(xs.end(), mid, 1);
  xs.push_back(shape().back());
  Shape ws;
  ws.reserve(dw + mid);
  ws.assign(w.shape().begin(), w.shape().end() - std::min<int64_t>(dw, 2));
  ws.insert(ws.end(), mid, 1);
  ws.insert(ws.end(), w.shape().end() + axis_w, w.shape().end());
  // The common case's nodes made directly (dot_graph.cpp): the same graph, without a Tensor
  // for each intermediate.
  if (api::dot_direct_applies(this->dtype(), w.dtype(), dtype) && !api::use_fused(fused, this->dtype()))
    if (std::optional<Tensor> r = api::dot_direct(*this, w, xs, ws, dw > 1)) return std::move(*r);
  Tensor x = reshape(xs);
  Tensor ww = w.reshape(ws).transpose(-1, axis_w);
  DType out = dtype ? *dtype : concrete(least_upper_dtype(x.dtype(), ww.dtype()));
  if (api::use_fused(fused, out)) {
    // The operands are cast to the accumulation dtype (exact for every float widening) and the
    // products are never rounded on their own: one MULACC per k.
    DType acc = dtype ? *dtype : sum_acc_dtype(out);
    Tensor r = prim::fused_reduce(x.cast(acc), ww.cast(acc), {-1});
    return r.reshape(Shape(r.shape().begin(), r.shape().end() - 1)).cast(out);
  }
  return (x * ww).sum(-1, false, dtype).cast(out);
}

Tensor Tensor::matmul(const Tensor& x, std::optional<DType> dtype, std::optional<bool> fused) const {
  return dot(x, dtype, fused);
}

Tensor Tensor::linear(const Tensor& weight, std::optional<Tensor> bias, std::optional<bool> fused) const {
  Tensor x = weight.ndim() == 1 ? mul(weight) : dot(weight, std::nullopt, fused);
  return bias ? x.add(*bias) : x;
}

Tensor Tensor::scaled_dot_product_attention(const Tensor& key, const Tensor& value, std::optional<Tensor> attn_mask,
                                            double dropout_p, bool is_causal) const {
  DType acc = concrete(least_upper_dtype(least_upper_dtype(dtype(), key.dtype()), DType::Float32));
  Tensor qk = matmul(key.transpose(-2, -1), acc).div(in_ieee_env([&] { return std::sqrt(static_cast<double>(shape().back())); }));
  if (is_causal) {
    if (attn_mask) throw ShapeError("[scaled_dot_product_attention] cannot set attn_mask when is_causal=true");
    attn_mask = api::filled(qk.shape(), true, DType::Bool).tril();
  }
  if (attn_mask) {
    Tensor m = attn_mask->dtype() == DType::Bool ? attn_mask->where(0.0, -INFINITY) : *attn_mask;
    qk = qk + m;
  }
  return qk.cast(dtype()).softmax(-1).dropout(dropout_p).matmul(value);
}

}  // namespace maroon
