// Verifiable runs: a run's full state and its SHA-256 commitment after every step, a Merkle tree
// over the steps, checkpoints that resume a run bit for bit, run records with provenance, per-node
// traces of a step, `verify` (every file and every step checked against the record) and `bisect`
// (two runs of one job: the first differing step, then the first differing node of that step,
// recomputed alone by the reference executor). The formats are defined in docs/verify.md.
//
// A training loop of any model uses it through Run:
//
//   verify::Run run(job, {model.state_dict(), &opt}, {.record = "runs/x.run.json", .steps = 1000});
//   run.begin();                                   // commits the initial state (or resumes)
//   while (run.step() < run.total_steps()) {
//     float loss = my_step();                      // the user's own step
//     run.commit(loss);                            // commits the state after it
//   }
//   run.finish();                                  // writes the record
//
// Errors: bad or mismatched files throw maroon::FormatError naming the file and what is wrong;
// bad arguments throw maroon::Error.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "maroon/nn.h"
#include "maroon/optim.h"
#include "maroon/tensor.h"

namespace maroon::verify {

// ---- digests ----
using Digest = std::array<uint8_t, 32>;
std::string hex(const Digest& d);  // 64 lowercase hex digits
// Parses 64 lowercase hex digits; throws FormatError naming `what` otherwise.
Digest parse_digest(std::string_view hex, const std::string& what);
Digest sha256(std::string_view bytes);
// SHA-256 of a tensor's elements in row-major order, little-endian (realizes it). Realized
// contiguous buffers are hashed in place.
Digest tensor_digest(const Tensor& t);
// SHA-256 of a file's bytes (read with io::read_file: bounded, regular files only).
Digest file_digest(const std::string& path, const std::string& who);

// ---- the data order ----
// Each epoch's sample order is data::epoch_order(seed, epoch, samples) (maroon/shuffle.h: a
// Fisher-Yates shuffle driven by SplitMix64, integer arithmetic, the same everywhere); an epoch
// has floor(samples / batch) batches (the last partial batch is dropped). Its state is the seed,
// the sizes and the number of batches drawn.
class EpochSampler {
 public:
  EpochSampler(int64_t samples, int64_t batch, uint64_t seed);
  // The sample indices of the next batch (advances the position).
  std::vector<uint32_t> next();
  int64_t batches_per_epoch() const { return per_epoch_; }
  int64_t position() const { return position_; }  // batches drawn so far
  int64_t epoch() const { return position_ / per_epoch_; }
  void set_position(int64_t batches);
  int64_t samples() const { return samples_; }
  int64_t batch() const { return batch_; }
  uint64_t seed() const { return seed_; }

 private:
  int64_t samples_, batch_, per_epoch_, position_ = 0;
  uint64_t seed_;
  int64_t order_epoch_ = -1;
  std::vector<uint32_t> order_;
};

// ---- the state ----
// A run's state at a step boundary: named tensors, in byte order of their names.
using State = nn::StateDict;

// What a run's state is made of: handles to the live tensors and objects one step reads and
// writes. Names in the state (docs/verify.md): "model.<name>", "optim.lr", "optim.b1_t",
// "optim.b2_t", "optim.m.<param>", "optim.v.<param>", "optim.b.<param>", "extra.<name>",
// "rng.seed", "rng.counter", "data.*", "run.step", "run.job".
struct StateBinding {
  nn::StateDict model;                    // parameters and buffers (BatchNorm statistics)
  optim::Optimizer* optimizer = nullptr;  // Adam/AdamW/LAMB or SGD/LARS: lr, moments, products
  EpochSampler* sampler = nullptr;        // data order and position
  bool random = true;                     // Tensor::manual_seed's stream (seed, counter)
  nn::StateDict extra;                    // anything else a step reads (a user's optimizer...)
};

// The state now, after `step` steps of the job whose identity is `job`. Realizes every tensor.
State capture(const StateBinding& b, int64_t step, const Digest& job);
// Assigns a state into the live objects; returns its step. Throws FormatError naming `what` and
// the entry when a tensor is missing, extra, or of another dtype or shape, or the job differs.
int64_t restore(const StateBinding& b, const State& s, const Digest& job, const std::string& what);

// The canonical serialisation: the state as a safetensors file with no metadata, tensors in name
// order (nn::safe_save's layout). A checkpoint file holds exactly these bytes, so its SHA-256
// is the state commitment.
Digest state_commitment(const State& s);
void write_checkpoint(const State& s, const std::string& path);
// Reads and validates a checkpoint (safetensors, canonical: sorted names, no metadata, nothing
// else); `commitment` receives its SHA-256.
State read_checkpoint(const std::string& path, Digest* commitment = nullptr);

// ---- the Merkle tree over the steps (RFC 9162: leaf = H(0x00 || commitment),
// node = H(0x01 || left || right), split at the largest power of two below the count) ----
Digest merkle_root(const std::vector<Digest>& commitments);
std::vector<Digest> merkle_proof(const std::vector<Digest>& commitments, size_t index);
bool merkle_check(const Digest& root, size_t index, size_t count, const Digest& commitment,
                  const std::vector<Digest>& proof);
// The first index where two equally long lists differ, found by descending both trees from the
// root (the left subtree first); -1 when none. `*compared` receives the node pairs compared.
int64_t first_difference(const std::vector<Digest>& a, const std::vector<Digest>& b, int64_t* compared = nullptr);

// ---- jobs, provenance, run records ----
struct FileRef {
  std::string name;  // the role ("train-images", "weights") or the file name
  std::string path;  // as recorded: relative to the record's directory, or absolute
  std::string sha256;
};

// The job's identity: two runs are runs of the same job when these are equal.
struct Job {
  std::string name;                           // e.g. "mnist-mlp"
  std::map<std::string, std::string> config;  // everything that chooses the computation
  std::vector<FileRef> data;                  // the data files, with their SHA-256
  std::string arch_sha256;                    // the model's architecture digest (graph_digest)
  Digest digest() const;                      // SHA-256 of its canonical JSON (docs/verify.md)
};

// Where and how a run ran. Informational (runs on any machine give the same bits); sealed with
// the record.
struct Provenance {
  std::string maroon_version, git_commit, spec_sha256, compiler, build_type, simd_target, backend, command_line;
  int64_t threads = 0;
};
// This build and process; the command line is the caller's.
Provenance current_provenance(const std::string& command_line);

struct CheckpointRef {
  int64_t step;
  std::string path;  // relative to the record's directory
};

struct RunRecord {
  Job job;
  Digest job_sha256{};           // as recorded (write_record sets it to job.digest())
  Provenance provenance;
  int64_t steps = 0;             // the job's total steps
  int64_t checkpoint_every = 0;  // 0: at the start and the end only
  // states[i]: the commitment of the state after i steps (states[0]: the initial state). A
  // partial record (an interrupted run) has fewer than steps + 1.
  std::vector<Digest> states;
  Digest merkle_root{};               // over `states` (set by write_record)
  std::vector<CheckpointRef> checkpoints;
  std::vector<float> losses;          // one per step taken, or none
  std::vector<FileRef> outputs;       // files the run wrote (weights), with their SHA-256
  std::map<std::string, std::string> claims;  // e.g. "test_accuracy": "98.30"
  std::string seal;                   // SHA-256 of every other field (set by write_record)
  bool complete() const { return static_cast<int64_t>(states.size()) == steps + 1; }
};
// The canonical JSON (docs/verify.md); record_json sets job_sha256, merkle_root and seal;
// write_record writes it
// atomically. read_record checks the syntax, the types and the digests' form; the semantic
// checks (root, seal, files) are verify's.
std::string record_json(RunRecord& r);
void write_record(RunRecord& r, const std::string& path);
RunRecord read_record(const std::string& path);
// "runs/a.run.json" -> "runs/a.ckpt" (where a run's checkpoints go).
std::string checkpoint_dir_for(const std::string& record_path);
// A recorded path resolved against the record's directory.
std::string resolve(const std::string& record_path, const std::string& recorded);

// ---- running ----
struct RunOptions {
  std::string record;            // the run record's path (checkpoints go to checkpoint_dir_for it)
  int64_t steps = 0;             // the job's total steps
  int64_t checkpoint_every = 0;  // 0: at the start and the end only
  std::string command_line;
  // Resume: from this checkpoint (whose earlier commitments come from the record at `record`, or
  // from `resume_record` when given), or "latest": the newest checkpoint that record names.
  std::string resume, resume_record;
  // Hash each step's state on a background thread while the next step runs (the buffers a
  // committed state holds are never written again, so nothing is copied).
  bool background = true;
  // With `background`: evict each state's cache lines once hashed, so that the loop's stores to
  // those buffers, a step later, need not take the lines from the hasher's core first (at 1
  // thread on a 2-vCPU EPYC: 1.02-1.05x the plain step's time on the loop's thread instead of
  // 1.15-1.24x; docs/verify.md §11). Only where it helps: not where every core the process may
  // run on shares one last-level cache (sysfs), where a flush sends to memory the lines the loop
  // would have had from that cache (docs/performance/threads.md). Caches only: the commitments
  // are the same either way.
  bool evict = true;
  // With `background`: who hashes. Auto: the thread pool's first worker in its idle time (and the
  // loop when it falls behind) where the pool's threads leave no core free, i.e. num_threads() + 1
  // is more than the cores this process may run on, while the process gets about all of them;
  // there a hashing thread as well, which hashes the states committed while a busy process takes
  // part of the cores (the process's CPU share over the last 50 ms is short of them by 0.4 or more:
  // one more runnable thread, a larger share). Else a thread of its own. Which thread hashes
  // changes no byte of the commitments or the record.
  enum class Hashing { Auto, Thread, Pool };
  Hashing hashing = Hashing::Auto;
};

// What a user's training loop calls: commits every step's state, writes checkpoints and the
// record. Not copyable; one per run.
class Run {
 public:
  Run(Job job, StateBinding binding, RunOptions options);
  ~Run();
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;
  // Commits the initial state (step 0, always a checkpoint), or restores the checkpoint to resume
  // from (checked against the record's commitment for its step).
  void begin();
  int64_t step() const;  // steps done
  int64_t total_steps() const;
  // After each step: commits the state (and writes a checkpoint when one is due).
  void commit(std::optional<float> loss = std::nullopt);
  // Waits for every commitment and checkpoint, then writes the complete record with `outputs`
  // hashed and `claims` as given. Returns it.
  RunRecord finish(const std::vector<FileRef>& outputs = {}, const std::map<std::string, std::string>& claims = {});
  // The loop above in one call: begin(), then step_fn(step) and commit() until the end, then
  // finish(). step_fn receives the 1-based number of the step it runs and returns its loss (or
  // nothing).
  RunRecord train(const std::function<std::optional<float>(int64_t)>& step_fn);
  const Digest& job_digest() const;
  const StateBinding& binding() const;
  // Who hashes after begin() (RunOptions::hashing resolved): Thread or Pool; Auto when the run
  // hashes inline (`background` off) or chooses per state between the two.
  RunOptions::Hashing hashing() const;
  // The commitments so far (waits for the background thread).
  std::vector<Digest> commitments();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---- per-node traces ----
// One realized node of a step, in schedule order. Leaves (realized before the step: state
// tensors, inputs, constants) appear just before their first reader, with op "BUFFER" and a
// label ("model.l1.weight", "input", or "=#12" for a view of node 12's buffer).
struct TraceNode {
  std::string op;         // "MUL", "REDUCE", "BUFFER", ...
  std::string dtype;      // "float32"
  Shape shape;
  std::string round;      // "nearest-even", "toward-zero", "up", "down"
  std::string arg;        // the op's argument ("axes=[1]", "bits=0x3f800000", ...); "" if none
  std::vector<int64_t> src;  // indices of its sources in this trace
  std::string label;
  Digest digest{};        // SHA-256 of its elements (row-major, little-endian)
};
// A state tensor after the step: its digest and the node whose buffer it is (-1: none).
struct TraceState {
  std::string name;
  Digest digest{};
  int64_t node = -1;
};
struct Trace {
  int64_t step = 0;        // the step traced (1-based); 0 for a trace of any computation
  std::string job_sha256;  // "" when not a run's step
  std::string state_in;    // the commitment of the state before the step ("" when none)
  std::vector<TraceNode> nodes;
  std::vector<TraceState> state_out;
};

// A test's fault: flips `bit` of element `element` of node `node`'s output right after it is
// realized (a faulty kernel), before anything reads it.
struct Fault {
  int64_t node = -1, element = 0;
  int bit = 0;
};

// Runs `fn` with every realized node traced (nothing is fused while tracing: each node gets its
// own buffer; the bits are the same). `labels` names leaves by their state names.
Trace trace(const std::function<void()>& fn, const StateBinding* labels = nullptr,
            std::optional<Fault> fault = std::nullopt);
std::string trace_json(const Trace& t);
void write_trace(const Trace& t, const std::string& path);
Trace read_trace(const std::string& path);

// ---- verification ----
// A difference verify or bisect found: the file, the field or step, and both values.
struct Finding {
  std::string file, field;
  int64_t step = -1;  // -1 when not about a step
  std::string recorded, found;
  std::string message() const;
};

// A party's program: the objects its steps change, and one step. step(k) runs step k (1-based)
// and returns its loss or nothing.
struct Program {
  StateBinding binding;
  std::function<std::optional<float>(int64_t)> step;
  std::function<void(int64_t)> before_step;  // optional: sets what a step needs (e.g. the lr)
};

struct VerifyOptions {
  bool replay = true;        // replay every step and compare its commitment (and loss)
  std::string data_dir;      // where the data files are ("" : their recorded paths)
  std::vector<std::string> extra_files;  // files given on the command line: each must be in the record
};
struct VerifyReport {
  std::vector<Finding> findings;  // empty: every check passed
  int64_t files_checked = 0, steps_replayed = 0;
  Digest final_state{};
};
// Checks the record (seal, Merkle root, job digest), every file it names (checkpoints: bytes
// against their step's commitment; data; outputs) and, with options.replay, replays the run with
// `program` from its initial state and compares every step's commitment and loss (stopping at the
// first difference).
VerifyReport verify_run(const RunRecord& r, const std::string& record_path, Program* program, const VerifyOptions& options);

// The state before step k of a recorded run: the nearest checkpoint at or before k - 1 whose bytes
// hash to the record's commitment, then the steps after it replayed with `p`. Throws FormatError
// when a replayed step does not give the record's commitment. `*replays`: the steps replayed.
State state_before(const RunRecord& r, const std::string& path, Program& p, int64_t k, int64_t* replays = nullptr);
// Step k of a recorded run, every node traced (state_before, then step k with `p`), with the state
// after it in state_out: what a party answers when asked for its trace of a disputed step.
Trace trace_step(const RunRecord& r, const std::string& path, Program& p, int64_t k);

struct BisectReport {
  bool same = false;             // the two runs agree on every step
  int64_t step = -1;             // the first step whose committed states differ (after it)
  int64_t merkle_compared = 0;   // node pairs compared descending the trees
  int64_t checkpoint_loads = 0, step_replays = 0;
  int64_t from_checkpoint = -1;  // the checkpoint the replays started from
  // Which record's commitment for `step` the replay of that step reproduces: "a", "b", "neither".
  std::string replay_matches;
  // The first node of the step whose output differs between the two sides' traces (-1: none),
  // and the state tensor after the step that differs (when no node does).
  int64_t node = -1;
  TraceNode node_a, node_b;
  std::string state_tensor;
  int64_t state_node = -1;       // the node that computed that tensor (in a's trace)
  // The reference executor's recomputation of the node from its inputs, and whose claim it
  // confirms: "a", "b", "neither".
  std::string referee_digest, referee_says;
  std::vector<std::string> lines;  // the report, one finding per line
};
// Bisects two records of the same job. pa / pb: each side's program (pb may be pa). The traced
// step runs on both sides' claimed input state (the state both records commit before it).
BisectReport bisect(const RunRecord& a, const std::string& path_a, Program& pa, const RunRecord& b,
                    const std::string& path_b, Program& pb);

// ---- model identity ----
// SHA-256 of the structure of the graph that computes `outputs` (every node's op, dtype, shape,
// rounding mode, argument and sources in schedule order; realized nodes are leaves, named by
// `leaves` or "input"), without computing anything. The architecture digest is the graph_digest
// of a model's forward pass on an input of its shape, its state dict naming the leaves.
Digest graph_digest(const std::vector<Tensor>& outputs, const nn::StateDict& leaves);

// Flips one bit of one element of `t` (assigning a copy): for tests and demonstrations of
// tampering.
void flip_bit(Tensor& t, int64_t element, int bit);

}  // namespace maroon::verify
