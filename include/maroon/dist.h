// Deterministic data-parallel training (docs/dist.md). A step cuts its global batch into S
// shards (S is the run's choice, not the number of processes), computes each shard's gradient as
// it would be computed alone, sums the shard gradients over a fixed binary tree on shard index
// with Maroon's own float additions, and applies one optimizer step. Any number of ranks R <= S
// gives the bits of one process running all S shards: ranks only move bytes (Comm), never reduce
// with an operator whose order a library picks.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "maroon/nn.h"
#include "maroon/optim.h"
#include "maroon/tensor.h"

namespace maroon::dist {

// A half-open range [begin, end) of samples, shards, ranks or elements.
struct Range {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end - begin; }
  bool operator==(const Range& o) const { return begin == o.begin && end == o.end; }
  bool operator<(const Range& o) const { return begin != o.begin ? begin < o.begin : end < o.end; }
};

// The one rule that cuts n items into k contiguous parts: part i is
// [floor(i * n / k), floor((i + 1) * n / k)). It cuts a batch's samples into shards, the shards
// among the ranks and the gradient's elements into the slices each rank sums. k must be positive.
Range part(int64_t n, int64_t k, int64_t i);

// The shard tree. Node [lo, hi) is shard lo when hi - lo == 1, otherwise the elementwise sum
// left + right of its children [lo, mid) and [mid, hi), mid = lo + ceil((hi - lo) / 2).
int64_t tree_mid(Range node);
// The largest tree nodes (of the tree over `shards` shards) inside `mine`, left to right: the
// partial sums a rank holding the shards `mine` computes before anything moves.
std::vector<Range> tree_cover(int64_t shards, Range mine);
// The value of tree node `node`: a node `have` returns is taken as it is, any other is the sum of
// its children's values (one Maroon ADD each, lazy). Every leaf reached must be known.
Tensor tree_sum(Range node, const std::function<std::optional<Tensor>(Range)>& have);

// What Maroon needs from MPI: moving bytes. Each call is collective (every rank makes it, in the
// same order) and throws maroon::Error when the transport fails.
class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // send[q] goes to rank q (send.size() == size()); returns what each rank sent this one, by rank.
  virtual std::vector<std::string> all_to_all(const std::vector<std::string>& send) = 0;
  // Every rank's `mine`, by rank.
  virtual std::vector<std::string> all_gather(const std::string& mine) = 0;
  // Rank `root`'s `bytes`, on every rank; every rank passes as many bytes as the root.
  virtual std::string broadcast(const std::string& bytes, int root) = 0;
};

// One process alone: rank 0 of 1.
class SelfComm : public Comm {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::vector<std::string> all_to_all(const std::vector<std::string>& send) override;
  std::vector<std::string> all_gather(const std::string& mine) override { return {mine}; }
  std::string broadcast(const std::string& bytes, int) override { return bytes; }
};

// Open MPI's MPI_COMM_WORLD (src/dist/mpi_comm.cpp; when Maroon is built without MPI these throw
// maroon::Error saying so). MPI is initialised on the first call and finalized at exit; errors
// are returned to Maroon (MPI_ERRORS_RETURN) and thrown as maroon::Error.
bool have_mpi();
// Whether an MPI launcher (mpirun, mpiexec, srun) started this process: its environment names
// a rank (OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_RANK).
bool launched_by_mpi();
std::unique_ptr<Comm> mpi_world();
// Ends every rank of the job with `code` (MPI_Abort) when MPI is running; otherwise exits.
[[noreturn]] void abort_world(int code);

// One shard's work, as a caller writes it: the sum of its per-sample losses (a float scalar; the
// step divides it by the global batch size) and, optionally, an integer scalar that the step
// adds up over the shards (e.g. correct predictions).
struct ShardOutput {
  Tensor loss_sum;
  std::optional<Tensor> count;
};

struct StepOutput {
  Tensor loss;        // the tree sum of the shards' losses: the global batch's mean loss
  int64_t count = 0;  // the sum of the shards' counts
};

class Watchdog;  // src/dist/watchdog.h

// The data-parallel step. Every rank constructs it with the same optimizer state, shard count and
// layers, and calls step() with the same batch size; rank r computes the shards
// part(shards, R, r). Parameters must all have one float dtype.
class DataParallel {
 public:
  // `timeout_s`: a rank that waits longer than this for the others in one exchange prints which
  // rank, step and exchange and ends its process (exit status 3), so a dead or hung rank cannot
  // hang the job; 0 waits forever. It must exceed the longest work between two steps.
  DataParallel(optim::Optimizer& opt, int64_t shards, Comm& comm, std::vector<nn::BatchNorm*> batchnorms = {},
               double timeout_s = 600);
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  // fn(samples) builds shard samples' loss (samples: rows of the global batch, from part()). It
  // runs with Tensor::training() on, once per shard this rank holds, in shard order.
  using ShardFn = std::function<ShardOutput(Range samples)>;
  StepOutput step(int64_t batch, const ShardFn& fn);

  int64_t shards() const { return shards_; }
  Range my_shards() const;       // the shards this rank computes
  int64_t steps_done() const { return steps_; }
  // SHA-256 (hex) of the parameters' bytes in optimizer order, then each BatchNorm's running
  // mean, running variance and num_batches_tracked: what every rank must agree on. With several
  // ranks, step() compares it with rank 0's after every update and throws if they differ.
  std::string state_digest() const;

 private:
  struct Shard;  // one shard's gradients, loss, count and batch statistics
  struct Sums;   // what every rank applies: the summed gradients and every shard's results
  void handshake();
  Shard run_shard(int64_t batch, int64_t s, const ShardFn& fn);
  Sums local_sums(const std::vector<Shard>& local) const;  // one rank: nothing moves
  Sums exchanged_sums(const std::vector<Shard>& local);    // several: src/dist/exchange.cpp
  std::string meta_bytes(const Shard& sh) const;
  size_t meta_size() const;
  void read_metas(const std::string& bytes, size_t at, int64_t n, Sums& into) const;
  void apply(const Sums& s);

  optim::Optimizer& opt_;
  int64_t shards_;
  Comm& comm_;
  std::vector<nn::BatchNorm*> bns_;
  DType dtype_;
  int64_t numel_ = 0;            // the parameters' elements, all together
  std::vector<int64_t> offset_;  // where each parameter starts among them
  int64_t steps_ = 0;
  std::unique_ptr<Watchdog> watchdog_;
};

}  // namespace maroon::dist
