// A sum of one buffer read through a stack of padded views whose leading axes are batch axes
// (ShapeTracker::batch_axes): pool's gradient, which folds the window gradients back onto the
// image through tinygrad's repeat, pad and reshape stack, (batch, channel) passing through every
// view. Every batch unit folds the same terms at the same offsets from its base, most of them
// padding (a 2x2 pool at stride 2 reads 9 positions per pixel, one of them real). The generic
// fold looks each term up position by position; here the terms are laid out once per kernel
// (cpu/fold_segs.h) and each unit adds only its real ones, in the fold's order, from +0: the same
// bits (padding skipped and NaNs canonical, as fold_segs.h says why).
//
// Where no output has more than one real term (pools whose windows tile or leave gaps, as
// beautiful_mnist's 2x2 at stride 2), a unit's fold is a gather: each output is +0 plus its one
// term, or +0. The segments were two outputs long, so the segment loop cost more than the adds;
// here each output's term offset is laid out once and each output computes T(0) + term, the
// very add fold_segs does first from its +0 (so -0 becomes +0 except when rounding down, NaNs
// canonical after), the same bits by construction.
//
// Where each output's real terms are the previous output's and one more (cumsum's windows, a
// row's prefixes), each output is the previous one's sum plus its new term (prefix_terms): the
// window sums' n^2 / 2 adds become n.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cpu/fold_segs.h"
#include "cpu/keyed_store.h"
#include "cpu/view_runs.h"
#include "cpu/kernel.h"
#include "cpu/threads.h"

namespace maroon::cpu {

namespace {

std::atomic<int64_t> g_view_fold_runs{0};
std::atomic<int64_t> g_view_fold_gather_runs{0};
std::atomic<int64_t> g_view_fold_prefix_runs{0};

// Each output's one real term (its offset from the unit's base), or -1 for none; false where
// some output has two or an offset past int32 (then the segments fold it).
bool single_terms(const FoldSegs& f, std::vector<int32_t>* at) {
  at->assign(static_cast<size_t>(f.P), -1);
  const int64_t rows = f.P / f.width;
  for (int64_t q = 0; q < rows; ++q)
    for (int64_t s = f.begin[q * f.R]; s < f.begin[(q + 1) * f.R]; ++s)
      for (int64_t l = 0; l < f.segs[s].len; ++l) {
        int32_t& o = (*at)[static_cast<size_t>(q * f.width + f.segs[s].x0 + l)];
        const int64_t off = f.segs[s].base + l;
        if (o >= 0 || off > INT32_MAX) return false;
        o = static_cast<int32_t>(off);
      }
  return true;
}

// fold_segs()'s result where each output has at most one term: its running sum from +0 plus
// that term, in the hardware's rounding mode, NaNs canonical.
template <class T>
void gather_terms(const std::vector<int32_t>& at, const T* src, T* out) {
  for (size_t p = 0; p < at.size(); ++p) {
    T acc = T(0);
    if (at[p] >= 0) acc += src[at[p]];
    out[p] = std::isnan(acc) ? CanonicalNaN<T>() : acc;
  }
}

// The terms of one unit's outputs: out's kept inner axes are the rows and columns of its P
// outputs (row-major, as out is contiguous), the reduced axes its R terms in index order.
bool unit_terms(const Shape& s, int nb, const ShapeTracker& inner, const std::vector<int64_t>& kaxes, FoldSegs* f,
                std::vector<int64_t>* table) {
  std::vector<int64_t> kept, red;
  for (size_t a = nb; a < s.size(); ++a)
    (std::binary_search(kaxes.begin(), kaxes.end(), static_cast<int64_t>(a)) ? red : kept).push_back(a - nb);
  for (int64_t a : kept) f->P *= s[a + nb];
  for (int64_t a : red) f->R *= s[a + nb];
  f->width = kept.empty() ? 1 : s[kept.back() + nb];
  // The layout costs an index() per term of one unit: small beside the units' folds.
  if (f->P * f->R > (int64_t{1} << 20) || f->P == 0 || f->R == 0) return false;
  std::vector<int64_t> c(s.size() - nb, 0);
  table->assign(static_cast<size_t>(f->P * f->R), -1);
  f->build([&](int64_t n) {
    int64_t q = n / f->R, rr = n % f->R;
    for (size_t k = kept.size(); k-- > 0; q /= s[kept[k] + nb]) c[kept[k]] = q % s[kept[k] + nb];
    for (size_t k = red.size(); k-- > 0; rr /= s[red[k] + nb]) c[red[k]] = rr % s[red[k] + nb];
    return (*table)[static_cast<size_t>(n)] = inner.index(c.data());
  });
  return true;
}

// Whether, along each row of a unit's outputs, every output's real terms are the previous
// output's and one more after them (cumsum's windows: tinygrad's cumsum sums a row's padded
// windows, output j the terms 0..j), so that out[j] = out[j - 1] + that term: the fold of output
// j from +0 adds the same terms in the same order, each rounded once, and padding is skipped
// either way (fold_segs.h). Fills each output's new term (-1 for none: the output is the
// previous one's sum) and, for a row's first output, (first) its terms, to fold from +0.
// `table` holds term r of output p at p * R + r (-1 for padding).
bool prefix_terms(const FoldSegs& f, const std::vector<int64_t>& table, std::vector<int64_t>* added,
                  std::vector<std::vector<int64_t>>* first) {
  if (f.width < 2 || f.R < 2) return false;
  added->assign(static_cast<size_t>(f.P), -1);
  first->assign(static_cast<size_t>(f.P / f.width), {});
  std::vector<int64_t> prev, now;
  for (int64_t p = 0; p < f.P; ++p) {
    now.clear();
    for (int64_t r = 0; r < f.R; ++r)
      if (table[static_cast<size_t>(p * f.R + r)] >= 0) now.push_back(table[static_cast<size_t>(p * f.R + r)]);
    if (p % f.width == 0) {
      (*first)[static_cast<size_t>(p / f.width)] = now;
    } else {
      if (now.size() < prev.size() || now.size() > prev.size() + 1 || !std::equal(prev.begin(), prev.end(), now.begin()))
        return false;
      if (now.size() > prev.size()) (*added)[static_cast<size_t>(p)] = now.back();
    }
    prev.swap(now);
  }
  return true;
}

// A unit's outputs by prefix_terms' recurrence, in the hardware's rounding mode, NaNs canonical
// as each output is stored (a running NaN stays one).
template <class T>
void prefix_fold(const FoldSegs& f, const std::vector<int64_t>& added, const std::vector<std::vector<int64_t>>& first,
                 const T* src, T* out) {
  for (int64_t q = 0; q < f.P / f.width; ++q) {
    T acc = T(0);
    for (int64_t t : first[static_cast<size_t>(q)]) acc += src[t];
    const int64_t p0 = q * f.width;
    out[p0] = std::isnan(acc) ? CanonicalNaN<T>() : acc;
    for (int64_t x = 1; x < f.width; ++x) {
      if (added[static_cast<size_t>(p0 + x)] >= 0) acc += src[added[static_cast<size_t>(p0 + x)]];
      out[p0 + x] = std::isnan(acc) ? CanonicalNaN<T>() : acc;
    }
  }
}

// Integer sums wrap (docs/spec.md: exact modulo 2^width): done in the unsigned type of the width.
template <class U>
void prefix_fold_int(const FoldSegs& f, const std::vector<int64_t>& added, const std::vector<std::vector<int64_t>>& first,
                     const U* src, U* out) {
  for (int64_t q = 0; q < f.P / f.width; ++q) {
    U acc = 0;
    for (int64_t t : first[static_cast<size_t>(q)]) acc = static_cast<U>(acc + src[t]);
    const int64_t p0 = q * f.width;
    out[p0] = acc;
    for (int64_t x = 1; x < f.width; ++x) {
      if (added[static_cast<size_t>(p0 + x)] >= 0) acc = static_cast<U>(acc + src[added[static_cast<size_t>(p0 + x)]]);
      out[p0 + x] = acc;
    }
  }
}

bool is_wide_int(DType d) {
  return d == DType::Int32 || d == DType::Int64 || d == DType::UInt32 || d == DType::UInt64;
}


// A unit's terms and what is known of them: a pure function of the leaf's view stack, its shape
// and the reduced axes (dtype and data play no part), kept between calls: the layout is an
// index() per term of a unit, as much as a fold of one unit (all of it for arange's one row).
struct FoldLayout {
  std::vector<int64_t> bstr;
  int nb = 0;
  int64_t units = 1;
  FoldSegs f;
  std::vector<int32_t> at;  // single terms (gather), where every output has at most one
  bool gather = false, prefix = false;
  std::vector<int64_t> added;  // prefix_terms' recurrence
  std::vector<std::vector<int64_t>> first;
};

KeyedStore<FoldLayout>& fold_layouts() {
  static auto* s = new KeyedStore<FoldLayout>(16);  // never destroyed: a sum may run at exit
  return *s;
}

// The layout for a sum over kaxes of a leaf read through `view`, or null where the sum is not a
// view fold (no batch axes, unless its terms are prefixes; a reduced batch axis; too large).
std::shared_ptr<const FoldLayout> fold_layout(const ShapeTracker& view, const Shape& s,
                                              const std::vector<int64_t>& kaxes) {
  thread_local std::vector<int64_t> key;
  view_runs_key(view, s, &key);
  key.push_back(static_cast<int64_t>(kaxes.size()));
  key.insert(key.end(), kaxes.begin(), kaxes.end());
  if (auto found = fold_layouts().find(key)) return found->nb < 0 ? nullptr : found;
  auto l = std::make_shared<FoldLayout>();
  ShapeTracker inner;
  l->nb = view.batch_axes(&l->bstr, &inner);
  if (l->nb == 0) inner = view;  // no batch axes: one unit, the whole view (batch_axes leaves inner)
  for (int a = 0; a < l->nb; ++a) l->units *= s[a];
  std::vector<int64_t> table;
  // Without batch units (arange's one row) the layout is as long as a fold of the whole sum:
  // tried, for its prefixes, only where that is small.
  int64_t terms = 1;
  for (size_t a = static_cast<size_t>(l->nb); a < s.size(); ++a) terms *= s[a];
  const bool try_it = kaxes.front() >= l->nb && (l->units >= 4 || terms <= (int64_t{1} << 18));
  if (!try_it || !unit_terms(s, l->nb, inner, kaxes, &l->f, &table)) {
    l->nb = -1;  // kept as "not a view fold"
  } else {
    l->gather = single_terms(l->f, &l->at);
    l->prefix = !l->gather && prefix_terms(l->f, table, &l->added, &l->first);
    // Worth a layout only over many units (LeafMap's table asks the same), or as prefixes.
    if (!l->prefix && (l->nb == 0 || l->units < 4)) l->nb = -1;
  }
  if (l->nb < 0) *l = FoldLayout{}, l->nb = -1;
  // Kept where small (a pool gradient's or a cumsum's: a few hundred KB at most), else made anew.
  const size_t bytes = l->f.segs.size() * sizeof(FoldSeg) + (l->f.begin.size() + l->added.size()) * 8 +
                       l->at.size() * 4 + l->first.size() * 32;
  if (bytes <= (size_t{4} << 20)) fold_layouts().put(key, l);
  return l->nb < 0 ? nullptr : l;
}

}  // namespace

bool try_view_fold(Node& out) {
  const bool fp = out.dtype == DType::Float32 || out.dtype == DType::Float64;
  if (out.arg.reduce_op != ReduceOp::ADD || (!fp && !is_wide_int(out.dtype))) return false;
  // The source must be the kernel's one leaf: a realized node (build_program's leaves are the
  // realized nodes, and an unrealized source would be code). Asked directly: building the program
  // to reject it was five heap blocks per reduction, every small sum's.
  const Node& leaf = *out.src[0];
  if (!leaf.realized || leaf.dtype != out.dtype) return false;
  const std::vector<int64_t>& kaxes = out.arg.ints;
  if (leaf.view.views().size() < 2 || kaxes.empty() || !std::is_sorted(kaxes.begin(), kaxes.end())) return false;
  const std::shared_ptr<const FoldLayout> layout = fold_layout(leaf.view, leaf.shape, kaxes);
  // Integers only as prefixes (fold_segs folds floats).
  if (!layout || (!fp && !layout->prefix)) return false;
  const FoldLayout& L = *layout;
  const FoldSegs& f = L.f;
  const Shape& s = leaf.shape;
  const int nb = L.nb;
  const std::vector<int64_t>& bstr = L.bstr;
  const int64_t units = L.units;
  const bool gather = L.gather, prefix = L.prefix;
  const size_t sz = itemsize(out.dtype);
  auto buf = std::make_shared<Buffer>(out.dtype, numel(out.shape));
  // Units per task: about 16K outputs, a function of the shape only.
  const int64_t per = std::max<int64_t>(1, (int64_t{1} << 14) / f.P), tasks = (units + per - 1) / per;
  const Round rnd = out.rnd;
  parallel_for(tasks, [&](int64_t task) {
    if (rnd != Round::NearestEven) set_hw_round(rnd);
    for (int64_t u = task * per; u < std::min(units, (task + 1) * per); ++u) {
      int64_t base = 0, rest = u;  // the unit's first element: its batch coordinates' strides
      for (int a = nb; a-- > 0; rest /= s[a]) base += (rest % s[a]) * bstr[a];
      const uint8_t* src = leaf.buffer->bytes() + base * sz;
      uint8_t* dst = buf->bytes() + u * f.P * sz;
      if (prefix && !fp) {
        if (sz == 4) prefix_fold_int(f, L.added, L.first, reinterpret_cast<const uint32_t*>(src), reinterpret_cast<uint32_t*>(dst));
        else prefix_fold_int(f, L.added, L.first, reinterpret_cast<const uint64_t*>(src), reinterpret_cast<uint64_t*>(dst));
      } else if (prefix) {
        if (out.dtype == DType::Float32)
          prefix_fold(f, L.added, L.first, reinterpret_cast<const float*>(src), reinterpret_cast<float*>(dst));
        else prefix_fold(f, L.added, L.first, reinterpret_cast<const double*>(src), reinterpret_cast<double*>(dst));
      } else if (!gather) {
        fold_segs(out.dtype, f, src, dst);
      } else if (out.dtype == DType::Float32) {
        gather_terms(L.at, reinterpret_cast<const float*>(src), reinterpret_cast<float*>(dst));
      } else {
        gather_terms(L.at, reinterpret_cast<const double*>(src), reinterpret_cast<double*>(dst));
      }
    }
    if (rnd != Round::NearestEven) set_hw_round(Round::NearestEven);
  }, Round::NearestEven);
  out.buffer = buf;
  out.view.set_contiguous(out.shape);
  ++g_view_fold_runs;
  if (gather) ++g_view_fold_gather_runs;
  if (prefix) ++g_view_fold_prefix_runs;
  return true;
}

int64_t view_fold_runs() { return g_view_fold_runs.load(); }
int64_t view_fold_prefix_runs() { return g_view_fold_prefix_runs.load(); }
int64_t view_fold_gather_runs() { return g_view_fold_gather_runs.load(); }

}  // namespace maroon::cpu
