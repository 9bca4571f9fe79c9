#include "core/view.h"

#include <algorithm>
#include <cassert>
#include <optional>

#include "core/checked.h"
#include "maroon/tensor.h"

namespace maroon {

// Shapes of nodes are checked when built (core/checked.h), so numel never throws for them; it
// guards the shapes that user code computes before they become nodes.
void numel_overflow(const Shape& s) {
  throw ShapeError("[numel] the size of shape " + shape_str(s) + " does not fit in 64 bits");
}

Shape contiguous_strides(const Shape& s) {
  Shape st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = s[i] == 1 ? 0 : acc;  // size-1 axes never move: stride 0 keeps views canonical
    // Checked shapes (numpy's rule) never overflow here; a zero dimension makes the rest 0.
    if (!checked::mul(acc, s[i], acc))
      throw ShapeError("[strides] shape " + shape_str(s) + " is too large: its strides do not fit in 64 bits");
  }
  return st;
}

View View::contiguous(const Shape& s) { return View{s, contiguous_strides(s), 0, {}}; }

ShapeTracker ShapeTracker::contiguous(const Shape& s) {
  ShapeTracker t;
  t.views_.push_back(View::contiguous(s));
  return t;
}

void ShapeTracker::set_contiguous(const Shape& s) {
  if (views_.size() == 1 && views_[0].shape == s && is_contiguous()) return;
  *this = contiguous(s);
}

ShapeTracker ShapeTracker::broadcast_scalar(const Shape& s) {
  ShapeTracker t;
  t.views_.push_back(View{s, std::vector<int64_t>(s.size(), 0), 0, {}});
  return t;
}

bool ShapeTracker::is_contiguous() const {
  if (views_.size() != 1) return false;
  const View& v = views_[0];
  if (v.has_mask() || v.offset != 0) return false;
  if (v.strides.size() != v.shape.size()) return v.strides == contiguous_strides(v.shape);
  // contiguous_strides(v.shape) compared stride by stride, without building it: this runs for
  // every leaf of every kernel, and the vector was a heap block each time.
  bool same = true;
  int64_t acc = 1;
  for (size_t i = v.shape.size(); i-- > 0;) {
    same = same && v.strides[i] == (v.shape[i] == 1 ? 0 : acc);
    if (!checked::mul(acc, v.shape[i], acc)) return v.strides == contiguous_strides(v.shape);  // throws, as before
  }
  return same;
}

namespace {

// numpy's attempt_nocopy_reshape: writes strides for `to` over the same elements as (from,
// strides) to out[0..to.size()), or returns false when the reshape needs a copy. Size-1 axes are
// dropped first (into buffers on the stack for the usual ranks: this runs for every reshape node).
bool reshape_strides(const Shape& from, const std::vector<int64_t>& strides, const Shape& to, int64_t* out) {
  constexpr size_t kStack = 16;
  int64_t os_buf[kStack], ost_buf[kStack];
  std::vector<int64_t> heap;
  int64_t *os = os_buf, *ost = ost_buf;
  if (from.size() > kStack) {
    heap.resize(2 * from.size());
    os = heap.data();
    ost = os + from.size();
  }
  size_t on = 0;
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1) { os[on] = from[i]; ost[on] = strides[i]; ++on; }
  std::fill(out, out + to.size(), int64_t{0});
  size_t oi = 0, oj = 1, ni = 0, nj = 1;
  size_t nn = to.size();
  while (ni < nn && oi < on) {
    int64_t np = to[ni], op = os[oi];
    while (np != op) {
      if (np < op) np *= to[nj++];
      else op *= os[oj++];
    }
    for (size_t ok = oi; ok + 1 < oj; ++ok)
      if (ost[ok] != os[ok + 1] * ost[ok + 1]) return false;
    out[nj - 1] = ost[oj - 1];
    for (size_t nk = nj - 1; nk > ni; --nk) out[nk - 1] = out[nk] * to[nk];
    ni = nj++;
    oi = oj++;
  }
  for (size_t i = 0; i < nn; ++i)
    if (to[i] == 1) out[i] = 0;
  return true;
}


// ---- merging a view into the one below it ----
//
// A reshape that strides cannot express (say of an expanded or padded view, as tinygrad's pool
// builds) pushes a second view, and every index then goes through a division per axis per view.
// Often the composition is affine anyway: pool's windows x[oy + ky] come out of a repeat, a
// flatten and a re-split whose divisions never carry. merge_views proves that digit by digit
// and returns the single view, or nothing when it cannot prove it (then the stack stays as it
// was). It is exact: the merged view maps every index to the same element, or to padding, as
// the pair did; tests/core/movement_test.cpp checks that against the unmerged pair.

// v = q*m + a with q = trunc(v/m), so a has v's sign and |a| < m.
struct QuotRem { int64_t q, a; };
QuotRem trunc_divmod(int64_t v, int64_t m) { return {v / m, v % m}; }

// An affine function of the top view's coordinates c' (each in [0, ext[d])): base + sum coef*c'.
struct Affine {
  int64_t base;
  std::vector<int64_t> coef;
  int64_t lo(const Shape& ext) const {
    int64_t v = base;
    for (size_t d = 0; d < coef.size(); ++d) v += std::min<int64_t>(0, coef[d] * (ext[d] - 1));
    return v;
  }
  int64_t hi(const Shape& ext) const {
    int64_t v = base;
    for (size_t d = 0; d < coef.size(); ++d) v += std::max<int64_t>(0, coef[d] * (ext[d] - 1));
    return v;
  }
};

// floor(f / m) mod r as an affine function over the box, if no step of it carries. f >= 0 on
// the box is required by the caller, so floor and truncation agree.
std::optional<Affine> digit(const Affine& f, int64_t m, int64_t r, const Shape& ext) {
  auto split = [&](const Affine& g, int64_t mod, Affine* quot, Affine* rem) {
    quot->coef.resize(g.coef.size());
    rem->coef.resize(g.coef.size());
    quot->base = g.base / mod;
    rem->base = g.base % mod;  // g.base >= 0 here
    for (size_t d = 0; d < g.coef.size(); ++d) {
      QuotRem qr = trunc_divmod(g.coef[d], mod);
      quot->coef[d] = qr.q;
      rem->coef[d] = qr.a;
    }
    return rem->lo(ext) >= 0 && rem->hi(ext) < mod;
  };
  Affine q, rem, q2, u;
  if (!split(f, m, &q, &rem)) return std::nullopt;  // the division carries somewhere
  if (q.base < 0 || !split(q, r, &q2, &u)) return std::nullopt;  // the modulus wraps somewhere
  return u;
}

std::optional<View> merge_views(const View& below, const View& top) {
  const size_t n = top.shape.size(), m = below.shape.size();
  // The top view's valid box, shifted to start at 0.
  Shape lo(n, 0), ext = top.shape;
  if (top.has_mask())
    for (size_t d = 0; d < n; ++d) { lo[d] = top.mask[d].first; ext[d] = top.mask[d].second - top.mask[d].first; }
  for (size_t d = 0; d < n; ++d)
    if (ext[d] <= 0) return std::nullopt;  // all padding: nothing worth merging
  Affine f{top.offset, top.strides};
  for (size_t d = 0; d < n; ++d) f.base += top.strides[d] * lo[d];
  if (f.lo(ext) < 0 || f.hi(ext) >= numel(below.shape)) return std::nullopt;

  View out{top.shape, std::vector<int64_t>(n, 0), below.offset, top.mask};
  Pairs box(n);  // extra validity from the lower view's mask, in shifted coordinates
  for (size_t d = 0; d < n; ++d) box[d] = {0, ext[d]};
  int64_t place = 1;  // the row-major weight of below's axis j
  for (size_t j = m; j-- > 0; place *= below.shape[j]) {
    const int64_t r = below.shape[j];
    const bool masked = below.has_mask() && (below.mask[j].first > 0 || below.mask[j].second < r);
    if (r == 1 && !masked) continue;
    if (below.strides[j] == 0 && !masked) continue;  // this digit changes nothing
    std::optional<Affine> u = digit(f, place, r, ext);
    if (!u) return std::nullopt;
    for (size_t d = 0; d < n; ++d) out.strides[d] += below.strides[j] * u->coef[d];
    out.offset += below.strides[j] * u->base;
    if (!masked) continue;
    const auto [mlo, mhi] = below.mask[j];
    if (u->lo(ext) >= mlo && u->hi(ext) < mhi) continue;  // always inside the mask
    int axis = -1;
    for (size_t d = 0; d < n; ++d)
      if (u->coef[d] != 0) {
        if (axis >= 0) return std::nullopt;  // validity is not a box (padded conv windows)
        axis = static_cast<int>(d);
      }
    if (axis < 0) return std::nullopt;  // constant and outside: all padding, leave it
    // mlo <= base + k*c < mhi, solved for c.
    const int64_t k = u->coef[axis], b = u->base;
    auto floordiv = [](int64_t a, int64_t q) { int64_t t = a / q; return (a % q != 0 && (a < 0) != (q < 0)) ? t - 1 : t; };
    auto ceildiv = [&](int64_t a, int64_t q) { return -floordiv(-a, q); };
    int64_t cl, ch;  // c in [cl, ch]
    if (k > 0) { cl = ceildiv(mlo - b, k); ch = floordiv(mhi - 1 - b, k); }
    else { cl = ceildiv(mhi - 1 - b, k); ch = floordiv(mlo - b, k); }
    box[axis] = {std::max(box[axis].first, cl), std::min(box[axis].second, ch + 1)};
    if (box[axis].first >= box[axis].second) return std::nullopt;
  }
  // Back from shifted coordinates: c' = c - lo.
  for (size_t d = 0; d < n; ++d) out.offset -= out.strides[d] * lo[d];
  bool boxed = false;
  for (size_t d = 0; d < n; ++d) boxed = boxed || box[d].first > 0 || box[d].second < ext[d];
  if (boxed) {
    if (!out.has_mask()) {
      out.mask.resize(n);
      for (size_t d = 0; d < n; ++d) out.mask[d] = {0, top.shape[d]};
    }
    for (size_t d = 0; d < n; ++d) out.mask[d] = {lo[d] + box[d].first, lo[d] + box[d].second};
  }
  for (size_t d = 0; d < n; ++d)
    if (out.shape[d] == 1) {
      out.strides[d] = 0;  // c is always 0 there (views keep size-1 strides at 0)
    }
  return out;
}

}  // namespace

ShapeTracker ShapeTracker::reshape(const Shape& s) const {
  const View& v = views_.back();
  if (v.shape == s) return *this;
  // Built in place rather than copied and then overwritten: the top view's vectors were copied
  // only to be replaced (several malloc/free pairs per reshape node).
  ShapeTracker t;
  t.views_.reserve(views_.size() + 1);
  if (numel(s) != 0 && !v.has_mask()) {
    std::vector<int64_t> st(s.size());
    if (reshape_strides(v.shape, v.strides, s, st.data())) {
      t.views_.assign(views_.begin(), views_.end() - 1);
      t.views_.push_back(View{s, std::move(st), v.offset, {}});
      t.merge_top();
      return t;
    }
  }
  t.views_.assign(views_.begin(), views_.end());
  t.views_.push_back(View::contiguous(s));
  t.merge_top();
  return t;
}

ShapeTracker ShapeTracker::expand(const Shape& s) const {
  ShapeTracker t = *this;
  View& v = t.views_.back();
  for (size_t i = 0; i < s.size(); ++i) {
    if (v.shape[i] == s[i]) continue;
    assert(v.shape[i] == 1);
    v.strides[i] = 0;
    if (v.has_mask()) v.mask[i] = v.mask[i].second > v.mask[i].first ? std::pair<int64_t, int64_t>{0, s[i]}
                                                                       : std::pair<int64_t, int64_t>{0, 0};
    v.shape[i] = s[i];
  }
  t.merge_top();
  return t;
}

ShapeTracker ShapeTracker::permute(const std::vector<int64_t>& order) const {
  ShapeTracker t = *this;
  const View& v = views_.back();
  View& w = t.views_.back();
  for (size_t i = 0; i < order.size(); ++i) {
    w.shape[i] = v.shape[order[i]];
    w.strides[i] = v.strides[order[i]];
    if (v.has_mask()) w.mask[i] = v.mask[order[i]];
  }
  t.merge_top();
  return t;
}

ShapeTracker ShapeTracker::pad(const Pairs& p) const {
  ShapeTracker t = *this;
  View& v = t.views_.back();
  if (!v.has_mask()) {
    v.mask.resize(v.shape.size());
    for (size_t i = 0; i < v.shape.size(); ++i) v.mask[i] = {0, v.shape[i]};
  }
  for (size_t i = 0; i < p.size(); ++i) {
    auto [b, a] = p[i];
    // The Tensor layer checked the new shape; the offset of a view padded and shrunk again and
    // again can still run out of 64 bits, and is refused then.
    v.offset = add_or_throw("pad", "view offset", v.offset, mul_or_throw("pad", "offset change", -b, v.strides[i]));
    v.mask[i] = {v.mask[i].first + b, v.mask[i].second + b};
    v.shape[i] += b + a;
  }
  t.merge_top();
  return t;
}

ShapeTracker ShapeTracker::shrink(const Pairs& p) const {
  ShapeTracker t = *this;
  View& v = t.views_.back();
  for (size_t i = 0; i < p.size(); ++i) {
    auto [b, e] = p[i];
    v.offset = add_or_throw("shrink", "view offset", v.offset, mul_or_throw("shrink", "offset change", b, v.strides[i]));
    v.shape[i] = e - b;
    if (v.has_mask()) {
      int64_t lo = std::clamp<int64_t>(v.mask[i].first - b, 0, e - b);
      int64_t hi = std::clamp<int64_t>(v.mask[i].second - b, lo, e - b);
      v.mask[i] = {lo, hi};
    }
  }
  t.merge_top();
  return t;
}

ShapeTracker ShapeTracker::flip(const std::vector<int64_t>& axes) const {
  ShapeTracker t = *this;
  View& v = t.views_.back();
  for (int64_t ax : axes) {
    int64_t n = v.shape[ax];
    if (n > 0) v.offset = add_or_throw("flip", "view offset", v.offset, mul_or_throw("flip", "offset change", n - 1, v.strides[ax]));
    v.strides[ax] = -v.strides[ax];
    if (v.has_mask()) v.mask[ax] = {n - v.mask[ax].second, n - v.mask[ax].first};
  }
  t.merge_top();
  return t;
}

int ShapeTracker::batch_axes(std::vector<int64_t>* batch_strides, ShapeTracker* inner) const {
  const View& top = views_.back();
  // k: the longest prefix of axes that every view has alike, unmasked, and (above the bottom)
  // with the row-major strides of the view below, so the coordinate reaches the bottom as is.
  size_t k = top.shape.size();
  for (size_t i = 0; i < views_.size(); ++i) {
    const View& v = views_[i];
    size_t j = 0;
    for (; j < k && j < v.shape.size(); ++j) {
      if (v.shape[j] != top.shape[j]) break;
      if (v.has_mask() && (v.mask[j].first != 0 || v.mask[j].second != v.shape[j])) break;
      if (i > 0 && v.shape[j] != 1) {
        const Shape& below = views_[i - 1].shape;
        if (below.size() <= j || below[j] != v.shape[j]) break;
        int64_t row = 1;
        for (size_t e = j + 1; e < below.size(); ++e) row *= below[e];
        if (v.strides[j] != row) break;
      }
    }
    k = j;
  }
  // The rest of each view above the bottom must stay inside one batch of the view below.
  while (k > 0) {
    bool inside = true;
    for (size_t i = 1; i < views_.size() && inside; ++i) {
      const View& v = views_[i];
      Shape ext;
      Affine g{v.offset, {}};
      bool empty = false;
      for (size_t d = k; d < v.shape.size(); ++d) {
        int64_t lo = v.has_mask() ? v.mask[d].first : 0, hi = v.has_mask() ? v.mask[d].second : v.shape[d];
        if (hi <= lo) empty = true;
        g.base += v.strides[d] * lo;
        g.coef.push_back(v.strides[d]);
        ext.push_back(hi - lo);
      }
      if (empty) continue;  // every position is padding: nothing reaches below
      int64_t block = 1;
      for (size_t d = k; d < views_[i - 1].shape.size(); ++d) block *= views_[i - 1].shape[d];
      inside = g.lo(ext) >= 0 && g.hi(ext) < block;
    }
    if (inside) break;
    --k;  // fewer batch axes, so larger blocks
  }
  if (k == 0) return 0;
  batch_strides->assign(views_[0].strides.begin(), views_[0].strides.begin() + k);
  inner->views_.clear();
  for (const View& v : views_) {
    View w{Shape(v.shape.begin() + k, v.shape.end()), std::vector<int64_t>(v.strides.begin() + k, v.strides.end()),
           v.offset, {}};
    if (v.has_mask()) w.mask.assign(v.mask.begin() + k, v.mask.end());
    inner->views_.push_back(std::move(w));
  }
  return static_cast<int>(k);
}

ShapeTracker ShapeTracker::lower(size_t n) const {
  ShapeTracker t;
  t.views_.assign(views_.begin(), views_.begin() + static_cast<std::ptrdiff_t>(n));
  return t;
}

ShapeTracker ShapeTracker::rebased(View base, size_t below) const {
  ShapeTracker t;
  t.views_.push_back(std::move(base));
  t.views_.insert(t.views_.end(), views_.begin() + static_cast<std::ptrdiff_t>(below), views_.end());
  // Bottom up: the new base may merge with the views above it, as if they had been applied to it.
  while (t.views_.size() >= 2) {
    std::optional<View> v = merge_views(t.views_[0], t.views_[1]);
    if (!v) break;
    t.views_.erase(t.views_.begin());
    t.views_[0] = std::move(*v);
  }
  return t;
}

void ShapeTracker::merge_top() {
  while (views_.size() >= 2) {
    std::optional<View> v = merge_views(views_[views_.size() - 2], views_.back());
    if (!v) return;
    views_.pop_back();
    views_.back() = std::move(*v);
  }
}

int64_t ShapeTracker::index(const int64_t* idx) const {
  // Walk from the visible view down; each lower view reads the one above as row-major. Ranks
  // are small, so the coordinates live on the stack unless a view is unusually wide.
  constexpr size_t kStack = 16;
  int64_t stack_buf[kStack];
  std::vector<int64_t> heap;
  size_t widest = 0;
  for (const View& v : views_) widest = std::max(widest, v.shape.size());
  int64_t* cur = stack_buf;
  if (widest > kStack) { heap.resize(widest); cur = heap.data(); }
  std::copy(idx, idx + views_.back().shape.size(), cur);
  for (size_t k = views_.size(); k-- > 0;) {
    const View& v = views_[k];
    int64_t lin = v.offset;
    for (size_t i = 0; i < v.shape.size(); ++i) {
      if (v.has_mask() && (cur[i] < v.mask[i].first || cur[i] >= v.mask[i].second)) return -1;
      lin += cur[i] * v.strides[i];
    }
    if (k == 0) return lin;
    const Shape& below = views_[k - 1].shape;
    for (size_t i = below.size(); i-- > 0;) {
      cur[i] = below[i] ? lin % below[i] : 0;
      lin = below[i] ? lin / below[i] : 0;
    }
  }
  return -1;
}

namespace {

// The walk behind row_indices: the current position's coordinates in every view of the stack
// (views[k] for k < nv-1 hold the row-major unravel of the linear index of the view above) and
// each view's linear index, stepped along the top view's last axis. One flat array, on the
// stack for the usual ranks: this runs once per row of a kernel.
class RowWalk {
 public:
  RowWalk(const std::vector<View>& views, const int64_t* idx) : views_(views), nv_(views.size()) {
    size_t total = 0;
    for (const View& v : views_) total += v.shape.size();
    cflat_ = total > kStack ? (heap_c_.resize(total), heap_c_.data()) : stack_c_;
    lin_ = nv_ > 8 ? (heap_lin_.resize(nv_), heap_lin_.data()) : stack_lin_;
    c_ = nv_ > 8 ? (heap_start_.resize(nv_), heap_start_.data()) : stack_start_;
    rest_ = nv_ > 8 ? (heap_rest_.resize(nv_), reinterpret_cast<bool*>(heap_rest_.data())) : stack_rest_;
    for (size_t k = 0, at = 0; k < nv_; at += views_[k].shape.size(), ++k) c_[k] = cflat_ + at;
    std::copy(idx, idx + views_.back().shape.size(), c_[nv_ - 1]);
    unravel_down();
    for (size_t k = 0; k < nv_; ++k) rest_[k] = rest_valid(k);
  }

  // The current position's buffer index, or -1 where a mask hides it.
  int64_t index() const { return valid() ? lin_[0] : -1; }

  // One step along the top view's last axis, then the change carried down the stack.
  void step() {
    const View& top = views_.back();
    const size_t last = top.shape.size() - 1;
    ++c_[nv_ - 1][last];
    int64_t delta = top.strides[last];
    lin_[nv_ - 1] += delta;
    for (size_t k = nv_ - 1; k-- > 0;) {
      const View& v = views_[k];
      const size_t rank = v.shape.size();
      int64_t* ck = c_[k];
      if (rank == 0) break;
      ck[rank - 1] += delta;
      if (ck[rank - 1] >= 0 && ck[rank - 1] < v.shape[rank - 1]) {  // no carry: the usual case
        delta *= v.strides[rank - 1];
        lin_[k] += delta;
        continue;
      }
      carry(k);
      int64_t l = v.offset;
      for (size_t d = 0; d < rank; ++d) l += ck[d] * v.strides[d];
      delta = l - lin_[k];
      lin_[k] = l;
      rest_[k] = rest_valid(k);
    }
  }

 private:
  static constexpr size_t kStack = 64;

  // Each view's linear index from the top down, unravelling it into the view below. Floor
  // division, so that coordinates stay a consistent mixed-radix number even where the view
  // above is padding (its linear index can then be out of range).
  void unravel_down() {
    for (size_t k = nv_; k-- > 0;) {
      const View& v = views_[k];
      lin_[k] = v.offset;
      for (size_t d = 0; d < v.shape.size(); ++d) lin_[k] += c_[k][d] * v.strides[d];
      if (k == 0) break;
      const Shape& below = views_[k - 1].shape;
      int64_t l = lin_[k];
      for (size_t d = below.size(); d-- > 0;) {
        if (below[d] == 0) { c_[k - 1][d] = 0; continue; }
        int64_t q = l / below[d];
        if (l - q * below[d] < 0) --q;
        c_[k - 1][d] = l - q * below[d];
        l = q;
      }
      if (!below.empty()) c_[k - 1][0] += l * (below[0] ? below[0] : 0);
    }
  }

  // Normalises every digit of view k's coordinates but the first, which may run out of range.
  void carry(size_t k) {
    const View& v = views_[k];
    int64_t* ck = c_[k];
    for (size_t d = v.shape.size(); d-- > 1;) {
      if (v.shape[d] == 0 || (ck[d] >= 0 && ck[d] < v.shape[d])) continue;
      int64_t q = ck[d] / v.shape[d];
      if (ck[d] - q * v.shape[d] < 0) --q;  // floor division
      ck[d] -= q * v.shape[d];
      ck[d - 1] += q;
    }
  }

  // Validity is kept per view as "every masked axis but the last is inside" (which changes only
  // on a carry) plus a check of the last axis per step.
  bool rest_valid(size_t k) const {
    const View& v = views_[k];
    if (!v.has_mask()) return true;
    for (size_t d = 0; d + 1 < v.shape.size(); ++d)
      if (c_[k][d] < v.mask[d].first || c_[k][d] >= v.mask[d].second) return false;
    return true;
  }

  bool valid() const {
    for (size_t k = 0; k < nv_; ++k) {
      const View& v = views_[k];
      if (!rest_[k]) return false;
      if (!v.has_mask() || v.shape.empty()) continue;
      const int64_t x = c_[k][v.shape.size() - 1];
      if (x < v.mask.back().first || x >= v.mask.back().second) return false;
    }
    return true;
  }

  const std::vector<View>& views_;
  const size_t nv_;
  int64_t stack_c_[kStack], stack_lin_[8];
  int64_t* stack_start_[8];
  bool stack_rest_[8];
  std::vector<int64_t> heap_c_, heap_lin_;
  std::vector<int64_t*> heap_start_;
  std::vector<char> heap_rest_;
  int64_t* cflat_;
  int64_t* lin_;
  int64_t** c_;
  bool* rest_;
};

}  // namespace

void ShapeTracker::row_indices(const int64_t* idx, int64_t n, int64_t* out) const {
  if (n <= 0) return;
  if (views_.back().shape.empty()) { out[0] = index(idx); return; }
  RowWalk walk(views_, idx);
  for (int64_t i = 0;; ++i) {
    out[i] = walk.index();
    if (i + 1 == n) return;
    walk.step();
  }
}

std::optional<Shape> broadcast_shapes(const std::vector<const Shape*>& shapes) {
  size_t rank = 0;
  for (auto* s : shapes) rank = std::max(rank, s->size());
  Shape out(rank, 1);
  for (auto* s : shapes) {
    for (size_t i = 0; i < s->size(); ++i) {
      int64_t d = (*s)[s->size() - 1 - i];
      int64_t& o = out[rank - 1 - i];
      if (d == o || d == 1) continue;
      if (o != 1) return std::nullopt;
      o = d;
    }
  }
  return out;
}

}  // namespace maroon
