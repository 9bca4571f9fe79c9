// Accumulator programs whose leaves are read in place, broadcast, or constant over runs of
// positions: batchnorm's output and input gradient, whose per-channel mean, weight, invstd and
// bias are constant over each plane. The tile loop (interp.cpp) fills such a leaf into a tile
// whenever a tile of 256 positions crosses a plane (three tiles of five over 20 x 20 planes),
// and the fills and the loop's per-leaf work were ~30% of batchnorm's output kernel (perf). Here
// a task's positions go a segment at a time between run boundaries, each run leaf read as one
// element broadcast where it lies (the machine's S steps, as for broadcast scalars), the
// contiguous leaves and the output in place: the same steps on the same values, so the same bits.
//
// Stores: the machine writes whole vectors and may run up to kTilePad elements past the count
// it is given. A segment's first part is a multiple of kTilePad ending at least kTilePad before
// the segment's end, written in place (what it writes past it is rewritten next); the rest, less
// than 2 * kTilePad positions, goes through spare tiles (its contiguous leaves copied there too,
// so nothing is read past a buffer's end) and is copied out.
#include "cpu/acc_runs.h"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace maroon::cpu {

namespace {
std::atomic<int64_t> g_acc_run_tasks{0};
constexpr int64_t kSpare = 2 * kTilePad;  // positions of a segment's rest, at most
}  // namespace

bool plan_acc_runs(const Program& prog, const std::vector<bool>& scalar, const std::vector<bool>& contiguous,
                   const std::vector<LeafRuns>& runs, std::vector<AccStep>* steps) {
  if (prog.acc.empty()) return false;
  std::vector<bool> one(scalar);  // leaves read as one element per call
  bool any = false;
  for (size_t l = 0; l < prog.leaves.size(); ++l) {
    if (scalar[l] || contiguous[l]) continue;
    if (runs[l].r == 0) return false;
    one[l] = any = true;
  }
  if (!any) return false;
  *steps = prog.acc;
  broadcast_scalar_leaves(*steps, one);
  return true;
}

namespace {

// The segment's pointers and its end: contiguous leaves at p, run leaves at their run's element
// (cursors moved to p), the end the nearest run boundary (or `end`).
int64_t segment(const std::vector<LeafMap>& maps, const std::vector<bool>& scalar, const std::vector<LeafRuns>& runs,
                const Shape& shape, int64_t p, int64_t end, std::vector<RunCursor>& cursor, const void** leaves) {
  for (size_t l = 0; l < maps.size(); ++l) {
    const size_t sz = itemsize(maps[l].node->dtype);
    const uint8_t* base = maps[l].node->buffer->bytes();
    if (scalar[l]) {
      leaves[l] = base + maps[l].offset * static_cast<int64_t>(sz);
    } else if (runs[l].r) {
      seek_run(cursor[l], maps[l], shape, runs[l], p);
      leaves[l] = base + cursor[l].at * static_cast<int64_t>(sz);
      end = std::min(end, cursor[l].end);
    } else {
      leaves[l] = base + p * static_cast<int64_t>(sz);
    }
  }
  return end;
}

}  // namespace

void run_acc_runs(const Program& prog, const std::vector<AccStep>& steps, const std::vector<LeafMap>& maps,
                  const std::vector<bool>& scalar, const std::vector<LeafRuns>& runs, const Shape& shape, int64_t p,
                  int64_t end, Buffer& out, const std::vector<std::shared_ptr<Buffer>>& outs) {
  g_acc_run_tasks.fetch_add(1, std::memory_order_relaxed);
  count_acc_run();  // an accumulator program ran (as TileEval counts its tasks)
  const size_t L = maps.size(), K = outs.size();
  const AccFn acc = fast_acc(prog.dtype);
  const int nsteps = static_cast<int>(steps.size());
  const size_t osz = itemsize(out.dtype);
  uint8_t* dst = out.bytes();
  std::vector<RunCursor> cursor(L);
  std::vector<const void*> leaves(L);
  std::vector<void*> o_at(K);
  // Spare tiles: one per leaf (its rest, copied), the result and each other output.
  std::vector<std::vector<uint64_t>> spare(L + 1 + K, std::vector<uint64_t>(kSpare + kTilePad, 0));
  while (p < end) {
    const int64_t e = segment(maps, scalar, runs, shape, p, end, cursor, leaves.data());
    const int64_t n = e - p;
    const int64_t first = n > kTilePad ? (n - kTilePad) / kTilePad * kTilePad : 0;
    if (first > 0) {
      for (size_t k = 0; k < K; ++k) o_at[k] = outs[k]->bytes() + p * static_cast<int64_t>(itemsize(outs[k]->dtype));
      acc(steps.data(), nsteps, leaves.data(), o_at.data(), dst + p * static_cast<int64_t>(osz), static_cast<int>(first));
    }
    const int64_t q = p + first, rest = e - q;  // 0 < rest < kSpare
    for (size_t l = 0; l < L; ++l) {
      if (scalar[l] || runs[l].r) continue;
      const size_t sz = itemsize(maps[l].node->dtype);
      std::memcpy(spare[l].data(), maps[l].node->buffer->bytes() + q * static_cast<int64_t>(sz), rest * sz);
      leaves[l] = spare[l].data();
    }
    for (size_t k = 0; k < K; ++k) o_at[k] = spare[L + 1 + k].data();
    acc(steps.data(), nsteps, leaves.data(), o_at.data(), spare[L].data(), static_cast<int>(rest));
    std::memcpy(dst + q * static_cast<int64_t>(osz), spare[L].data(), rest * osz);
    for (size_t k = 0; k < K; ++k) {
      const size_t ksz = itemsize(outs[k]->dtype);
      std::memcpy(outs[k]->bytes() + q * static_cast<int64_t>(ksz), spare[L + 1 + k].data(), rest * ksz);
    }
    p = e;
  }
}

int64_t acc_run_tasks() { return g_acc_run_tasks.load(); }

}  // namespace maroon::cpu
