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
#include "cpu/gemm_pack.h"
#include "cpu/kernel.h"
#include "cpu/matmul_plan.h"
#include "cpu/threads.h"
#include "maroon/tensor.h"
#include "ref/executor.h"
#include "maroon/settings.h"

namespace maroon::cpu {

namespace {

// A panel p of batch b over every k, for the fused kernel's row count (12 or 6, by target).
template <class T>
void pack_a(const GemmArgs& g, int64_t b, int64_t p, int64_t mr, T* apack) {
  T* dst = apack + p * g.K * mr;
  const int kc = static_cast<int>(g.K);
  if (mr == 12) pack_a_panel<T, 12>(g, b, p * mr, 0, kc, dst);
  else pack_a_panel<T, 6>(g, b, p * mr, 0, kc, dst);
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
    int64_t mr, nr;
    fused_panel_sizes(out.dtype, &mr, &nr);
    assert(mr == 12 || mr == 6);
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
        if (p < mp) pack_a<T>(g, b, p, mr, apack);
        else pack_b_panels<T>(g, b, nr, bpack, p - mp, p - mp + 1);
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
  out.view.set_contiguous(out.shape);
  return true;
}

}  // namespace

void run_fused_reduce(Node& out) {
  if (out.dtype == DType::Float32 && fused_gemm<float>(out)) return;
  if (out.dtype == DType::Float64 && fused_gemm<double>(out)) return;
  // float16, bfloat16 (and an operand too large to copy densely): the reference fold.
  const bool report = setting_flag(SettingId::MAROON_REPORT_SLOW_OPS);
  if (report)
    std::fprintf(stderr, "maroon: scalar path for REDUCE_MULACC %s %s\n", std::string(dtype_name(out.dtype)).c_str(),
                 shape_str(out.shape).c_str());
  ref::execute(out);
}

}  // namespace maroon::cpu
