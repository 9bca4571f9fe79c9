#include "cpu/epilogue_pool.h"

#include <algorithm>
#include <vector>

#include "ref/executor.h"
#include "ref/scalar.h"

namespace maroon::cpu {

namespace {
std::atomic<int64_t> g_pools{0}, g_straddled{0};
}  // namespace

bool EpiloguePool::match(const Node& out, const EpiloguePoolSite& site) {
  const Node& r = *site.pool;
  const size_t nd = out.shape.size();
  if (r.op != Op::REDUCE || r.arg.reduce_op != ReduceOp::MAX || r.dtype != out.dtype || r.src[0]->dtype != out.dtype)
    return false;
  if (nd < 2 || r.arg.ints != std::vector<int64_t>{static_cast<int64_t>(nd), static_cast<int64_t>(nd + 1)}) return false;
  const int64_t H = out.shape[nd - 2], W = out.shape[nd - 1];
  if (H < 2 || W < 2 || H % 2 || W % 2) return false;
  fn_ = pool2x2_runs(ReduceOp::MAX, out.dtype);
  if (!fn_) return false;
  // The pool's source as a view of out's buffer (written contiguous by the epilogue).
  ShapeTracker v = ShapeTracker::contiguous(out.shape);
  for (const Node* m : *site.views) v = ref::movement_view(*m, v);
  if (v.views().size() != 1 || v.views()[0].has_mask()) return false;
  const View& vv = v.views()[0];
  Shape want(out.shape.begin(), out.shape.end() - 2);
  for (int64_t s : {H / 2, W / 2, int64_t{2}, int64_t{2}}) want.push_back(s);
  if (vv.shape != want || r.src[0]->shape != want || vv.offset != 0) return false;
  const Shape cs = contiguous_strides(out.shape);
  std::vector<int64_t> strides(cs.begin(), cs.end() - 2);
  for (int64_t s : {2 * W, int64_t{2}, W, int64_t{1}}) strides.push_back(s);
  for (size_t d = 0; d < want.size(); ++d)
    if (want[d] != 1 && vv.strides[d] != strides[d]) return false;
  node_ = site.pool;
  out_ = &out;
  w_ = W;
  window_[0] = 0, window_[1] = 1, window_[2] = W, window_[3] = W + 1;
  identity_ = ref::reduce_identity(ReduceOp::MAX, out.dtype);
  sz_ = itemsize(out.dtype);
  for (int r = 0; r <= kChunk; ++r) {  // pair r of a chunk: positions r * 2W on, outputs r * W/2 on
    if (r < kChunk) start_[r] = r * 2 * W;
    at_[r] = static_cast<int>(r * (W / 2));
  }
  buf_ = std::make_shared<Buffer>(out.dtype, numel(r.shape));
  return true;
}

// Position p = (lead * H + y) * W with y even is output (lead * H/2 + y/2) * W/2 = p / 4: the
// row pairs q in [p / 2W, (p + n) / 2W) are whole in the run, and their outputs adjacent.
void EpiloguePool::fold_pairs(const uint8_t* C, int64_t q0, int64_t q1) const {
  const int64_t pair = 2 * w_;
  for (int64_t q = q0; q < q1; q += kChunk) {
    const int rows = static_cast<int>(std::min<int64_t>(kChunk, q1 - q));
    fn_(C + q * pair * static_cast<int64_t>(sz_), window_, start_, at_, rows, identity_,
        buf_->bytes() + q * (w_ / 2) * static_cast<int64_t>(sz_));
  }
}

void EpiloguePool::fold(const uint8_t* C, int64_t p, int64_t n) {
  const int64_t pair = 2 * w_, q0 = (p + pair - 1) / pair, q1 = (p + n) / pair;
  fold_pairs(C, q0, q1);
  // A pair only partly here (a task of 3 image rows): folded by finish(), once every task is done.
  if (p % pair || (p + n) % pair) {
    std::lock_guard<std::mutex> lock(mu_);
    if (p % pair) straddled_.push_back(p / pair);
    if ((p + n) % pair) straddled_.push_back((p + n) / pair);
  }
}

void EpiloguePool::finish() {
  std::sort(straddled_.begin(), straddled_.end());
  straddled_.erase(std::unique(straddled_.begin(), straddled_.end()), straddled_.end());
  if (!straddled_.empty()) g_straddled.fetch_add(1, std::memory_order_relaxed);
  const uint8_t* C = out_->buffer->bytes();
  for (int64_t q : straddled_) fold_pairs(C, q, q + 1);
  node_->buffer = buf_;
  node_->view.set_contiguous(node_->shape);
  g_pools.fetch_add(1, std::memory_order_relaxed);
}

int64_t epilogue_pools() { return g_pools.load(std::memory_order_relaxed); }
int64_t epilogue_pools_straddled() { return g_straddled.load(std::memory_order_relaxed); }

}  // namespace maroon::cpu
