// The data-parallel step (maroon/dist.h, docs/dist.md): each shard's gradient computed alone,
// the shards summed over the fixed shard tree with Maroon's additions, one optimizer step, and a
// check that every rank holds rank 0's state. Moving bytes between ranks is exchange.cpp's.
#include <optional>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "dist/digest.h"
#include "dist/step.h"
#include "dist/watchdog.h"

namespace maroon::dist {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

// Points the layers' deferral at `into` for one shard's forward, and clears it on every exit.
struct DeferScope {
  std::vector<nn::BatchNorm*>& bns;
  DeferScope(std::vector<nn::BatchNorm*>& b, std::vector<std::vector<nn::BatchNorm::BatchStats>>& into) : bns(b) {
    for (size_t i = 0; i < bns.size(); ++i) bns[i]->defer_running = &into[i];
  }
  ~DeferScope() {
    for (auto* bn : bns) bn->defer_running = nullptr;
  }
};

}  // namespace

DataParallel::DataParallel(optim::Optimizer& opt, int64_t shards, Comm& comm, std::vector<nn::BatchNorm*> batchnorms,
                           double timeout_s)
    : opt_(opt), shards_(shards), comm_(comm) {
  const int R = comm.size();
  if (R <= 0 || comm.rank() < 0 || comm.rank() >= R)
    throw Error("[dist] rank " + str(comm.rank()) + " of " + str(R) + " ranks does not exist");
  if (shards <= 0) throw Error("[dist] the shard count must be positive, got " + str(shards));
  if (shards < R)
    throw Error("[dist] " + str(shards) + " shard(s) cannot be spread over " + str(R) +
                " ranks: every rank needs at least one (use at least as many shards as ranks)");
  dtype_ = opt.params().at(0).dtype();
  for (const Tensor& p : opt.params()) {
    if (!is_float(p.dtype()) || p.dtype() != dtype_)
      throw DTypeError("[dist] every parameter must have one float dtype; found " + std::string(dtype_name(dtype_)) +
                       " and " + std::string(dtype_name(p.dtype())));
    offset_.push_back(numel_);
    numel_ += p.numel();
  }
  for (nn::BatchNorm* bn : batchnorms) {
    if (!bn) throw Error("[dist] a BatchNorm layer is null");
    if (bn->track_running_stats && bn->running_mean && bn->running_var) bns_.push_back(bn);
  }
  if (R > 1 && timeout_s > 0) watchdog_ = std::make_unique<Watchdog>(timeout_s, comm.rank());
#ifdef __GLIBC__
  // Every step of several ranks allocates and frees message buffers of the gradient's size.
  // glibc gives blocks that large back to the kernel when they are freed, so each step paid a
  // page fault per 4 KiB again (2 ranks, the MLP: 4,500 faults a step, and 20 steps took 3.2 s
  // of each rank's CPU instead of 1.3 s on the shared machine); kept in the heap, they are reused.
  if (R > 1) {
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
  }
#endif
  handshake();
}

DataParallel::~DataParallel() = default;

Range DataParallel::my_shards() const { return part(shards_, comm_.size(), comm_.rank()); }

// Every rank must hold the same model and settings before the first step; a rank started with
// other flags, another seed or another build is named here, not as a wrong digest later.
void DataParallel::handshake() {
  std::string me = "shards " + str(shards_) + ", " + str(numel_) + " " + std::string(dtype_name(dtype_)) +
                   " parameters in " + str(static_cast<int64_t>(opt_.params().size())) + " tensors, " +
                   str(static_cast<int64_t>(bns_.size())) + " batchnorm layer(s), state sha256 " + state_digest();
  Watchdog::Waiting w(watchdog_.get(), "start-up check", 0);
  std::vector<std::string> all = comm_.all_gather(me);
  for (size_t q = 0; q < all.size(); ++q)
    if (all[q] != all[0])
      throw Error("[dist] ranks disagree before the first step: rank " + str(static_cast<int64_t>(q)) + " has " +
                  all[q] + "; rank 0 has " + all[0]);
}

DataParallel::Shard DataParallel::run_shard(int64_t batch, int64_t s, const ShardFn& fn) {
  opt_.zero_grad();
  std::vector<std::vector<nn::BatchNorm::BatchStats>> stats(bns_.size());
  ShardOutput out = [&] {
    DeferScope defer(bns_, stats);
    return fn(part(batch, shards_, s));
  }();
  const std::string who = "[dist] shard " + str(s) + ": ";
  if (out.loss_sum.numel() != 1 || !is_float(out.loss_sum.dtype()))
    throw ShapeError(who + "the loss must be one float, got " + std::string(dtype_name(out.loss_sum.dtype())) + " " +
                     shape_str(out.loss_sum.shape()));
  if (out.count && (!is_int(out.count->dtype()) || out.count->numel() != 1))
    throw ShapeError(who + "the count must be one integer, got " + std::string(dtype_name(out.count->dtype())) + " " +
                     shape_str(out.count->shape()));
  // The shard's share of the global mean: its summed loss over the whole batch's size, so the
  // shards' gradients add up to the mean's (docs/dist.md). With one shard this is exactly
  // tinygrad's mean cross-entropy (the sum, times the reciprocal of the count).
  Shard sh{{}, out.loss_sum.div(batch), 0, {}};
  sh.loss.backward();
  for (const Tensor& p : opt_.params()) {
    if (!p.grad()) throw ShapeError(who + "a parameter of shape " + shape_str(p.shape()) + " got no gradient");
    sh.grads.push_back(p.grad()->realized_leaf());
  }
  sh.loss = sh.loss.realized_leaf();
  if (out.count) sh.count = static_cast<int64_t>(out.count->cast(DType::Int64).bits().at(0));
  for (size_t i = 0; i < bns_.size(); ++i) {
    if (stats[i].size() != 1)
      throw Error(who + "batchnorm layer " + str(static_cast<int64_t>(i)) + " ran " +
                  str(static_cast<int64_t>(stats[i].size())) + " times in training mode; the step needs once");
    sh.stats.push_back(stats[i][0]);
  }
  opt_.zero_grad();  // the shard's graph is no longer needed
  return sh;
}

// One rank holds every shard: the tree sums are built directly on the shards' gradients (the
// optimizer's update realizes them), and the shards' results are already here.
DataParallel::Sums DataParallel::local_sums(const std::vector<Shard>& local) const {
  Sums sums;
  for (size_t i = 0; i < opt_.params().size(); ++i)
    sums.grads.push_back(tree_sum({0, shards_}, [&](Range n) -> std::optional<Tensor> {
      if (n.size() == 1) return local.at(static_cast<size_t>(n.begin)).grads[i];
      return std::nullopt;
    }));
  for (const Shard& sh : local) {
    sums.losses.push_back(sh.loss);
    sums.count += sh.count;
    sums.stats.push_back(sh.stats);
  }
  return sums;
}

void DataParallel::apply(const Sums& s) {
  for (size_t i = 0; i < opt_.params().size(); ++i) {
    Tensor p = opt_.params()[i];
    p.set_grad(s.grads.at(i));
  }
  // Each shard's batch statistics, in shard order: what one process running the shards one
  // after another (gradient accumulation) does to the running statistics.
  for (const auto& shard : s.stats)
    for (size_t i = 0; i < bns_.size(); ++i) bns_[i]->update_running(shard.at(i));
  opt_.step();
}

StepOutput DataParallel::step(int64_t batch, const ShardFn& fn) {
  if (batch < shards_)
    throw ShapeError("[dist] a batch of " + str(batch) + " cannot be cut into " + str(shards_) +
                     " shards: every shard needs a sample");
  TrainingScope training;
  Range mine = my_shards();
  std::vector<Shard> local;
  for (int64_t s = mine.begin; s < mine.end; ++s) local.push_back(run_shard(batch, s, fn));
  Sums sums = comm_.size() == 1 ? local_sums(local) : exchanged_sums(local);
  local.clear();
  apply(sums);
  ++steps_;
  Tensor loss = tree_sum({0, shards_}, [&](Range n) -> std::optional<Tensor> {
    if (n.size() == 1) return sums.losses.at(static_cast<size_t>(n.begin));
    return std::nullopt;
  });
  StepOutput out{loss.realize(), sums.count};
  if (comm_.size() == 1) return out;  // nobody to disagree with
  std::string digest = state_digest(), root;
  {
    Watchdog::Waiting w(watchdog_.get(), "parameter check (broadcast)", steps_);
    root = comm_.broadcast(digest, 0);
  }
  if (root != digest)
    throw Error("[dist] after step " + str(steps_) + " rank " + str(comm_.rank()) + "'s parameters (sha256 " + digest +
                ") differ from rank 0's (" + root + "); stopping");
  return out;
}

std::string DataParallel::state_digest() const {
  StateHasher h;
  for (const Tensor& p : opt_.params()) h.add(p);
  for (auto* bn : bns_) {
    h.add(*bn->running_mean);
    h.add(*bn->running_var);
    h.add(bn->num_batches_tracked);
  }
  return h.hex();
}

}  // namespace maroon::dist
