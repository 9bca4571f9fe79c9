// Movement Tensor methods (tinygrad's mixin/movement.py), as views over the primitives.
#include <cmath>

#include "api/internal.h"
#include "maroon/tensor.h"

namespace maroon {

namespace api {

Tensor pad_constant(const Tensor& t, const Pairs& p, Scalar value) {
  if (static_cast<int64_t>(p.size()) != t.ndim())
    throw ShapeError("[pad] " + std::to_string(p.size()) + " padding pairs for shape " +
                     shape_str(t.shape()));
  // Negative padding shrinks first.
  bool has_neg = false;
  for (auto [b, a] : p) has_neg = has_neg || b < 0 || a < 0;
  Tensor x = t;
  Pairs pads = p;
  if (has_neg) {
    Pairs sh;
    for (size_t i = 0; i < p.size(); ++i) {
      int64_t s = t.shape()[i];
      sh.push_back({-std::min<int64_t>(p[i].first, 0), std::min<int64_t>(p[i].second + s, s)});
      pads[i] = {std::max<int64_t>(p[i].first, 0), std::max<int64_t>(p[i].second, 0)};
    }
    x = x.shrink(sh);
  }
  Tensor base = x.pad(pads);
  bool zero = (value.kind == Scalar::Kind::Float && value.f == 0 && !std::signbit(value.f)) ||
              (value.kind != Scalar::Kind::Float && value.i == 0);
  if (zero) return base;
  // Non-zero fill: a padded all-true mask selects the data.
  Tensor mask = filled(x.shape(), true, DType::Bool).pad(pads);
  return mask.where(base, value);
}

}  // namespace api

using api::resolve_dim;

Tensor Tensor::expand_to(const Shape& s) const {
  if (static_cast<int64_t>(s.size()) < ndim())
    throw ShapeError("[expand] cannot expand " + shape_str(shape()) + " to fewer dimensions " +
                     shape_str(s));
  Shape padded(s.size() - shape().size(), 1);
  padded.insert(padded.end(), shape().begin(), shape().end());
  Shape target = s;
  for (size_t i = 0; i < s.size(); ++i) {
    if (target[i] == -1) target[i] = padded[i];
    if (padded[i] != target[i] && padded[i] != 1)
      throw ShapeError("[expand] cannot expand " + shape_str(shape()) + " to " + shape_str(s));
  }
  return reshape(padded).expand(target);
}

Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  std::vector<int64_t> order(ndim());
  for (int64_t i = 0; i < ndim(); ++i) order[i] = i;
  if (ndim() == 0) throw IndexError("[transpose] needs at least one dimension, got a 0-d tensor");
  d0 = resolve_dim("transpose", d0, ndim());
  d1 = resolve_dim("transpose", d1, ndim());
  std::swap(order[d0], order[d1]);
  bool ident = true;
  for (int64_t i = 0; i < ndim(); ++i) ident = ident && order[i] == i;
  return ident ? *this : permute(order);
}

Tensor Tensor::flatten(int64_t start, int64_t end) const {
  if (ndim() == 0) return reshape({1});
  start = resolve_dim("flatten", start, ndim());
  end = resolve_dim("flatten", end, ndim());
  Shape s(shape().begin(), shape().begin() + start);
  int64_t p = 1;
  for (int64_t i = start; i <= end; ++i) p *= shape()[i];
  s.push_back(p);
  s.insert(s.end(), shape().begin() + end + 1, shape().end());
  return reshape(s);
}

Tensor Tensor::unflatten(int64_t dim, const Shape& sizes) const {
  if (ndim() == 0) throw IndexError("[unflatten] needs at least one dimension, got a 0-d tensor");
  dim = resolve_dim("unflatten", dim, ndim());
  Shape s(shape().begin(), shape().begin() + dim);
  s.insert(s.end(), sizes.begin(), sizes.end());
  s.insert(s.end(), shape().begin() + dim + 1, shape().end());
  return reshape(s);
}

Tensor Tensor::squeeze(std::optional<int64_t> dim) const {
  if (!dim) {
    Shape s;
    for (int64_t d : shape())
      if (d != 1) s.push_back(d);
    return reshape(s);
  }
  int64_t d = resolve_dim("squeeze", *dim, ndim());
  if (ndim() == 0 || shape()[d] != 1) return *this;
  Shape s = shape();
  s.erase(s.begin() + d);
  return reshape(s);
}

Tensor Tensor::unsqueeze(int64_t dim) const {
  dim = resolve_dim("unsqueeze", dim, ndim(), true);
  Shape s = shape();
  s.insert(s.begin() + dim, 1);
  return reshape(s);
}

Tensor Tensor::pad_value(const Pairs& p, Scalar value) const { return api::pad_constant(*this, p, value); }

Tensor Tensor::pad(const Pairs& p, const std::string& mode, Scalar value) const {
  if (static_cast<int64_t>(p.size()) != ndim())
    throw ShapeError("[pad] padding length " + std::to_string(p.size()) + " does not match shape " +
                     shape_str(shape()));
  if (mode == "constant") return api::pad_constant(*this, p, value);
  if (mode == "replicate" || mode == "reflect") {
    // Per axis: cat(before, x, after) with the edge repeated (replicate) or mirrored without the
    // edge (reflect); negative entries then shrink.
    Tensor x = *this;
    for (int64_t d = 0; d < ndim(); ++d) {
      int64_t pb = std::max<int64_t>(p[d].first, 0), pa = std::max<int64_t>(p[d].second, 0);
      int64_t s = x.shape()[d];
      if (mode == "reflect" && (pb >= s || pa >= s))
        throw ShapeError("[pad] reflect padding (" + std::to_string(pb) + ", " + std::to_string(pa) +
                         ") must be less than the size " + std::to_string(s) + " of dim " + std::to_string(d));
      auto along = [&](Slice sl) {
        std::vector<Index> idx(x.ndim(), Index(slice()));
        idx[d] = Index(sl);
        return x[idx];
      };
      auto edge = [&](int64_t lo, int64_t n) {
        Shape es = x.shape();
        es[d] = n;
        return along(slice(lo, lo + 1)).expand(es);
      };
      std::vector<Tensor> pieces;
      if (pb > 0) pieces.push_back(mode == "reflect" ? along(slice(pb, 0, -1)) : edge(0, pb));
      pieces.push_back(x);
      if (pa > 0)
        pieces.push_back(mode == "reflect" ? along(slice(s - 2, s - 2 - pa >= 0 ? std::optional<int64_t>(s - 2 - pa) : std::nullopt, -1))
                                           : edge(s - 1, pa));
      if (pieces.size() > 1) x = Tensor::cat_all(pieces, d);
    }
    Pairs sh;
    for (int64_t i = 0; i < ndim(); ++i)
      sh.push_back({-std::min<int64_t>(p[i].first, 0), x.shape()[i] + std::min<int64_t>(p[i].second, 0)});
    return x.shrink(sh);
  }
  if (mode == "circular") {
    Pairs sh;
    Pairs pos;
    for (int64_t i = 0; i < ndim(); ++i) {
      int64_t s = shape()[i];
      sh.push_back({-std::min<int64_t>(p[i].first, 0), std::min<int64_t>(p[i].second + s, s)});
      pos.push_back({std::max<int64_t>(p[i].first, 0), std::max<int64_t>(p[i].second, 0)});
    }
    Tensor x = shrink(sh);
    Shape reps, orig = x.shape();
    for (int64_t i = 0; i < ndim(); ++i) {
      if (pos[i].first > orig[i] || pos[i].second > orig[i])
        throw ShapeError("[pad] circular padding wraps around more than once for shape " + shape_str(shape()));
      reps.push_back(1 + (pos[i].first > 0) + (pos[i].second > 0));
    }
    x = x.repeat(reps);
    Pairs out;
    for (int64_t i = 0; i < ndim(); ++i) {
      int64_t o = orig[i], xs = x.shape()[i];
      out.push_back({pos[i].first == 0 ? 0 : o - pos[i].first, pos[i].second == 0 ? xs : xs - o + pos[i].second});
    }
    return x.shrink(out);
  }
  throw ShapeError("[pad] mode '" + mode + "' is not supported");
}

Tensor Tensor::pad_to(const Shape& s) const {
  if (static_cast<int64_t>(s.size()) != ndim())
    throw ShapeError("[pad_to] shape " + shape_str(s) + " for a tensor of shape " + shape_str(shape()));
  Pairs p;
  for (int64_t i = 0; i < ndim(); ++i) p.push_back({0, (s[i] < 0 ? shape()[i] : s[i]) - shape()[i]});
  return pad(p);
}

Tensor Tensor::shrink_to(const Shape& s) const {
  if (static_cast<int64_t>(s.size()) != ndim())
    throw ShapeError("[shrink_to] shape " + shape_str(s) + " for a tensor of shape " + shape_str(shape()));
  Pairs p;
  for (int64_t i = 0; i < ndim(); ++i) p.push_back({0, s[i] < 0 ? shape()[i] : s[i]});
  return shrink(p);
}

Tensor Tensor::repeat(const Shape& repeats) const {
  if (static_cast<int64_t>(repeats.size()) < ndim())
    throw ShapeError("[repeat] " + std::to_string(repeats.size()) + " repeats for shape " + shape_str(shape()));
  Shape base(repeats.size() - shape().size(), 1);
  base.insert(base.end(), shape().begin(), shape().end());
  Shape unsq, exp, fin;
  for (size_t i = 0; i < repeats.size(); ++i) {
    if (repeats[i] == 1) {
      unsq.push_back(base[i]);
      exp.push_back(base[i]);
    } else {
      unsq.insert(unsq.end(), {1, base[i]});
      exp.insert(exp.end(), {repeats[i], base[i]});
    }
    fin.push_back(repeats[i] * base[i]);
  }
  return reshape(unsq).expand(exp).reshape(fin);
}

Tensor Tensor::repeat_interleave(int64_t repeats, std::optional<int64_t> dim) const {
  Tensor x = dim ? *this : flatten();
  if (ndim() == 0) throw IndexError("[repeat_interleave] needs at least one dimension, got a 0-d tensor");
  int64_t d = dim ? resolve_dim("repeat_interleave", *dim, ndim()) : 0;
  Shape s = x.shape();
  Shape a(s.begin(), s.begin() + d + 1);
  a.push_back(1);
  a.insert(a.end(), s.begin() + d + 1, s.end());
  Shape e = a;
  e[d + 1] = repeats;
  Shape f = s;
  f[d] *= repeats;
  return x.reshape(a).expand(e).reshape(f);
}

Tensor Tensor::roll(const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims) const {
  if (dims.empty()) return flatten().roll(shifts, {0}).reshape(shape());
  if (shifts.size() != dims.size())
    throw ShapeError("[roll] " + std::to_string(shifts.size()) + " shifts for " + std::to_string(dims.size()) + " dims");
  if (numel() == 0) return *this;
  Shape reps(ndim(), 1);
  Pairs sh;
  for (int64_t i = 0; i < ndim(); ++i) sh.push_back({0, shape()[i]});
  for (size_t k = 0; k < dims.size(); ++k) {
    if (ndim() == 0) throw IndexError("[roll] needs at least one dimension, got a 0-d tensor");
    int64_t d = resolve_dim("roll", dims[k], ndim());
    int64_t s = shape()[d];
    int64_t delta = s - (((shifts[k] % s) + s) % s);
    reps[d] = 2;
    sh[d] = {delta, delta + s};
  }
  return repeat(reps).shrink(sh);
}

Tensor Tensor::diag() const {
  if (ndim() != 1) throw ShapeError("[diag] expects a 1-D tensor, got " + shape_str(shape()));
  int64_t n = shape()[0];
  return unsqueeze(-1).pad({{0, 0}, {0, n}}).flatten().shrink({{0, n * n}}).reshape({n, n});
}

Tensor Tensor::diagonal(int64_t offset, int64_t dim1, int64_t dim2) const {
  if (ndim() == 0) throw IndexError("[diagonal] needs at least one dimension, got a 0-d tensor");
  dim1 = resolve_dim("diagonal", dim1, ndim());
  dim2 = resolve_dim("diagonal", dim2, ndim());
  if (dim1 == dim2) throw ShapeError("[diagonal] dim1 and dim2 cannot be the same dimension");
  std::vector<int64_t> order;
  for (int64_t i = 0; i < ndim(); ++i)
    if (i != dim1 && i != dim2) order.push_back(i);
  order.push_back(dim1);
  order.push_back(dim2);
  Tensor x = permute(order);
  Pairs sh;
  for (int64_t i = 0; i < x.ndim(); ++i) sh.push_back({0, x.shape()[i]});
  if (offset >= 0) sh.back() = {offset, x.shape().back()};
  else sh[x.ndim() - 2] = {-offset, x.shape()[x.ndim() - 2]};
  x = x.shrink(sh);
  int64_t d = std::min(x.shape()[x.ndim() - 2], x.shape()[x.ndim() - 1]);
  Shape lead(x.shape().begin(), x.shape().end() - 2);
  if (d <= 0) {
    Shape s = lead;
    s.push_back(0);
    return x.reshape(s);
  }
  Shape sq = lead;
  sq.insert(sq.end(), {d, d});
  x = x.shrink_to(sq).flatten(-2);
  Pairs p(x.ndim(), {0, 0});
  p.back() = {0, d * (d + 1) - d * d};
  x = x.pad(p).unflatten(-1, {d, d + 1});
  Shape keep = lead;
  keep.insert(keep.end(), {d, 1});
  return x.shrink_to(keep).squeeze(-1);
}

Tensor Tensor::pool(const Shape& k_, const std::vector<int64_t>& stride,
                    const std::vector<int64_t>& dilation) const {
  const size_t nk = k_.size();
  if (static_cast<size_t>(ndim()) < nk)
    throw ShapeError("[pool] can't pool " + shape_str(shape()) + " with kernel " + shape_str(k_));
  auto tup = [&](const std::vector<int64_t>& v) {
    if (v.size() == 1) return std::vector<int64_t>(nk, v[0]);
    if (v.size() != nk) throw ShapeError("[pool] stride/dilation must have 1 or " + std::to_string(nk) + " entries");
    return v;
  };
  std::vector<int64_t> s_ = tup(stride), d_ = tup(dilation);
  for (size_t j = 0; j < nk; ++j)
    if (k_[j] < 1 || s_[j] < 1 || d_[j] < 1)
      throw ShapeError("[pool] kernel, stride and dilation must be positive, got kernel " + shape_str(k_) +
                       " stride " + shape_str(s_) + " dilation " + shape_str(d_));
  const size_t nn = ndim() - nk;
  Shape noop(shape().begin(), shape().begin() + nn), i_(shape().begin() + nn, shape().end());
  std::vector<int64_t> o_, f_;
  for (size_t j = 0; j < nk; ++j) {
    if (d_[j] * (k_[j] - 1) + 1 > i_[j] || i_[j] == 0)
      throw ShapeError("[pool] kernel " + shape_str(k_) + " is larger than the input " + shape_str(shape()));
    o_.push_back(api::ceildiv(i_[j] - d_[j] * (k_[j] - 1), s_[j]));
    f_.push_back(std::max<int64_t>(1, api::ceildiv(o_[j] * s_[j] - d_[j], i_[j])));
  }
  Shape reps(nn, 1), sh = noop, rs = noop;
  for (size_t j = 0; j < nk; ++j) {
    reps.push_back(api::ceildiv(k_[j] * (i_[j] * f_[j] + d_[j]), i_[j]));
    sh.push_back(k_[j] * (i_[j] * f_[j] + d_[j]));
    rs.insert(rs.end(), {k_[j], i_[j] * f_[j] + d_[j]});
  }
  Tensor x = repeat(reps).shrink_to(sh).reshape(rs);
  Shape s2 = noop, r2 = noop, s3 = noop, r3 = noop;
  for (size_t j = 0; j < nk; ++j) {
    s2.insert(s2.end(), {k_[j], o_[j] * s_[j]});
    r2.insert(r2.end(), {k_[j], o_[j], s_[j]});
    s3.insert(s3.end(), {k_[j], o_[j], 1});
    r3.insert(r3.end(), {k_[j], o_[j]});
  }
  x = x.shrink_to(s2).reshape(r2).shrink_to(s3).reshape(r3);
  std::vector<int64_t> order;
  for (size_t j = 0; j < nn; ++j) order.push_back(j);
  for (size_t j = 0; j < nk; ++j) order.push_back(nn + j * 2 + 1);
  for (size_t j = 0; j < nk; ++j) order.push_back(nn + j * 2);
  return x.permute(order);
}



namespace {

// unfold with size 0 (PyTorch's and tinygrad's answer: n / step + 1 empty windows). pool() needs
// a positive kernel, so the windows are shaped directly: an empty last axis, and `dim` taken down
// to one element (or padded up to one) and expanded to the window count. Still a view of x, so
// x's gradient (zeros) flows.
Tensor unfold_empty(const Tensor& x, int64_t dim, int64_t step) {
  const int64_t n = x.shape()[dim];
  Pairs keep(x.ndim() + 1, {0, 0});
  for (int64_t i = 0; i < x.ndim(); ++i) keep[i] = {0, x.shape()[i]};
  Tensor e = x.unsqueeze(-1).shrink(keep);  // (..., n, ..., 0)
  if (n >= 1) {
    keep.back() = {0, 0};
    keep[dim] = {0, 1};
    e = e.shrink(keep);
  } else {
    Pairs p(x.ndim() + 1, {0, 0});
    p[dim] = {0, 1};
    e = e.pad(p);
  }
  Shape to = e.shape();
  to[dim] = n / step + 1;
  return e.expand_to(to);
}

}  // namespace

Tensor Tensor::unfold(int64_t dim, int64_t size, int64_t step) const {
  if (size < 0) throw ShapeError("[unfold] size must be >= 0, got " + std::to_string(size));
  if (step <= 0) throw ShapeError("[unfold] step must be > 0, got " + std::to_string(step));
  if (ndim() == 0) throw IndexError("[unfold] needs at least one dimension, got a 0-d tensor");
  dim = resolve_dim("unfold", dim, ndim());
  if (size > shape()[dim])
    throw ShapeError("[unfold] size " + std::to_string(size) + " exceeds dimension " + std::to_string(dim) +
                     " of " + shape_str(shape()));
  if (size == 0) return unfold_empty(*this, dim, step);
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < ndim(); ++i)
    if (i != dim) perm.push_back(i);
  perm.push_back(dim);
  std::vector<int64_t> inv(ndim());
  for (int64_t i = 0; i < ndim(); ++i) inv[perm[i]] = i;
  inv.push_back(ndim());
  return permute(perm).pool({size}, {step}, {1}).permute(inv);
}

std::vector<Tensor> Tensor::meshgrid(const std::vector<Tensor>& others, const std::string& indexing) const {
  if (indexing != "ij" && indexing != "xy")
    throw ShapeError("[meshgrid] indexing must be 'ij' or 'xy', got '" + indexing + "'");
  std::vector<Tensor> ts{*this};
  ts.insert(ts.end(), others.begin(), others.end());
  if (ts.size() == 1) return ts;
  const int64_t n = static_cast<int64_t>(ts.size());
  std::vector<int64_t> basis;
  for (int64_t i = 0; i < n; ++i) basis.push_back(i);
  if (indexing == "xy") std::swap(basis[0], basis[1]);
  Shape out;
  std::vector<Tensor> shaped;
  for (int64_t k = 0; k < n; ++k) {
    Shape s{-1};
    s.insert(s.end(), n - 1 - basis[k], 1);
    shaped.push_back(ts[k].reshape(s));
  }
  out.assign(n, 1);
  for (auto& t : shaped)
    for (size_t i = 0; i < t.shape().size(); ++i) {
      int64_t& o = out[out.size() - t.shape().size() + i];
      o = std::max(o, t.shape()[i]);
    }
  for (auto& t : shaped) t = t.expand_to(out);
  return shaped;
}



int64_t Tensor::size(int64_t dim) const {
  if (ndim() == 0) throw IndexError("[size] a 0-d tensor has no dimensions");
  return shape()[resolve_dim("size", dim, ndim())];
}
}  // namespace maroon
