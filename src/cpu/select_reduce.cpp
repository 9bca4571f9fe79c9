// A sum of a selection: REDUCE ADD over one axis of WHERE(mask, v, +0), where the mask's leaves
// are broadcast (stride 0) along some axes. GATHER's gradient is one (core/gradient.cpp: the
// one-hot formulation, a mask over (rows, positions) broadcast along the embedding width):
// folded as written it evaluates the mask and the select at every one of rows x vocabulary x
// width positions; here the mask is evaluated once per position of its own (smaller) space and
// only the selected values are added.
//
// Why the bits are the fold's: each output is a left fold from the identity +0 over r in order
// of (mask ? v : +0). Adding +0 to an accumulator leaves its bits unchanged unless it is -0 and
// the rounding is not toward -inf (-0 + +0 = +0 there; toward -inf, -0 + +0 = -0). Starting from
// +0, an accumulator is -0 only after -0 + -0 or an exact cancellation, and a cancellation gives
// +0 in every mode but toward -inf: so outside that mode it is never -0, and in that mode adding
// +0 changes nothing. Skipping the unselected positions therefore changes no bit; the selected
// ones are added in r order, each rounded once in the node's mode, NaN made canonical.
#include <atomic>
#include <cstring>
#include <vector>

#include "cpu/kernel.h"
#include "cpu/threads.h"
#include "ref/scalar.h"

namespace maroon::cpu {

namespace {

std::atomic<int64_t> g_select_runs{0};

// The mask's leaves' strides (all affine), or false.
bool affine_leaves(const Program& p, std::vector<LeafMap>* maps) {
  for (const Node* l : p.leaves) {
    maps->emplace_back(l);
    if (!maps->back().affine) return false;
  }
  return true;
}

// The mask at every position of `ms` (the source shape with the axes no mask leaf moves along
// set to 1), as 0/1 bytes in row-major order. Leaf indices are counted up position by position
// (an odometer over ms' axes; its last axes are often 1, where row segments are one long).
std::vector<uint8_t> eval_mask(const Program& prog, const std::vector<LeafMap>& maps, const Shape& ms) {
  const int64_t total = numel(ms);
  const size_t nd = ms.size(), L = maps.size();
  std::vector<uint8_t> sel(static_cast<size_t>(total));
  TileEval ev(prog);
  std::vector<std::vector<int64_t>> idx(L, std::vector<int64_t>(kTile));
  std::vector<const int64_t*> ptrs;
  for (auto& v : idx) ptrs.push_back(v.data());
  std::vector<int64_t> at(L), c(nd, 0);
  for (size_t l = 0; l < L; ++l) at[l] = maps[l].offset;
  for (int64_t p0 = 0; p0 < total; p0 += kTile) {
    const int n = static_cast<int>(std::min<int64_t>(kTile, total - p0));
    for (int i = 0; i < n; ++i) {
      for (size_t l = 0; l < L; ++l) idx[l][i] = at[l];
      for (size_t d = nd; d-- > 0;) {  // next position: carry through the axes
        if (++c[d] < ms[d]) {
          for (size_t l = 0; l < L; ++l) at[l] += maps[l].strides[d];
          break;
        }
        for (size_t l = 0; l < L; ++l) at[l] -= (ms[d] - 1) * maps[l].strides[d];
        c[d] = 0;
      }
    }
    const uint8_t* r = static_cast<const uint8_t*>(ev.eval(ptrs, n));
    for (int i = 0; i < n; ++i) sel[static_cast<size_t>(p0 + i)] = r[i] != 0;
  }
  return sel;
}

// Canonical NaN of each format (docs/spec.md): the sum's NaN, whatever the operands' payloads.
inline float canonical(float x) {
  if (x == x) return x;
  const uint32_t q = 0x7FC00000u;
  std::memcpy(&x, &q, 4);
  return x;
}
inline double canonical(double x) {
  if (x == x) return x;
  const uint64_t q = 0x7FF8000000000000ull;
  std::memcpy(&x, &q, 8);
  return x;
}

// Row-major strides of `s`.
std::vector<int64_t> contiguous_strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

// acc[o] += v[o's position at r] for each position whose mask is set, r outermost so that each
// output's additions come in r order. `inner` is the shape of the axes the mask does not move
// along (each selected mask position adds a whole block of them).
template <class T>
void accumulate(const Node& out, const LeafMap& vm, const std::vector<uint8_t>& sel, const Shape& ms,
                const Shape& inner, int64_t axis, T* acc) {
  const size_t nd = ms.size();
  const std::vector<int64_t> ostr = contiguous_strides(out.shape), mstr = contiguous_strides(ms);
  const T* v = reinterpret_cast<const T*>(vm.node->buffer->bytes());
  // Offsets of the inner block in the output and in v.
  const int64_t nq = numel(inner);
  std::vector<int64_t> qo(static_cast<size_t>(nq)), qv(static_cast<size_t>(nq)), c(nd, 0);
  for (int64_t q = 0; q < nq; ++q) {
    for (size_t d = 0; d < nd; ++d) {
      qo[q] += c[d] * ostr[d];
      qv[q] += c[d] * vm.strides[d];
    }
    for (size_t d = nd; d-- > 0;) { if (++c[d] < inner[d]) break; c[d] = 0; }
  }
  // The mask positions at one r: ms with the reduce axis fixed.
  Shape per_r = ms;
  per_r[axis] = 1;
  const int64_t nm = numel(per_r), R = out.src[0]->shape[axis];
  std::vector<int64_t> m(nd, 0);
  for (int64_t r = 0; r < R; ++r) {
    std::fill(m.begin(), m.end(), 0);
    for (int64_t k = 0; k < nm; ++k) {
      int64_t at = ms[axis] == 1 ? 0 : r * mstr[axis];
      int64_t ob = 0, vb = vm.offset + r * vm.strides[axis];
      for (size_t d = 0; d < nd; ++d) {
        at += m[d] * mstr[d];
        ob += m[d] * ostr[d];
        vb += m[d] * vm.strides[d];
      }
      if (sel[static_cast<size_t>(at)])
        for (int64_t q = 0; q < nq; ++q) acc[ob + qo[q]] = canonical(acc[ob + qo[q]] + v[vb + qv[q]]);
      for (size_t d = nd; d-- > 0;) { if (++m[d] < per_r[d]) break; m[d] = 0; }
    }
  }
}

}  // namespace

bool try_select_reduce(Node& out) {
  if (out.arg.reduce_op != ReduceOp::ADD || out.arg.ints.size() != 1) return false;
  const DType d = out.dtype;
  if ((d != DType::Float32 && d != DType::Float64) || ref::reduce_identity(ReduceOp::ADD, d) != 0) return false;
  const Node& w = *out.src[0];
  if (w.realized || w.op != Op::WHERE || w.dtype != d) return false;
  const Node& v = *w.src[1];
  const Node& z = *w.src[2];
  if (!v.realized || !z.realized) return false;
  const LeafMap vm(&v), zm(&z);
  if (!vm.affine || !zm.affine) return false;
  for (int64_t s : zm.strides)
    if (s != 0) return false;
  if (z.buffer->load(zm.offset) != 0) return false;  // +0 only: the proof above needs it
  const Shape& S = w.shape;
  const int64_t axis = out.arg.ints[0];
  if (numel(S) == 0) return false;
  const Program prog = build_program(w.src[0].get());
  if (prog.dtype != DType::Bool) return false;
  std::vector<LeafMap> maps;
  if (!affine_leaves(prog, &maps)) return false;
  Shape ms(S.size(), 1), inner = S;
  for (size_t k = 0; k < S.size(); ++k) {
    bool moves = false;
    for (const LeafMap& m : maps) moves = moves || m.strides[k] != 0;
    if (moves) ms[k] = S[k];
    if (moves || static_cast<int64_t>(k) == axis) inner[k] = 1;
  }
  // Worth it only where the mask is much smaller than the select (else the fold does as well).
  if (numel(inner) < 8) return false;
  const std::vector<uint8_t> sel = eval_mask(prog, maps, ms);
  auto buf = std::make_shared<Buffer>(d, numel(out.shape));
  std::memset(buf->bytes(), 0, buf->nbytes());  // the identity, +0
  if (out.rnd != Round::NearestEven) set_hw_round(out.rnd);
  if (d == DType::Float32) accumulate(out, vm, sel, ms, inner, axis, reinterpret_cast<float*>(buf->bytes()));
  else accumulate(out, vm, sel, ms, inner, axis, reinterpret_cast<double*>(buf->bytes()));
  if (out.rnd != Round::NearestEven) set_hw_round(Round::NearestEven);
  out.buffer = buf;
  out.view.set_contiguous(out.shape);
  g_select_runs.fetch_add(1);
  return true;
}

int64_t select_reduce_runs() { return g_select_runs.load(); }

}  // namespace maroon::cpu
