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
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>

#include "cpu/fold_segs.h"
#include "cpu/kernel.h"
#include "cpu/threads.h"

namespace maroon::cpu {

namespace {

std::atomic<int64_t> g_view_fold_runs{0};
std::atomic<int64_t> g_view_fold_gather_runs{0};

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
bool unit_terms(const Shape& s, int nb, const ShapeTracker& inner, const std::vector<int64_t>& kaxes, FoldSegs* f) {
  std::vector<int64_t> kept, red;
  for (size_t a = nb; a < s.size(); ++a)
    (std::binary_search(kaxes.begin(), kaxes.end(), static_cast<int64_t>(a)) ? red : kept).push_back(a - nb);
  for (int64_t a : kept) f->P *= s[a + nb];
  for (int64_t a : red) f->R *= s[a + nb];
  f->width = kept.empty() ? 1 : s[kept.back() + nb];
  // The layout costs an index() per term of one unit: small beside the units' folds.
  if (f->P * f->R > (int64_t{1} << 20) || f->P == 0 || f->R == 0) return false;
  std::vector<int64_t> c(s.size() - nb, 0);
  f->build([&](int64_t n) {
    int64_t q = n / f->R, rr = n % f->R;
    for (size_t k = kept.size(); k-- > 0; q /= s[kept[k] + nb]) c[kept[k]] = q % s[kept[k] + nb];
    for (size_t k = red.size(); k-- > 0; rr /= s[red[k] + nb]) c[red[k]] = rr % s[red[k] + nb];
    return inner.index(c.data());
  });
  return true;
}

}  // namespace

bool try_view_fold(Node& out) {
  if (out.arg.reduce_op != ReduceOp::ADD || (out.dtype != DType::Float32 && out.dtype != DType::Float64)) return false;
  // The source must be the kernel's one leaf: a realized node (build_program's leaves are the
  // realized nodes, and an unrealized source would be code). Asked directly: building the program
  // to reject it was five heap blocks per reduction, every small sum's.
  const Node& leaf = *out.src[0];
  if (!leaf.realized || leaf.dtype != out.dtype) return false;
  const std::vector<int64_t>& kaxes = out.arg.ints;
  if (leaf.view.views().size() < 2 || kaxes.empty() || !std::is_sorted(kaxes.begin(), kaxes.end())) return false;
  std::vector<int64_t> bstr;
  ShapeTracker inner;
  const int nb = leaf.view.batch_axes(&bstr, &inner);
  const Shape& s = leaf.shape;
  int64_t units = 1;
  for (int a = 0; a < nb; ++a) units *= s[a];
  // Worth a layout only over many units (LeafMap's table asks the same).
  if (nb == 0 || kaxes.front() < nb || units < 4) return false;
  FoldSegs f;
  if (!unit_terms(s, nb, inner, kaxes, &f)) return false;

  std::vector<int32_t> at;
  const bool gather = single_terms(f, &at);
  auto buf = std::make_shared<Buffer>(out.dtype, numel(out.shape));
  // Units per task: about 16K outputs, a function of the shape only.
  const int64_t per = std::max<int64_t>(1, (int64_t{1} << 14) / f.P), tasks = (units + per - 1) / per;
  const Round rnd = out.rnd;
  const size_t sz = itemsize(out.dtype);
  parallel_for(tasks, [&](int64_t task) {
    if (rnd != Round::NearestEven) set_hw_round(rnd);
    for (int64_t u = task * per; u < std::min(units, (task + 1) * per); ++u) {
      int64_t base = 0, rest = u;  // the unit's first element: its batch coordinates' strides
      for (int a = nb; a-- > 0; rest /= s[a]) base += (rest % s[a]) * bstr[a];
      const uint8_t* src = leaf.buffer->bytes() + base * sz;
      uint8_t* dst = buf->bytes() + u * f.P * sz;
      if (!gather) fold_segs(out.dtype, f, src, dst);
      else if (out.dtype == DType::Float32) gather_terms(at, reinterpret_cast<const float*>(src), reinterpret_cast<float*>(dst));
      else gather_terms(at, reinterpret_cast<const double*>(src), reinterpret_cast<double*>(dst));
    }
    if (rnd != Round::NearestEven) set_hw_round(Round::NearestEven);
  }, Round::NearestEven);
  out.buffer = buf;
  out.view.set_contiguous(out.shape);
  ++g_view_fold_runs;
  if (gather) ++g_view_fold_gather_runs;
  return true;
}

int64_t view_fold_runs() { return g_view_fold_runs.load(); }
int64_t view_fold_gather_runs() { return g_view_fold_gather_runs.load(); }

}  // namespace maroon::cpu
