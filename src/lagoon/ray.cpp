// Rays: Lagoon's +check, element access, the builders, indexing and the movement arms.
#include <algorithm>
#include <bit>
#include <cstring>

#include "lagoon/elem.h"
#include "lagoon/internal.h"
#include "lagoon/lagoon.hpp"

static_assert(std::endian::native == std::endian::little,
              "Lagoon's atoms are little-endian; a big-endian port must byte-swap elements");

namespace maroon::lagoon {

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::I754: return "i754";
    case Kind::Uint: return "uint";
    case Kind::Int2: return "int2";
  }
  return "?";
}

std::string shape_str(const std::vector<uint64_t>& s) {
  std::string out = "~[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ' ';
    out += std::to_string(s[i]);
  }
  out += ']';
  return out;
}

std::string meta_str(const Meta& m) {
  std::string out = "[";
  out += shape_str(m.shape);
  out += ' ';
  out += std::to_string(m.bloq);
  out += " %";
  out += kind_name(m.kind);
  out += ']';
  return out;
}

uint64_t Meta::numel() const {
  uint64_t n = 1;
  for (uint64_t d : shape) {
    if (d != 0 && n > kMaxElems / d)
      throw Error(kENoMem, "shape " + shape_str(shape) + " has more than 2^32 elements");
    n *= d;
  }
  if (n > kMaxElems) throw Error(kENoMem, "shape " + shape_str(shape) + " has more than 2^32 elements");
  return n;
}

u128 load(const uint8_t* p, size_t w) {
  u128 v = 0;
  std::memcpy(&v, p, w);
  return v;
}

void store(uint8_t* p, size_t w, u128 v) { std::memcpy(p, &v, w); }

static size_t trimmed(const uint8_t* data, size_t len) {
  while (len > 0 && data[len - 1] == 0) --len;
  return len;
}

RayRef view(const Meta& m, const uint8_t* data, size_t len, const char* what) {
  if (m.bloq < 0 || m.bloq > 7)
    throw Error(kEKind, std::string(what) + ": bloq " + std::to_string(m.bloq) + " is not supported (0-7)");
  uint64_t n = m.numel();
  if (len > 0 && data == nullptr) throw Error(kEArg, std::string(what) + ": data is NULL");
  size_t L = trimmed(data, len);
  const uint64_t w = uint64_t{1} << m.bloq;  // bits per element
  // +check: (met bloq data) - 1 == prod(shape), i.e. the highest set bit lies in element N.
  bool ok = false;
  if (L > 0) {
    uint64_t top = uint64_t(L - 1) * 8 + (7 - std::countl_zero(data[L - 1]));  // highest set bit
    ok = top / w == n;
  }
  if (!ok)
    throw Error(kEFormat, std::string(what) + ": data fails +check for meta " + meta_str(m) +
                              " (the pin must be the highest set bit, in element " +
                              std::to_string(n) + ")");
  return RayRef{m, data, L, n};
}

RayRef Ray::ref() const { return RayRef{meta, data.data(), data.size(), meta.numel()}; }

Ray make_ray(const Meta& m) {
  if (m.bloq < 3 || m.bloq > 7)
    throw Error(kEKind, "bloq " + std::to_string(m.bloq) + " is not supported here (3-7)");
  uint64_t n = m.numel();
  Ray r{m, {}};
  r.data.assign(n * m.elem_bytes() + 1, 0);
  r.data.back() = 1;  // the pin
  return r;
}

void need_bytes(const RayRef& a, const char* arm) {
  if (a.meta.bloq < 3)
    throw Error(kEKind, std::string(arm) + ": bloq " + std::to_string(a.meta.bloq) +
                            " (sub-byte elements) is not supported by this arm");
}

// ---------------------------------------------------------------- builders

static u128 kind_one(const Meta& m, const char* arm) {
  if (m.kind == Kind::I754) {
    switch (m.bloq) {
      case 4: return 0x3c00;
      case 5: return 0x3f800000;
      case 6: return 0x3ff0000000000000ull;
      case 7: return u128{0x3fff000000000000ull} << 64;
      default:
        throw Error(kEKind, std::string(arm) + ": %i754 has no bloq " + std::to_string(m.bloq) + " (4-7)");
    }
  }
  return 1;
}

static u128 atom_value(const std::vector<uint8_t>& x, size_t w, bool truncate,
                                    const char* arm) {
  size_t L = trimmed(x.data(), x.size());
  if (L > w && !truncate)
    throw Error(kEArg, std::string(arm) + ": the scalar is wider than " + std::to_string(w * 8) + " bits");
  u128 v = 0;
  if (L) std::memcpy(&v, x.data(), std::min(L, w));
  return v;
}

Ray zeros(const Meta& m) { return make_ray(m); }

Ray fill(const Meta& m, const std::vector<uint8_t>& x) {
  Ray r = make_ray(m);
  const size_t w = m.elem_bytes();
  u128 v = atom_value(x, w, true, "fill");  // ++fil keeps the low bits
  for (uint64_t i = 0; i < r.ref().n; ++i) store(r.elems() + i * w, w, v);
  return r;
}

Ray ones(const Meta& m) {
  u128 one = kind_one(m, "ones");
  std::vector<uint8_t> b(16);
  std::memcpy(b.data(), &one, 16);
  return fill(m, b);
}

Ray eye(const Meta& m) {
  if (m.shape.size() != 2 || m.shape[0] != m.shape[1])
    throw Error(kEArg, "eye: the shape must be square, not " + shape_str(m.shape));
  u128 one = kind_one(m, "eye");
  Ray r = make_ray(m);
  const size_t w = m.elem_bytes();
  for (uint64_t i = 0; i < m.shape[0]; ++i) store(r.elems() + (i * m.shape[0] + i) * w, w, one);
  return r;
}

Ray iota(const Meta& m) {
  if (m.shape.size() != 1) throw Error(kEArg, "iota: the shape must have rank 1, not " + shape_str(m.shape));
  if (m.shape[0] == 0) throw Error(kEDomain, "iota: length 0 (Lagoon crashes on (dec 0))");
  Meta mm = m;
  mm.kind = Kind::Uint;
  Ray r = make_ray(mm);
  const size_t w = mm.elem_bytes();
  for (uint64_t i = 0; i < m.shape[0]; ++i) store(r.elems() + i * w, w, i);
  return r;
}

Ray magic(const Meta& m) {
  Meta flat{{m.numel()}, m.bloq, Kind::Uint};
  Ray r = iota(flat);
  r.meta.shape = m.shape;
  return r;
}

Ray spac(const Meta& m, const uint8_t* data, size_t len) {
  Ray r = make_ray(m);
  size_t L = trimmed(data, len);
  if (L > r.data.size())
    throw Error(kEFormat, "spac: data has bits above the pin of meta " + meta_str(m));
  for (size_t i = 0; i < L; ++i) r.data[i] |= data[i];
  view(r.meta, r.data.data(), r.data.size(), "spac");
  return r;
}

// ---------------------------------------------------------------- indexing

// ++get-item-number: indices matched from the last axis; each must be in range; extra leading
// indices are ignored (as in Lagoon), missing ones are an error.
static uint64_t item_number(const std::vector<uint64_t>& shape, const std::vector<uint64_t>& dex,
                            const char* arm) {
  if (dex.size() < shape.size())
    throw Error(kEDomain, std::string(arm) + ": index has " + std::to_string(dex.size()) +
                              " entries for shape " + shape_str(shape));
  uint64_t off = 0, cof = 1;
  for (size_t k = 0; k < shape.size(); ++k) {
    uint64_t s = shape[shape.size() - 1 - k], i = dex[dex.size() - 1 - k];
    if (i >= s)
      throw Error(kEDomain, std::string(arm) + ": index " + shape_str(dex) + " is out of range for shape " +
                                shape_str(shape));
    off += i * cof;
    cof *= s;
  }
  return off;
}

std::vector<uint8_t> get_item(const RayRef& a, const std::vector<uint64_t>& index) {
  need_bytes(a, "get-item");
  uint64_t off = item_number(a.meta.shape, index, "get-item");
  const size_t w = a.meta.elem_bytes();
  return std::vector<uint8_t>(a.elems() + off * w, a.elems() + (off + 1) * w);
}

Ray copy_ray(const RayRef& a) {
  Ray r = make_ray(a.meta);
  if (a.n) std::memcpy(r.elems(), a.elems(), a.n * a.meta.elem_bytes());
  return r;
}

Ray set_item(const RayRef& a, const std::vector<uint64_t>& index, const std::vector<uint8_t>& val) {
  need_bytes(a, "set-item");
  uint64_t off = item_number(a.meta.shape, index, "set-item");
  const size_t w = a.meta.elem_bytes();
  Ray r = copy_ray(a);
  store(r.elems() + off * w, w, atom_value(val, w, true, "set-item"));  // ++sew keeps low bits
  return r;
}

Ray get_row(const RayRef& a, const std::vector<uint64_t>& dex) {
  need_bytes(a, "get-row");
  const size_t w = a.meta.elem_bytes();
  if (a.meta.shape.size() == 1) {
    Ray r = make_ray(Meta{{1}, a.meta.bloq, a.meta.kind});
    std::memcpy(r.elems(), get_item(a, dex).data(), w);
    return r;
  }
  if (dex.size() + 1 != a.meta.shape.size())
    throw Error(kEArg, "get-row: index " + shape_str(dex) + " must have rank-1 entries for shape " +
                           shape_str(a.meta.shape));
  uint64_t cols = a.meta.shape.back();
  Ray r = make_ray(Meta{{1, cols}, a.meta.bloq, a.meta.kind});
  std::vector<uint64_t> idx = dex;
  idx.push_back(0);
  for (uint64_t j = 0; j < cols; ++j) {
    idx.back() = j;
    std::memcpy(r.elems() + j * w, a.elems() + item_number(a.meta.shape, idx, "get-row") * w, w);
  }
  return r;
}

Ray set_row(const RayRef& a, const std::vector<uint64_t>& dex, const RayRef& row) {
  need_bytes(a, "set-row");
  need_bytes(row, "set-row");
  const size_t w = a.meta.elem_bytes(), rw = row.meta.elem_bytes();
  auto trunc = [&](const uint8_t* p) { return load(p, rw); };
  if (dex.size() == 1 && row.meta.shape.size() == 1) {
    Ray r = copy_ray(a);
    store(r.elems() + item_number(a.meta.shape, dex, "set-row") * w, w, trunc(row.elems()));
    return r;
  }
  const auto& s = a.meta.shape;
  if (dex.size() + 1 != s.size() || row.meta.shape.size() != 2 || row.meta.shape[0] != 1 ||
      row.meta.shape[1] != s.back())
    throw Error(kEArg, "set-row: row " + shape_str(row.meta.shape) + " at " + shape_str(dex) +
                           " does not fit shape " + shape_str(s));
  Ray r = copy_ray(a);
  std::vector<uint64_t> idx = dex;
  idx.push_back(0);
  for (uint64_t j = 0; j < s.back(); ++j) {
    idx.back() = j;
    store(r.elems() + item_number(s, idx, "set-row") * w, w, trunc(row.elems() + j * rw));
  }
  return r;
}

Ray reshape(const RayRef& a, const std::vector<uint64_t>& shape) {
  Meta m = a.meta;
  m.shape = shape;
  if (m.numel() != a.n)
    throw Error(kEArg, "reshape: cannot reshape " + shape_str(a.meta.shape) + " to " + shape_str(shape));
  need_bytes(a, "reshape");
  Ray r = copy_ray(a);
  r.meta = m;
  return r;
}

// ---------------------------------------------------------------- movement (bit copies)

std::vector<uint64_t> strides_of(const std::vector<uint64_t>& s) {
  std::vector<uint64_t> st(s.size(), 1);
  for (size_t k = s.size(); k-- > 1;) st[k - 1] = st[k] * s[k];
  return st;
}

// Copies out[i] = a[src(i)] for every row-major index i of `out_shape`, where `src` maps the
// output multi-index to an input element number or -1 (a zero element).
template <class Src>
static Ray gather(const RayRef& a, const std::vector<uint64_t>& out_shape, Src src) {
  Ray r = make_ray(Meta{out_shape, a.meta.bloq, a.meta.kind});
  const size_t w = a.meta.elem_bytes();
  uint64_t n = r.ref().n;
  std::vector<uint64_t> idx(out_shape.size(), 0);
  for (uint64_t i = 0; i < n; ++i) {
    int64_t s = src(idx);
    if (s >= 0) std::memcpy(r.elems() + i * w, a.elems() + uint64_t(s) * w, w);
    for (size_t k = idx.size(); k-- > 0;) {
      if (++idx[k] < out_shape[k]) break;
      idx[k] = 0;
    }
  }
  return r;
}

Ray transpose(const RayRef& a) {
  need_bytes(a, "transpose");
  if (a.meta.shape.size() != 2)
    throw Error(kEArg, "transpose: rank 2 only, not " + shape_str(a.meta.shape));
  return permute(a, {1, 0});
}

Ray diag(const RayRef& a) {
  need_bytes(a, "diag");
  const auto& s = a.meta.shape;
  if (s.size() != 2 || s[0] != s[1]) throw Error(kEArg, "diag: the shape must be square, not " + shape_str(s));
  uint64_t n = s[0];
  return gather(a, {n, 1}, [&](const std::vector<uint64_t>& i) { return int64_t(i[0] * n + i[0]); });
}

std::vector<uint64_t> broadcast_shape(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b,
                                      const char* arm) {
  size_t n = std::max(a.size(), b.size());
  std::vector<uint64_t> out(n);
  for (size_t k = 0; k < n; ++k) {
    uint64_t da = k < n - a.size() ? 1 : a[k - (n - a.size())];
    uint64_t db = k < n - b.size() ? 1 : b[k - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw Error(kEArg, std::string(arm) + ": shapes " + shape_str(a) + " and " + shape_str(b) +
                             " do not broadcast");
    out[k] = da == 1 ? db : da;
  }
  return out;
}

Ray broadcast_to(const RayRef& a, const std::vector<uint64_t>& shape) {
  need_bytes(a, "broadcast-to");
  const auto& s = a.meta.shape;
  if (broadcast_shape(s, shape, "broadcast-to") != shape)
    throw Error(kEArg, "broadcast-to: cannot broadcast " + shape_str(s) + " to " + shape_str(shape));
  auto st = strides_of(s);
  size_t off = shape.size() - s.size();
  return gather(a, shape, [&](const std::vector<uint64_t>& i) {
    uint64_t e = 0;
    for (size_t k = 0; k < s.size(); ++k) e += (s[k] == 1 ? 0 : i[k + off]) * st[k];
    return int64_t(e);
  });
}

Ray permute(const RayRef& a, const std::vector<uint32_t>& order) {
  need_bytes(a, "permute");
  const auto& s = a.meta.shape;
  std::vector<bool> seen(s.size(), false);
  if (order.size() != s.size()) throw Error(kEArg, "permute: order has the wrong rank for " + shape_str(s));
  for (uint32_t o : order) {
    if (o >= s.size() || seen[o]) throw Error(kEArg, "permute: order is not a permutation of the axes of " + shape_str(s));
    seen[o] = true;
  }
  std::vector<uint64_t> out(s.size());
  for (size_t k = 0; k < s.size(); ++k) out[k] = s[order[k]];
  auto st = strides_of(s);
  return gather(a, out, [&](const std::vector<uint64_t>& i) {
    uint64_t e = 0;
    for (size_t k = 0; k < s.size(); ++k) e += i[k] * st[order[k]];
    return int64_t(e);
  });
}

Ray flip(const RayRef& a, const std::vector<uint32_t>& axes) {
  need_bytes(a, "flip");
  const auto& s = a.meta.shape;
  std::vector<bool> f(s.size(), false);
  for (uint32_t x : axes) {
    if (x >= s.size() || f[x]) throw Error(kEArg, "flip: bad or repeated axis " + std::to_string(x));
    f[x] = true;
  }
  auto st = strides_of(s);
  return gather(a, s, [&](const std::vector<uint64_t>& i) {
    uint64_t e = 0;
    for (size_t k = 0; k < s.size(); ++k) e += (f[k] ? s[k] - 1 - i[k] : i[k]) * st[k];
    return int64_t(e);
  });
}

Ray pad(const RayRef& a, const std::vector<uint64_t>& before, const std::vector<uint64_t>& after) {
  need_bytes(a, "pad");
  const auto& s = a.meta.shape;
  if (before.size() != s.size() || after.size() != s.size())
    throw Error(kEArg, "pad: one (before, after) pair per axis of " + shape_str(s));
  std::vector<uint64_t> out(s.size());
  for (size_t k = 0; k < s.size(); ++k) {
    out[k] = s[k] + before[k] + after[k];
    if (out[k] < s[k]) throw Error(kENoMem, "pad: padding overflows");
  }
  auto st = strides_of(s);
  return gather(a, out, [&](const std::vector<uint64_t>& i) {
    uint64_t e = 0;
    for (size_t k = 0; k < s.size(); ++k) {
      if (i[k] < before[k] || i[k] >= before[k] + s[k]) return int64_t(-1);
      e += (i[k] - before[k]) * st[k];
    }
    return int64_t(e);
  });
}

}  // namespace maroon::lagoon
