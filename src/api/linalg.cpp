// dot, matmul, linear and einsum (tinygrad's mixin/op.py): broadcast MUL then sum(-1).
#include <cmath>
#include <map>

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
  Shape xs(shape().begin(), shape().end() - 1);
  xs.insert(xs.end(), mid, 1);
  xs.push_back(shape().back());
  Shape ws(w.shape().begin(), w.shape().end() - std::min<int64_t>(dw, 2));
  if (dw >= 2) ws.resize(dw - 2);
  ws.insert(ws.end(), mid, 1);
  ws.insert(ws.end(), w.shape().end() + axis_w, w.shape().end());
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

Tensor Tensor::einsum(const std::string& formula_in, const std::vector<Tensor>& operands) {
  std::string formula;
  for (char c : formula_in)
    if (c != ' ') formula += c;
  std::vector<Tensor> xs = operands;
  std::string lhs, rhs;
  if (formula.find("...") != std::string::npos) {
    // Ellipsis: letters not in the formula stand for the broadcast axes, right-aligned.
    std::string ell;
    for (char c = 'A'; c <= 'z'; ++c)
      if (std::isalpha(static_cast<unsigned char>(c)) && formula.find(c) == std::string::npos) ell += c;
    size_t arrow0 = formula.find("->");
    std::string l0 = formula.substr(0, arrow0);
    std::vector<std::string> ins;
    for (size_t st = 0;;) {
      size_t cm = l0.find(',', st);
      ins.push_back(l0.substr(st, cm - st));
      if (cm == std::string::npos) break;
      st = cm + 1;
    }
    if (ins.size() != xs.size())
      throw ShapeError("[einsum] number of operands doesn't match, expected " + std::to_string(ins.size()) + ", got " +
                       std::to_string(xs.size()));
    std::vector<int64_t> ell_n;
    int64_t mx = 0;
    for (size_t i = 0; i < ins.size(); ++i) {
      int64_t k = ins[i].find("...") != std::string::npos
                      ? std::max<int64_t>(0, xs[i].ndim() - static_cast<int64_t>(ins[i].size()) + 3) : 0;
      ell_n.push_back(k);
      mx = std::max(mx, k);
    }
    std::string new_l;
    for (size_t i = 0; i < ins.size(); ++i) {
      size_t at = ins[i].find("...");
      if (at != std::string::npos) ins[i].replace(at, 3, ell.substr(mx - ell_n[i], ell_n[i]));
      new_l += (i ? "," : "") + ins[i];
    }
    std::string out;
    if (arrow0 != std::string::npos) {
      out = formula.substr(arrow0 + 2);
      size_t at = out.find("...");
      if (at != std::string::npos) out.replace(at, 3, ell.substr(0, mx));
    } else {
      std::map<char, int> count;
      for (char c : l0)
        if (std::isalpha(static_cast<unsigned char>(c))) ++count[c];
      out = ell.substr(0, mx);
      for (auto [c, n] : count)
        if (n == 1) out += c;
    }
    formula = new_l + "->" + out;
  }
  size_t arrow = formula.find("->");
  if (arrow != std::string::npos) {
    lhs = formula.substr(0, arrow);
    rhs = formula.substr(arrow + 2);
  } else {
    // Implicit output: the letters that appear once, sorted.
    lhs = formula;
    std::map<char, int> count;
    for (char c : formula)
      if (std::isalpha(static_cast<unsigned char>(c))) ++count[c];
    for (auto [c, n] : count)
      if (n == 1) rhs += c;
  }
  std::vector<std::string> inputs;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    inputs.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (inputs.size() != xs.size())
    throw ShapeError("[einsum] number of operands doesn't match, expected " + std::to_string(inputs.size()) +
                     ", got " + std::to_string(xs.size()));
  std::map<char, int64_t> sz;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (static_cast<int64_t>(inputs[i].size()) != xs[i].ndim())
      throw ShapeError("[einsum] subscripts '" + inputs[i] + "' do not match shape " + shape_str(xs[i].shape()));
    // A letter repeated within one operand takes that operand's diagonal over those axes.
    for (bool again = true; again;) {
      again = false;
      for (size_t j = 0; j < inputs[i].size() && !again; ++j) {
        size_t k = inputs[i].find(inputs[i][j], j + 1);
        if (k == std::string::npos) continue;
        Tensor& x = xs[i];
        int64_t n = x.shape()[j];
        if (x.shape()[k] != n) throw ShapeError("[einsum] repeated subscript with sizes that differ");
        std::vector<int64_t> perm;
        for (int64_t d = 0; d < x.ndim(); ++d)
          if (d != static_cast<int64_t>(j) && d != static_cast<int64_t>(k)) perm.push_back(d);
        perm.push_back(static_cast<int64_t>(j));
        perm.push_back(static_cast<int64_t>(k));
        x = x.permute(perm).diagonal(0, -2, -1);  // the diagonal axis is now last
        char c = inputs[i][j];
        inputs[i].erase(k, 1);
        inputs[i].erase(j, 1);
        inputs[i] += c;
        again = true;
      }
    }
    for (size_t j = 0; j < inputs[i].size(); ++j) {
      auto it = sz.find(inputs[i][j]);
      int64_t d = xs[i].shape()[j];
      if (it != sz.end() && it->second != d && it->second != 1 && d != 1)
        throw ShapeError("[einsum] size mismatch for subscript '" + std::string(1, inputs[i][j]) + "'");
      if (it == sz.end() || it->second == 1) sz[inputs[i][j]] = d;
    }
  }
  std::string alpha;
  for (auto& [c, n] : sz) alpha += c;  // sorted
  std::vector<Tensor> ys;
  for (size_t i = 0; i < xs.size(); ++i) {
    const std::string& s = inputs[i];
    if (s.empty()) {
      ys.push_back(xs[i]);
      continue;
    }
    std::string sorted_s = s;
    std::sort(sorted_s.begin(), sorted_s.end());
    std::vector<int64_t> perm;
    for (char c : sorted_s) perm.push_back(static_cast<int64_t>(s.find(c)));
    Shape rs;
    for (char c : alpha) rs.push_back(s.find(c) != std::string::npos ? sz[c] : 1);
    ys.push_back(xs[i].permute(perm).reshape(rs));
  }
  Tensor prod = ys[0];
  for (size_t i = 1; i < ys.size(); ++i) prod = prod.mul(ys[i]);
  std::vector<int64_t> red;
  for (size_t i = 0; i < alpha.size(); ++i)
    if (rhs.find(alpha[i]) == std::string::npos) red.push_back(static_cast<int64_t>(i));
  Tensor r = red.empty() ? prod.sum(Axis(std::vector<int64_t>{}), false) : prod.sum(Axis(red));
  // The remaining axes are in sorted order; permute to rhs: argsort(argsort(rhs)).
  std::vector<int64_t> a(rhs.size()), inv(rhs.size());
  for (size_t i = 0; i < rhs.size(); ++i) a[i] = static_cast<int64_t>(i);
  std::sort(a.begin(), a.end(), [&](int64_t p, int64_t q) { return rhs[p] < rhs[q]; });
  for (size_t i = 0; i < a.size(); ++i) inv[a[i]] = static_cast<int64_t>(i);
  return rhs.empty() ? r : r.permute(inv);
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
