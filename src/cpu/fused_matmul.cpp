// Runs REDUCE_MULACC as a packed matmul. Its two sources broadcast to one shape; every axis of
// that shape is a row (only a moves), a column (only b moves), a batch (both move) or reduced
// (k, row-major over the reduced axes), so any REDUCE_MULACC over float32/float64 fits.
#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cpu/gemm_fused.h"
#include "cpu/kernel.h"
#include "cpu/matmul_plan.h"
#include "cpu/threads.h"
#include "maroon/tensor.h"
#include "ref/executor.h"

namespace maroon::cpu {

namespace {

// Whether v[i] == v[0] + i * step for every i (the common, dense case packs without indirection).
bool arithmetic(const std::vector<int64_t>& v, int64_t* step) {
  *step = v.size() > 1 ? v[1] - v[0] : 1;
  for (size_t i = 1; i < v.size(); ++i)
    if (v[i] - v[i - 1] != *step) return false;
  return true;
}

// A panels: [k][mr] per panel of mr rows (rows past M zero). B panels: [k][nr] (columns past N
// zero). Copies only, so how the panels are split between threads cannot matter.
template <class T>
void pack_a(const GemmArgs& g, int64_t b, int64_t p, int64_t mr, bool k_dense, int64_t sk, T* ap) {
  const T* A = static_cast<const T*>(g.A) + g.batchA[b];
  T* dst = ap + p * g.K * mr;
  // k outer, rows inner: the panel is written once, front to back (it is larger than L1).
  constexpr int64_t kMaxRows = 16;
  static const T zero[1] = {T(0)};
  assert(mr <= kMaxRows);
  const T* row[kMaxRows];
  int64_t step[kMaxRows];
  bool valid[kMaxRows];
  for (int64_t r = 0; r < mr; ++r) {
    const int64_t i = p * mr + r;
    valid[r] = i < g.M;  // rows past M read a zero
    row[r] = valid[r] ? A + g.rowA[i] + (k_dense ? g.kA[0] : 0) : zero;
    step[r] = valid[r] ? sk : 0;
  }
  if (k_dense) {
    for (int64_t k = 0; k < g.K; ++k, dst += mr)
      for (int64_t r = 0; r < mr; ++r) dst[r] = row[r][k * step[r]];
  } else {
    for (int64_t k = 0; k < g.K; ++k, dst += mr)
      for (int64_t r = 0; r < mr; ++r) dst[r] = valid[r] ? row[r][g.kA[k]] : T(0);
  }
}

template <class T>
void pack_b(const GemmArgs& g, int64_t b, int64_t p, int64_t nr, bool cols_unit, T* bp) {
  const T* B = static_cast<const T*>(g.B) + g.batchB[b];
  const int64_t j0 = p * nr, full = std::min<int64_t>(nr, g.N - j0);
  for (int64_t k = 0; k < g.K; ++k) {
    T* dst = bp + (p * g.K + k) * nr;
    const T* src = B + g.kB[k];
    if (cols_unit) {
      std::memcpy(dst, src + g.colB[j0], static_cast<size_t>(full) * sizeof(T));
    } else {
      for (int64_t jj = 0; jj < full; ++jj) dst[jj] = src[g.colB[j0 + jj]];
    }
    for (int64_t jj = full; jj < nr; ++jj) dst[jj] = T(0);
  }
}

template <class T>
bool fused_gemm(Node& out) {
  const Node& x = *out.src[0];
  const Node& y = *out.src[1];
  Shape s(x.shape.size());
  for (size_t d = 0; d < s.size(); ++d) s[d] = std::max(x.shape[d], y.shape[d]);
  auto buf = std::make_shared<Buffer>(out.dtype, numel(out.shape));
  if (buf->count > 0) {
    // A size-1 axis of an operand is broadcast over the full shape: stride 0.
    MatmulPlan plan;
    if (!plan_matmul(*x.buffer, x.view.expand(s), *y.buffer, y.view.expand(s), out.arg.ints, out.shape, &plan))
      return false;
    const GemmArgs g = plan.args(buf->bytes(), fused_nc(out.dtype));
    const int64_t M = g.M, N = g.N, K = g.K, NB = plan.split.NB;
    const std::vector<int64_t>&kA = plan.kA, &colB = plan.colB;
    int64_t mr, nr, sk, sc;
    fused_panel_sizes(out.dtype, &mr, &nr);
    const bool k_dense = arithmetic(kA, &sk);
    const bool cols_unit = arithmetic(colB, &sc) && sc == 1;
    const int64_t mp = (M + mr - 1) / mr, np = (N + nr - 1) / nr;
    // Panels live in Buffers (recycled blocks, not zeroed: packing writes every element), so a
    // large matmul does not pay a page fault per 4 KiB of fresh memory.
    Buffer apack_buf(out.dtype, mp * mr * K + 1), bpack_buf(out.dtype, np * nr * K + 1);
    T* apack = reinterpret_cast<T*>(apack_buf.bytes());
    T* bpack = reinterpret_cast<T*>(bpack_buf.bytes());
    const int64_t per_batch = g.tasks_m * g.tasks_n;
    // Small packs run on the calling thread: waking workers would cost more than the copy.
    const bool pack_alone = (mp * mr + np * nr) * K < (int64_t{1} << 16);
    for (int64_t b = 0; b < NB; ++b) {
      auto pack = [&](int64_t p) {
        if (p < mp) pack_a<T>(g, b, p, mr, k_dense, sk, apack);
        else pack_b<T>(g, b, p - mp, nr, cols_unit, bpack);
      };
      if (K == 0) {  // nothing to pack: every sum is +0
      } else if (pack_alone) {
        for (int64_t p = 0; p < mp + np; ++p) pack(p);
      } else {
        parallel_for(mp + np, pack, Round::NearestEven);
      }
      // Workers run in the node's rounding mode: the FMA instructions round in it.
      parallel_for(per_batch, [&](int64_t t) {
        fused_task(out.dtype, g, apack, bpack, b * per_batch + t, out.rnd);
      }, out.rnd);
    }
  }
  out.buffer = buf;
  out.view = ShapeTracker::contiguous(out.shape);
  return true;
}

}  // namespace

void run_fused_reduce(Node& out) {
  if (out.dtype == DType::Float32 && fused_gemm<float>(out)) return;
  if (out.dtype == DType::Float64 && fused_gemm<double>(out)) return;
  // float16, bfloat16 (and an operand too large to copy densely): the reference fold.
  static const bool report = std::getenv("MAROON_REPORT_SLOW_OPS") != nullptr;
  if (report)
    std::fprintf(stderr, "maroon: scalar path for REDUCE_MULACC %s %s\n", std::string(dtype_name(out.dtype)).c_str(),
                 shape_str(out.shape).c_str());
  ref::execute(out);
}

}  // namespace maroon::cpu
