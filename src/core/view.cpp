#include "core/view.h"

#include <algorithm>
#include <cassert>
#include <optional>

namespace maroon {

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

Shape contiguous_strides(const Shape& s) {
  Shape st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = s[i] == 1 ? 0 : acc;  // size-1 axes never move: stride 0 keeps views canonical
    acc *= s[i];
  }
  return st;
}

View View::contiguous(const Shape& s) { return View{s, contiguous_strides(s), 0, {}}; }

ShapeTracker ShapeTracker::contiguous(const Shape& s) {
  ShapeTracker t;
  t.views_.push_back(View::contiguous(s));
  return t;
}

ShapeTracker ShapeTracker::broadcast_scalar(const Shape& s) {
  ShapeTracker t;
  t.views_.push_back(View{s, std::vector<int64_t>(s.size(), 0), 0, {}});
  return t;
}

bool ShapeTracker::is_contiguous() const {
  if (views_.size() != 1) return false;
  const View& v = views_[0];
  return !v.has_mask() && v.offset == 0 && v.strides == contiguous_strides(v.shape);
}

namespace {

// numpy's attempt_nocopy_reshape: strides for `to` over the same elements as (from, strides),
// or nothing when the reshape needs a copy. Size-1 axes are dropped first.
std::optional<std::vector<int64_t>> reshape_strides(const Shape& from,
                                                    const std::vector<int64_t>& strides,
                                                    const Shape& to) {
  Shape os;
  std::vector<int64_t> ost;
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1) { os.push_back(from[i]); ost.push_back(strides[i]); }
  std::vector<int64_t> out(to.size(), 0);
  size_t oi = 0, oj = 1, ni = 0, nj = 1;
  size_t on = os.size(), nn = to.size();
  while (ni < nn && oi < on) {
    int64_t np = to[ni], op = os[oi];
    while (np != op) {
      if (np < op) np *= to[nj++];
      else op *= os[oj++];
    }
    for (size_t ok = oi; ok + 1 < oj; ++ok)
      if (ost[ok] != os[ok + 1] * ost[ok + 1]) return std::nullopt;
    out[nj - 1] = ost[oj - 1];
    for (size_t nk = nj - 1; nk > ni; --nk) out[nk - 1] = out[nk] * to[nk];
    ni = nj++;
    oi = oj++;
  }
  for (size_t i = 0; i < nn; ++i)
    if (to[i] == 1) out[i] = 0;
  return out;
}

}  // namespace

ShapeTracker ShapeTracker::reshape(const Shape& s) const {
  ShapeTracker t = *this;
  const View& v = views_.back();
  if (v.shape == s) return t;
  if (numel(s) != 0 && !v.has_mask()) {
    if (auto st = reshape_strides(v.shape, v.strides, s)) {
      t.views_.back() = View{s, *st, v.offset, {}};
      return t;
    }
  }
  t.views_.push_back(View::contiguous(s));
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
    v.offset -= b * v.strides[i];
    v.mask[i] = {v.mask[i].first + b, v.mask[i].second + b};
    v.shape[i] += b + a;
  }
  return t;
}

ShapeTracker ShapeTracker::shrink(const Pairs& p) const {
  ShapeTracker t = *this;
  View& v = t.views_.back();
  for (size_t i = 0; i < p.size(); ++i) {
    auto [b, e] = p[i];
    v.offset += b * v.strides[i];
    v.shape[i] = e - b;
    if (v.has_mask()) {
      int64_t lo = std::clamp<int64_t>(v.mask[i].first - b, 0, e - b);
      int64_t hi = std::clamp<int64_t>(v.mask[i].second - b, lo, e - b);
      v.mask[i] = {lo, hi};
    }
  }
  return t;
}

ShapeTracker ShapeTracker::flip(const std::vector<int64_t>& axes) const {
  ShapeTracker t = *this;
  View& v = t.views_.back();
  for (int64_t ax : axes) {
    int64_t n = v.shape[ax];
    if (n > 0) v.offset += (n - 1) * v.strides[ax];
    v.strides[ax] = -v.strides[ax];
    if (v.has_mask()) v.mask[ax] = {n - v.mask[ax].second, n - v.mask[ax].first};
  }
  return t;
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

void ShapeTracker::row_indices(const int64_t* idx, int64_t n, int64_t* out) const {
  if (n <= 0) return;
  const size_t nv = views_.size();
  const View& top = views_.back();
  if (top.shape.empty()) { out[0] = index(idx); return; }
  // Coordinates of the current position in every view (views_[k] for k < nv-1 hold the
  // row-major unravel of the linear index of the view above), and each view's linear index.
  std::vector<std::vector<int64_t>> c(nv);
  std::vector<int64_t> lin(nv);
  c[nv - 1].assign(idx, idx + top.shape.size());
  for (size_t k = nv; k-- > 0;) {
    const View& v = views_[k];
    lin[k] = v.offset;
    for (size_t d = 0; d < v.shape.size(); ++d) lin[k] += c[k][d] * v.strides[d];
    if (k == 0) break;
    const Shape& below = views_[k - 1].shape;
    c[k - 1].assign(below.size(), 0);
    // Floor division, so that coordinates stay a consistent mixed-radix number even where the
    // view above is padding (its linear index can then be out of range).
    int64_t l = lin[k];
    for (size_t d = below.size(); d-- > 0;) {
      if (below[d] == 0) { c[k - 1][d] = 0; continue; }
      int64_t q = l / below[d];
      if (l - q * below[d] < 0) --q;
      c[k - 1][d] = l - q * below[d];
      l = q;
    }
    if (!below.empty()) c[k - 1][0] += l * (below[0] ? below[0] : 0);
  }
  auto valid = [&] {
    for (size_t k = 0; k < nv; ++k) {
      const View& v = views_[k];
      if (!v.has_mask()) continue;
      for (size_t d = 0; d < v.shape.size(); ++d)
        if (c[k][d] < v.mask[d].first || c[k][d] >= v.mask[d].second) return false;
    }
    return true;
  };
  const size_t last = top.shape.size() - 1;
  for (int64_t i = 0;; ++i) {
    out[i] = valid() ? lin[0] : -1;
    if (i + 1 == n) return;
    // One step along the top view's last axis, then the change carried down the stack.
    ++c[nv - 1][last];
    int64_t delta = top.strides[last];
    lin[nv - 1] += delta;
    for (size_t k = nv - 1; k-- > 0;) {
      const View& v = views_[k];
      std::vector<int64_t>& ck = c[k];
      if (ck.empty()) break;
      ck.back() += delta;  // add delta to the mixed-radix number ck, then normalise every
      for (size_t d = ck.size(); d-- > 1;) {  // digit but the first, which may run out of range
        if (v.shape[d] == 0 || (ck[d] >= 0 && ck[d] < v.shape[d])) continue;
        int64_t carry = ck[d] / v.shape[d];
        if (ck[d] - carry * v.shape[d] < 0) --carry;  // floor division
        ck[d] -= carry * v.shape[d];
        ck[d - 1] += carry;
      }
      int64_t l = v.offset;
      for (size_t d = 0; d < ck.size(); ++d) l += ck[d] * v.strides[d];
      delta = l - lin[k];
      lin[k] = l;
    }
  }
}

}  // namespace maroon
