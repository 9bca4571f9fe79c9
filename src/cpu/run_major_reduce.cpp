// Sums over trailing axes whose terms lie in runs: batchnorm's per-channel statistics, (batch,
// channel, y, x) summed over batch, y and x, each channel's terms a run of y * x consecutive
// elements per batch. The generic fold (interp.cpp, ReduceTask) evaluates a tile position-major
// across outputs (16 channels by 16 positions), so every leaf element is gathered a plane apart
// and every tile costs its setup for 256 elements. Here a tile is output-major: an output's
// positions along the run, read in place (or copied as a run, or filled for a per-channel
// value), and up to 256 / run outputs per tile. Each output's terms are still added one at a time
// in index order from the identity +0 (a left fold), the outputs of a task interleaved as
// independent chains; a NaN stays a NaN under addition, so making it canonical at the end gives
// the generic fold's bits, which canonicalises every step.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

#include "cpu/gemm.h"
#include "cpu/kernel.h"
#include "cpu/threads.h"

namespace maroon::cpu {

namespace {

std::atomic<int64_t> g_run_major_runs{0}, g_run_major_in_place_runs{0}, g_run_plans{0};

// Outputs a task folds at once (independent add chains: enough to hide an add's latency).
constexpr int kRunChains = 8;
// Runs shorter than this stay with the generic fold (tiles of many short runs gain little).
constexpr int64_t kMinRun = 32;
// Terms a task folds at least (several groups of short runs: a layernorm's rows of 64).
constexpr int64_t kTaskTerms = 8192;

struct RunPlan {
  Program prog;
  std::vector<LeafMap> maps;
  Shape in;
  std::vector<int64_t> outer;  // reduced axes before the trailing run, outermost first
  int64_t run = 1;             // positions per run (the trailing reduced axes' product)
  int64_t runs = 1;            // runs per output
  std::vector<int64_t> step;   // per leaf: its stride along the run
  int m = 0, k = 1, group = 1; // positions per tile chunk, outputs per tile, outputs per task
  explicit RunPlan(const Node* src) : prog(build_program(src)), in(src->shape) {}
};

// The run's length: the product of the trailing axes of `in` that `out` reduces (or that have
// size 1), 1 when there are none. A function of the shapes and axes alone, so a sum too short
// for runs (a 16-element `((a+b)*a).sum()` from Python) is refused before its program is built:
// the generic fold builds it again, and building it twice was ~10% of that call.
int64_t run_length(const Node& out, const Shape& in) {
  std::vector<bool> red(in.size(), false);
  for (int64_t a : out.arg.ints) red[static_cast<size_t>(a)] = true;
  int64_t run = 1;
  for (size_t a = in.size(); a > 0 && (red[a - 1] || in[a - 1] == 1); --a) run *= in[a - 1];
  return run;
}

// The trailing axes that are reduced (or of size 1) form the run; every leaf must be one affine
// view whose index steps by one stride along it.
bool plan_runs(const Node& out, RunPlan* p) {
  const size_t nd = p->in.size();
  std::vector<bool> red(nd, false);
  for (int64_t a : out.arg.ints) red[static_cast<size_t>(a)] = true;
  size_t first = nd;
  while (first > 0 && (red[first - 1] || p->in[first - 1] == 1)) --first;
  for (size_t a = first; a < nd; ++a) p->run *= p->in[a];
  if (first == nd || p->run < kMinRun) return false;
  for (size_t a = 0; a < first; ++a)
    if (red[a] && p->in[a] != 1) p->outer.push_back(static_cast<int64_t>(a));
  for (int64_t a : p->outer) p->runs *= p->in[a];
  for (const Node* l : p->prog.leaves) {
    p->maps.emplace_back(l);
    const LeafMap& m = p->maps.back();
    if (!m.affine || m.strides.size() != nd) return false;
    // Along the run, flat position j = sum of coord * (product of later extents): the leaf's
    // index steps by s per position when each axis's stride is s times that product.
    int64_t s = 0, span = 1;
    bool set = false, linear = true;
    for (size_t a = nd; a-- > first;) {
      if (p->in[a] == 1) continue;
      if (!set) { s = m.strides[a]; set = true; }
      linear = linear && m.strides[a] == s * span;
      span *= p->in[a];
    }
    if (!linear) return false;
    p->step.push_back(s);
  }
  p->m = static_cast<int>(std::min<int64_t>(p->run, kTile));
  p->k = std::max(1, kTile / p->m);
  p->k = std::min(p->k, kRunChains);
  p->group = p->k * ((kRunChains + p->k - 1) / p->k);
  return true;
}

// acc[t] += v[t][j] for j < n in order, t < G: G independent chains, their sums in registers.
template <class T, int G>
void fold_fixed(T* acc, const uint8_t* const* rows, int n) {
  const T* v[G];
  T a[G];
  for (int t = 0; t < G; ++t) v[t] = reinterpret_cast<const T*>(rows[t]), a[t] = acc[t];
  for (int j = 0; j < n; ++j)
    for (int t = 0; t < G; ++t) a[t] += v[t][j];
  for (int t = 0; t < G; ++t) acc[t] = a[t];
}

// The same for g < 2 * kRunChains chains, at most kRunChains at a time (each chain's order is
// its own: which chains run beside it changes no bit).
template <class T>
void fold_chains(T* acc, const uint8_t* const* rows, int g, int n) {
  for (int t0 = 0; t0 < g; t0 += kRunChains) {
    static_assert(kRunChains == 8, "the cases below");
    T* a = acc + t0;
    const uint8_t* const* r = rows + t0;
    switch (std::min(g - t0, kRunChains)) {
      case 1: fold_fixed<T, 1>(a, r, n); break;
      case 2: fold_fixed<T, 2>(a, r, n); break;
      case 3: fold_fixed<T, 3>(a, r, n); break;
      case 4: fold_fixed<T, 4>(a, r, n); break;
      case 5: fold_fixed<T, 5>(a, r, n); break;
      case 6: fold_fixed<T, 6>(a, r, n); break;
      case 7: fold_fixed<T, 7>(a, r, n); break;
      default: fold_fixed<T, 8>(a, r, n); break;
    }
  }
}

template <class T>
void canonical_accs(T* acc, int g) {
  for (int t = 0; t < g; ++t)
    if (std::isnan(acc[t])) acc[t] = CanonicalNaN<T>();
}

// Folds groups of outputs one after another: its scratch and evaluator are set up once per task
// (per group, they cost more than the fold of a layernorm's 8 rows of 64).
class RunTask {
 public:
  RunTask(const RunPlan& p, const Node& out) : p_(p), out_(out), ev_(p.prog) {}

  // Outputs o0 .. o0 + g - 1 (g <= p.group).
  void run(Buffer& buf, int64_t o0, int g) {
    o0_ = o0;
    g_ = g;
    const size_t L = p_.maps.size();
    base_.assign(L * static_cast<size_t>(g_), 0);
    std::vector<int64_t> oc(out_.shape.size(), 0);
    int64_t q = o0_;
    for (size_t a = oc.size(); a-- > 0;) { oc[a] = out_.shape[a] ? q % out_.shape[a] : 0; q = out_.shape[a] ? q / out_.shape[a] : 0; }
    for (int t = 0; t < g_; ++t) {
      for (size_t l = 0; l < L; ++l) base_[l * g_ + t] = p_.maps[l].index(oc.data());
      for (size_t a = oc.size(); a-- > 0;) { if (++oc[a] < out_.shape[a]) break; oc[a] = 0; }
    }
    const size_t slots = L * static_cast<size_t>(p_.group);
    if (staged_.size() != slots) {
      staged_.resize(slots);
      for (auto& s : staged_) s.resize(kTile + kTilePad, 0);
      staged_one_.assign(slots, nullptr);
      staged_n_.assign(slots, 0);
    }
    direct_.assign(L, nullptr);
    ptrs_.assign(L, nullptr);
    in_place_.assign(L, 0);
    res_.resize(static_cast<size_t>(p_.group * p_.m) + kTilePad, 0);
    const bool f32 = out_.dtype == DType::Float32;
    double acc64[kRunChains * 2] = {};
    float acc32[kRunChains * 2] = {};
    std::vector<int64_t> rc(p_.outer.size(), 0);  // the outer coordinates of the run after rb
    std::vector<int64_t> rp(L, 0);                 // each leaf's offset of run rb (run 0: 0)
    next_.resize(L);
    for (int64_t rb = 0; rb < p_.runs; ++rb) {
      next_run_offsets(rc, rb);
      for (int64_t j0 = 0; j0 < p_.run; j0 += p_.m) {
        const int n = static_cast<int>(std::min<int64_t>(p_.m, p_.run - j0));
        for (int t0 = 0; t0 < g_; t0 += p_.k) eval_tile(t0, std::min(p_.k, g_ - t0), n, j0, rp);
        if (out_.rnd != Round::NearestEven) set_hw_round(out_.rnd);
        if (f32) fold_chains<float>(acc32, rows_, g_, n);
        else fold_chains<double>(acc64, rows_, g_, n);
        if (out_.rnd != Round::NearestEven) set_hw_round(Round::NearestEven);
      }
      rp.swap(next_);
    }
    if (f32) { canonical_accs(acc32, g_); std::memcpy(buf.bytes() + o0_ * 4, acc32, g_ * 4); }
    else { canonical_accs(acc64, g_); std::memcpy(buf.bytes() + o0_ * 8, acc64, g_ * 8); }
  }

 private:
  // next_: each leaf's offset of the run after run rb (-1 after the last), rc stepped to that
  // run. The loop takes it as the next run's offsets, and a tile read in place asks for the same
  // positions of the next run ahead of time: a task reads a run of a few hundred elements per
  // output and leaf, then jumps a whole image ahead, which the hardware prefetcher does not
  // follow. A product of two leaves summed per channel over (512,32,20,20) read 8.5 GB/s on one
  // thread where the plain sum, reading one leaf, did 14 (and does without the hint: asked ahead
  // as well, it took ~10% longer).
  void next_run_offsets(std::vector<int64_t>& rc, int64_t rb) {
    if (rb + 1 >= p_.runs) {
      std::fill(next_.begin(), next_.end(), -1);
      return;
    }
    for (size_t i = rc.size(); i-- > 0;) { if (++rc[i] < p_.in[p_.outer[i]]) break; rc[i] = 0; }
    for (size_t l = 0; l < p_.maps.size(); ++l) {
      next_[l] = 0;
      for (size_t i = 0; i < p_.outer.size(); ++i) next_[l] += rc[i] * p_.maps[l].strides[p_.outer[i]];
    }
  }

  static void prefetch(const Node* leaf, int64_t at, int n) {
    const size_t sz = itemsize(leaf->dtype);
    if (at < 0 || at + n > leaf->buffer->count) return;
    const uint8_t* p = leaf->buffer->bytes() + at * sz;
    for (size_t o = 0; o < static_cast<size_t>(n) * sz; o += 64) __builtin_prefetch(p + o);
  }

  // Evaluates outputs t0..t0+kt-1 at run positions j0..j0+n-1 into res_ at t * n + j.
  void eval_tile(int t0, int kt, int n, int64_t j0, const std::vector<int64_t>& rp) {
    for (size_t l = 0; l < p_.maps.size(); ++l) {
      const Node* leaf = p_.maps[l].node;
      const size_t sz = itemsize(leaf->dtype);
      const int64_t s = p_.step[l];
      const int64_t* b = &base_[l * g_ + t0];
      const int64_t at = b[0] + rp[l] + j0 * s;
      bool in_place = s == 1 && at + kt * n + kTilePad <= leaf->buffer->count;
      for (int t = 1; t < kt && in_place; ++t) in_place = b[t] - b[t - 1] == n;
      in_place_[l] = in_place;
      if (in_place) {
        direct_[l] = leaf->buffer->bytes() + at * sz;
        if (next_[l] >= 0 && !p_.prog.code.empty()) prefetch(leaf, next_[l] + b[0] + j0 * s, kt * n);
        continue;
      }
      // A tile slot per leaf and first output: a per-channel value (batchnorm's mean, weight
      // and invstd; s == 0, one output a tile) stays staged in its output's slot while the task
      // runs through the run, instead of being filled again for each tile of each output
      // (copy_strided was ~7% of batchnorm's forward and gradient).
      const size_t slot = l * static_cast<size_t>(p_.group) + static_cast<size_t>(t0);
      uint8_t* dst = reinterpret_cast<uint8_t*>(staged_[slot].data());
      direct_[l] = dst;
      // One element for every position (a constant: ReLU's 0): staged once, while it is the same.
      const uint8_t* first = leaf->buffer->bytes() + (b[0] + rp[l]) * sz;
      bool one = s == 0;
      for (int t = 1; t < kt && one; ++t) one = b[t] == b[0];
      if (one && staged_one_[slot] == first && staged_n_[slot] >= kt * n) continue;
      staged_one_[slot] = one ? first : nullptr;
      staged_n_[slot] = kt * n;
      for (int t = 0; t < kt; ++t)
        copy_strided(leaf->buffer->bytes() + (b[t] + rp[l] + j0 * s) * sz, sz, s, n, dst + t * n * sz);
    }
    uint8_t* dst = reinterpret_cast<uint8_t*>(res_.data()) + static_cast<size_t>(t0) * n * itemsize(out_.dtype);
    const void* r = ev_.eval(ptrs_, kt * n, &direct_, dst);
    // A plain sum's values are its leaf's, in place: folded from there (a result anywhere else,
    // staged or in the evaluator's scratch, is overwritten by the next tile: copied out).
    bool leaf = false;
    for (size_t l = 0; l < p_.maps.size() && !leaf; ++l) leaf = in_place_[l] && r == direct_[l];
    if (leaf) ++in_place_tiles_;
    else if (r != dst) std::memcpy(dst, r, static_cast<size_t>(kt) * n * itemsize(out_.dtype));
    const uint8_t* from = leaf ? static_cast<const uint8_t*>(r) : dst;
    for (int t = 0; t < kt; ++t) rows_[t0 + t] = from + static_cast<size_t>(t) * n * itemsize(out_.dtype);
  }

 public:
  int64_t in_place_tiles() const { return in_place_tiles_; }

 private:

  const RunPlan& p_;
  const Node& out_;
  int64_t o0_ = 0;
  int g_ = 0;
  TileEval ev_;
  std::vector<int64_t> base_;
  std::vector<std::vector<uint64_t>> staged_;
  // Per leaf: the element staged_ holds everywhere (a constant staged once), and how many.
  std::vector<const uint8_t*> staged_one_;
  std::vector<int> staged_n_;
  std::vector<const void*> direct_;
  std::vector<const int64_t*> ptrs_;
  std::vector<uint64_t> res_;
  std::vector<char> in_place_;
  std::vector<int64_t> next_;  // next_run_offsets()
  const uint8_t* rows_[kRunChains * 2] = {};  // output t's values of the current positions
  int64_t in_place_tiles_ = 0;
};

}  // namespace

bool try_run_major_reduce(Node& out) {
  if (out.arg.reduce_op != ReduceOp::ADD || (out.dtype != DType::Float32 && out.dtype != DType::Float64)) return false;
  const Node& src = *out.src[0];
  const int64_t O = numel(out.shape);
  // Output coordinates index the source's leaves: the REDUCE keeps its reduced axes as 1s.
  if (O == 0 || numel(src.shape) == 0 || src.shape.empty() || out.shape.size() != src.shape.size()) return false;
  if (run_length(out, src.shape) < kMinRun) return false;  // plan_runs' own test, before the program
  g_run_plans.fetch_add(1, std::memory_order_relaxed);
  RunPlan p(&src);
  if (p.prog.dtype != out.dtype || !plan_runs(out, &p)) return false;
  auto buf = std::make_shared<Buffer>(out.dtype, O);
  std::atomic<bool> in_place{false};
  // Groups per task: about kTaskTerms terms a task (a function of the shape alone, so the
  // split never depends on the thread count; each output's fold is the same in any task).
  const int64_t groups = (O + p.group - 1) / p.group;
  const int64_t per_task = std::max<int64_t>(1, kTaskTerms / (p.group * p.run * p.runs));
  parallel_for((groups + per_task - 1) / per_task, [&](int64_t task) {
    RunTask t(p, out);
    for (int64_t gi = task * per_task; gi < std::min(groups, (task + 1) * per_task); ++gi) {
      const int64_t o0 = gi * p.group;
      t.run(*buf, o0, static_cast<int>(std::min<int64_t>(p.group, O - o0)));
    }
    if (t.in_place_tiles() > 0) in_place.store(true, std::memory_order_relaxed);
  }, Round::NearestEven);
  out.buffer = buf;
  out.view.set_contiguous(out.shape);
  ++g_run_major_runs;
  if (in_place.load()) ++g_run_major_in_place_runs;
  return true;
}

int64_t run_major_reduce_runs() { return g_run_major_runs.load(); }
int64_t run_major_reduce_in_place_runs() { return g_run_major_in_place_runs.load(); }
int64_t run_major_reduce_plans() { return g_run_plans.load(); }

}  // namespace maroon::cpu
