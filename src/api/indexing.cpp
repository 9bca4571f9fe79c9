// Indexing (tinygrad's _getitem), gather and one_hot.
#include "api/internal.h"
#include "maroon/tensor.h"
#include "maroon/primitives.h"
#include "core/checked.h"
#include "core/view.h"

#include <algorithm>

namespace maroon {

using api::resolve_dim;

namespace {

struct Parsed {
  int64_t size = 1;
  int64_t b0 = 0, b1 = 1;  // boundary
  int64_t stride = 1;
  bool collapse = false;
  const Index* index = nullptr;  // null for a new axis
};

Parsed parse_view_index(const Index& idx, int64_t size) {
  Parsed p;
  p.index = &idx;
  switch (idx.kind) {
    case Index::Kind::Int: {
      if (idx.i >= size || idx.i < -size)
        throw IndexError("[getitem] index " + std::to_string(idx.i) + " is out of bounds for size " +
                         std::to_string(size));
      int64_t b = idx.i >= 0 ? idx.i : idx.i + size;
      p.size = size;
      p.b0 = b;
      p.b1 = b + 1;
      p.collapse = true;
      return p;
    }
    case Index::Kind::Slice: {
      int64_t step = idx.s.step.value_or(1);
      if (step == 0) throw ShapeError("[getitem] slice step cannot be 0");
      // Python's slice.indices(size)
      int64_t start, stop;
      auto clampi = [&](int64_t v, int64_t lo, int64_t hi) { return std::max(lo, std::min(v, hi)); };
      if (step > 0) {
        start = idx.s.start ? (*idx.s.start < 0 ? clampi(*idx.s.start + size, 0, size) : clampi(*idx.s.start, 0, size)) : 0;
        stop = idx.s.stop ? (*idx.s.stop < 0 ? clampi(*idx.s.stop + size, 0, size) : clampi(*idx.s.stop, 0, size)) : size;
      } else {
        start = idx.s.start ? (*idx.s.start < 0 ? clampi(*idx.s.start + size, -1, size - 1) : clampi(*idx.s.start, -1, size - 1)) : size - 1;
        stop = idx.s.stop ? (*idx.s.stop < 0 ? clampi(*idx.s.stop + size, -1, size - 1) : clampi(*idx.s.stop, -1, size - 1)) : -1;
      }
      int64_t b0 = start, b1 = stop;
      if (step * (b1 - b0) < 0) b0 = b1 = 0;
      else if (step < 0) { int64_t t = b0; b0 = b1 + 1; b1 = t + 1; }
      p.size = api::ceildiv(b1 - b0, std::abs(step));
      p.b0 = b0;
      p.b1 = b1;
      p.stride = step;
      return p;
    }
    default: break;
  }
  return p;
}

}  // namespace

namespace {

// One entry per axis (the ellipsis expanded to full slices), plus the new axes.
std::vector<Index> expand_ellipsis(const std::vector<Index>& indices, int64_t ndim, const Shape& shape) {
  int64_t n_ell = 0, n_none = 0;
  for (auto& i : indices) {
    n_ell += i.kind == Index::Kind::Ellipsis;
    n_none += i.kind == Index::Kind::NewAxis;
  }
  if (n_ell > 1) throw IndexError("[getitem] indices can only have a single ellipsis");
  int64_t num_real = static_cast<int64_t>(indices.size()) - n_ell - n_none;
  if (num_real > ndim)
    throw IndexError("[getitem] too many indices (" + std::to_string(num_real) + ") for shape " + shape_str(shape));
  size_t fill = indices.size();
  for (size_t k = 0; k < indices.size(); ++k)
    if (indices[k].kind == Index::Kind::Ellipsis) fill = k;
  std::vector<Index> full(indices.begin(), indices.begin() + fill);
  for (int64_t k = 0; k < ndim - num_real; ++k) full.push_back(Index(slice()));
  if (fill < indices.size()) full.insert(full.end(), indices.begin() + fill + 1, indices.end());
  else full.insert(full.end(), indices.begin() + fill, indices.end());
  return full;
}

std::vector<Parsed> parse_indices(const std::vector<Index>& full, const Shape& shape) {
  std::vector<Parsed> parsed;
  int64_t dim = 0;
  for (const Index& idx : full) {
    int64_t size = idx.kind == Index::Kind::NewAxis ? 1 : shape[dim];
    Parsed p;
    if (idx.kind == Index::Kind::Tensor) {
      if (!is_int(idx.t->dtype()))
        throw IndexError("[getitem] index dtype " + api::dt(idx.t->dtype()) + " is not supported");
      p.size = size;
      p.b0 = 0;
      p.b1 = size;
      p.index = &idx;
    } else if (idx.kind == Index::Kind::NewAxis) {
      p.index = nullptr;
    } else {
      p = parse_view_index(idx, size);
    }
    parsed.push_back(p);
    if (idx.kind != Index::Kind::NewAxis) ++dim;
  }
  return parsed;
}

// The view part: shrink, flip negative strides, take every stride-th element, then drop the
// collapsed axes and insert the new ones. `kept` gets the index behind each remaining axis.
Tensor basic_view(const Tensor& t, const std::vector<Parsed>& parsed, std::vector<const Index*>& kept) {
  Pairs sh;
  std::vector<int64_t> flips, strides;
  int64_t k = 0;
  for (auto& p : parsed) {
    if (!p.index) continue;
    sh.push_back({p.b0, p.b1});
    if (p.stride < 0) flips.push_back(k);
    strides.push_back(std::abs(p.stride));
    ++k;
  }
  Tensor x = t.shrink(sh).flip(flips);
  bool strided = false;
  for (int64_t s : strides) strided = strided || s != 1;
  if (strided) {
    Shape padto, rs, keep, fin;
    for (size_t i = 0; i < strides.size(); ++i) {
      int64_t s = x.shape()[i], st = strides[i];
      padto.push_back(api::ceildiv(s, st) * st);
      rs.insert(rs.end(), {api::ceildiv(s, st), st});
      keep.insert(keep.end(), {api::ceildiv(s, st), 1});
      fin.push_back(api::ceildiv(s, st));
    }
    x = x.pad_to(padto).reshape(rs).shrink_to(keep).reshape(fin);
  }
  Shape xs;
  for (auto& p : parsed) {
    if (p.collapse) continue;
    xs.push_back(p.size);
    kept.push_back(p.index);
  }
  return x.reshape(xs);
}

// x with axis `d` replaced by idx's axes (the positions along d it names): one GATHER over
// idx flattened, its bits those of the chosen elements (docs/spec.md §15).
Tensor take(const Tensor& x, const Tensor& idx, int64_t d) {
  const int64_t k = idx.numel();
  Shape at(x.ndim(), 1), out(x.shape().begin(), x.shape().begin() + d);
  at[d] = k;
  out.insert(out.end(), idx.shape().begin(), idx.shape().end());
  out.insert(out.end(), x.shape().begin() + d + 1, x.shape().end());
  return prim::gather(x, idx.reshape(at), d).reshape(out);
}

// Several index tensors (normalised, broadcast to `big`) into the indexed axes `dims` of x: one
// GATHER over those axes merged into one, at the first of them when they are consecutive, else
// in front (tinygrad's rule for where the indexed axes go). The flat index is computed in int64
// from in-range values only, so it never overflows (it is below the merged size, a checked
// product); a position where any index is outside its axis selects nothing, as the one-hot
// formulation's AND of masks does, and gets zero bits (docs/spec.md §15).
Tensor take_many(const Tensor& x, const std::vector<int64_t>& dims, const std::vector<Tensor>& tensors,
                 const Shape& big) {
  bool consecutive = true;
  for (size_t j = 1; j < dims.size(); ++j) consecutive = consecutive && dims[j] == dims[j - 1] + 1;
  Tensor xp = x;
  int64_t at = dims[0];
  if (!consecutive) {
    std::vector<int64_t> order(dims);
    for (int64_t d = 0; d < x.ndim(); ++d)
      if (std::find(dims.begin(), dims.end(), d) == dims.end()) order.push_back(d);
    xp = x.permute(order);
    at = 0;
  }
  int64_t merged = 1;
  for (int64_t d : dims) merged = mul_or_throw("getitem", "the indexed axes' size", merged, x.shape()[d]);
  Shape ms(xp.shape().begin(), xp.shape().begin() + at);
  ms.push_back(merged);
  ms.insert(ms.end(), xp.shape().begin() + at + static_cast<int64_t>(dims.size()), xp.shape().end());
  std::optional<Tensor> flat, valid;
  for (size_t j = 0; j < dims.size(); ++j) {
    const int64_t size = x.shape()[dims[j]];
    if (!is_int(tensors[j].dtype()))
      throw DTypeError("[getitem] an index tensor must have an integer dtype, got " + api::dt(tensors[j].dtype()));
    Tensor i = tensors[j].cast(DType::Int64).expand_to(big);  // uint64 values above int64's are negative: outside
    Tensor ok = prim::bitwise_and(i.ge(0), i.lt(size));
    Tensor v = ok.where(i, 0);
    flat = flat ? *flat * size + v : v;
    valid = valid ? prim::bitwise_and(*valid, ok) : ok;
  }
  return take(xp.reshape(ms), valid->where(*flat, -1), at);
}

// Advanced (tensor) indices: one index tensor is a GATHER (take), several one GATHER over their
// axes (take_many). Negative indices are normalised first (tinygrad's rule).
Tensor advanced_index(const Tensor& x, const std::vector<const Index*>& kept) {
  std::vector<int64_t> dims;
  std::vector<Tensor> tensors;
  for (size_t d = 0; d < kept.size(); ++d)
    if (kept[d] && kept[d]->kind == Index::Kind::Tensor) {
      dims.push_back(static_cast<int64_t>(d));
      Tensor t = *kept[d]->t;
      tensors.push_back(t.lt(0).where(t + x.shape()[d], t));
    }
  if (tensors.empty()) return x;
  if (tensors.size() == 1) return take(x, tensors[0], dims[0]);
  Shape big;
  for (auto& t : tensors) {
    std::optional<Shape> b = broadcast_shapes({&t.shape(), &big});
    if (!b) throw IndexError("[getitem] cannot broadcast indices " + shape_str(t.shape()) + " and " + shape_str(big));
    big = *b;
  }
  return take_many(x, dims, tensors, big);
}

}  // namespace

Tensor Tensor::operator[](const std::vector<Index>& indices) const {
  const std::vector<Index> full = expand_ellipsis(indices, ndim(), shape());
  std::vector<const Index*> kept;
  Tensor x = basic_view(*this, parse_indices(full, shape()), kept);
  return advanced_index(x, kept);
}

Tensor Tensor::one_hot_along_dim(int64_t num_classes, int64_t dim) const {
  if (!is_int(dtype()))
    throw DTypeError("[one_hot] expects an int index tensor, got " + api::dt(dtype()));
  if (ndim() == 0) throw IndexError("[one_hot] needs at least one dimension, got a 0-d tensor");
  int64_t offset = ndim() - resolve_dim("one_hot", dim, ndim()) - 1;
  Shape s{num_classes};
  s.insert(s.end(), offset, 1);
  return eq(Tensor::arange(num_classes).reshape(s));
}

Tensor Tensor::one_hot(int64_t num_classes) const {
  if (!is_int(dtype())) throw DTypeError("[one_hot] expects an integer dtype, got " + api::dt(dtype()));
  if (num_classes < 0) throw ShapeError("[one_hot] num_classes must be non-negative");
  return unsqueeze(-1).one_hot_along_dim(num_classes).where(1, 0);
}

Tensor Tensor::gather(int64_t dim, const Tensor& index) const {
  if (index.ndim() != ndim())
    throw ShapeError("[gather] self.ndim must equal index.ndim, got " + shape_str(shape()) + " and " +
                     shape_str(index.shape()));
  if (ndim() == 0) throw IndexError("[gather] needs at least one dimension, got a 0-d tensor");
  dim = resolve_dim("gather", dim, ndim());
  Shape to;
  for (int64_t d = 0; d < ndim(); ++d) {
    if (d != dim && shape()[d] < index.shape()[d])
      throw ShapeError("[gather] index " + shape_str(index.shape()) + " is larger than " + shape_str(shape()) +
                       " outside dim " + std::to_string(dim));
    to.push_back(d == dim ? -1 : index.shape()[d]);
  }
  return prim::gather(shrink_to(to), index, dim);
}



Tensor Tensor::masked_select(const Tensor& mask) const {
  if (mask.dtype() != DType::Bool)
    throw DTypeError("[masked_select] expects a bool mask, got " + api::dt(mask.dtype()));
  Tensor x = flatten(), m = mask.expand_to(shape()).flatten();
  Tensor csum = m.cumsum();
  int64_t count = m.numel() ? static_cast<int64_t>(csum[-1].item()) : 0;
  // counts[j] = how many selected positions end before j; the cumsum gives each output's source.
  Tensor counts = zeros({count}, DType::Int32).scatter(0, csum, Scalar(1), "add");
  return x[{Index(counts.cumsum())}];
}

Tensor Tensor::nonzero() const {
  if (ndim() == 0) return zeros({ne(0).item() != 0 ? 1 : 0, 0}, DType::Int32);
  Tensor mask = ne(0).flatten();
  std::vector<Tensor> coords;
  for (int64_t i = 0; i < ndim(); ++i) {
    Shape s(ndim(), 1);
    s[i] = shape()[i];
    coords.push_back(arange(shape()[i]).reshape(s).expand(shape()).flatten());
  }
  Tensor indices = stack_all(coords, -1);
  Shape ms = mask.shape();
  ms.push_back(ndim());
  return indices.masked_select(mask.unsqueeze(-1).expand(ms)).reshape({-1, ndim()});
}

}  // namespace maroon
