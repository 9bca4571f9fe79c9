// Run: what a training loop calls to commit every step's state, write checkpoints and the record.
// Hashing happens on a background thread by default: a committed state's buffers are never
// written again (every step makes new ones), so the thread reads them in place while the next
// step runs (on a core the step leaves free, it costs the step next to nothing: the worker evicts
// what it has read from the caches, see evict.cpp); the loop waits only when the pending states
// hold more than kPendingBytes (at least two states). The loop's own part of a commit is kept
// small: it captures the state's handles and hands them over; the worker builds the header, and
// between states it polls instead of sleeping on the condition variable, so that a hand-over
// needs no futex wake-up (docs/verify.md §11: on the 2-vCPU VM a wake-up cost the loop's
// thread ~40 us a step, 0.6% of the MLP's). A checkpoint's file and the partial record are written
// by a third thread, the writer, so that the hasher never waits for the disk (see `Write`).
#include <condition_variable>
#include <chrono>
#include <cstdio>
#include <deque>
#include <exception>
#include <filesystem>
#include <mutex>
#include <thread>

#include "io/files.h"
#include "verify/digest.h"
#include "verify/state.h"

namespace maroon::verify {

namespace {
constexpr size_t kPendingBytes = size_t{256} << 20;
// The worker, out of work, checks for a new state every kPoll for up to kPollFor since its last
// one, then sleeps until woken: a step shorter than kPollFor hands over without a system call,
// and a hash ends at most kPoll (plus the timer's slack) later; an idle run's worker sleeps.
constexpr auto kPoll = std::chrono::microseconds(200);
constexpr auto kPollFor = std::chrono::milliseconds(25);

// `path` (as the caller named it) relative to the record's directory, as records store paths.
std::string relative_to_record(const std::string& record, const std::string& path) {
  namespace fs = std::filesystem;
  fs::path dir = fs::absolute(fs::path(record)).parent_path();
  fs::path rel = fs::absolute(fs::path(path)).lexically_relative(dir);
  return rel.empty() ? fs::absolute(path).string() : rel.string();
}
}  // namespace

struct Run::Impl {
  Job job;
  Digest job_digest;
  StateBinding b;
  RunOptions o;
  int64_t step = 0;
  bool begun = false;
  RunRecord rec;  // owned by the worker between begin() and finish()

  struct Pending {
    int64_t step;
    State state;  // captured: every tensor realized
    std::optional<float> loss;
    size_t bytes = 0;  // the state's size: what holding it keeps alive
  };
  size_t pending_bytes = 0;
  std::thread worker;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Pending> queue;
  bool stop = false, busy = false;
  bool sleeping = false;  // the worker waits on cv: a hand-over must notify it
  std::exception_ptr error;  // under mu: the worker and the writer both set it

  // A checkpoint the worker has hashed, for the writer: the file, then the partial record as it
  // was when this state was hashed (its first `states` commitments and `losses` losses). Why a
  // thread of its own: writing 8 MB and fsync-ing it and the record takes 80-210 ms on the 2-vCPU
  // VM; done by the hasher, the first states queued behind step 0's checkpoint, each holding
  // its buffers, and the loop took fresh pages for the next ones (2,000-3,500 page faults a step
  // in steps 2-6 of maroon train's MLP, ~11 us each there). The writer holds one state meanwhile.
  struct Write {
    int64_t step;
    Frozen state;
    size_t states, losses;
  };
  std::thread writer;
  std::deque<Write> writes;
  bool writing = false, stop_writer = false;
  std::condition_variable wcv;  // wakes the writer
  std::mutex rec_mu;            // rec, between the worker and the writer

  bool checkpoint_due(int64_t s) const {
    return s == 0 || s == o.steps || (o.checkpoint_every > 0 && s % o.checkpoint_every == 0);
  }
  std::string checkpoint_path(int64_t s) const {
    char name[48];
    std::snprintf(name, sizeof name, "/step-%09lld.safetensors", static_cast<long long>(s));
    return checkpoint_dir_for(o.record) + name;
  }

  // The worker's part of a commit: the commitment, the checkpoint file and the partial record.
  void process(Pending& pending) {
    if (static_cast<int64_t>(rec.states.size()) != pending.step)
      throw Error("[run] internal: state " + std::to_string(pending.step) + " committed out of order");
    struct {
      int64_t step;
      Frozen state;
      std::optional<float> loss;
    } p{pending.step, freeze_realized(pending.state), pending.loss};
    // On the worker, the state leaves the caches once read (evict.cpp: the loop writes these
    // buffers again a step later, and would otherwise first take every line from this core).
    const bool due = checkpoint_due(p.step), evict = o.background && o.evict;
    Digest c = evict && !due ? commitment_evicting(p.state) : commitment_of(p.state);
    Write w{p.step, std::move(p.state), 0, 0};
    {
      std::lock_guard<std::mutex> lk(rec_mu);
      rec.states.push_back(c);
      if (p.loss) rec.losses.push_back(*p.loss);
      w.states = rec.states.size(), w.losses = rec.losses.size();
    }
    if (!due) return;
    if (!o.background) return write_checkpoint(w);
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [&] { return writes.size() < 2 || error; });  // at most two states wait for the disk
    if (error) return;
    writes.push_back(std::move(w));
    lk.unlock();
    wcv.notify_all();
  }

  // The checkpoint file, then the record naming it: partial until the last step, what a resume
  // starts from (the commitments and losses up to this state, as if written right after it).
  void write_checkpoint(const Write& w) {
    std::string path = checkpoint_path(w.step);
    write_frozen(w.state, path);
    if (o.background && o.evict) evict_from_caches(w.state);
    RunRecord partial;
    {
      std::lock_guard<std::mutex> lk(rec_mu);
      rec.checkpoints.push_back({w.step, relative_to_record(o.record, path)});
      partial = rec;
    }
    partial.states.resize(w.states);
    partial.losses.resize(w.losses);
    write_record(partial, o.record);
  }

  void write_loop() {
    std::unique_lock<std::mutex> lk(mu);
    while (true) {
      wcv.wait(lk, [&] { return stop_writer || !writes.empty(); });
      if (writes.empty()) return;
      Write w = std::move(writes.front());
      writes.pop_front();
      writing = true;
      const bool skip = error != nullptr;
      lk.unlock();
      std::exception_ptr failed;
      try {
        if (!skip) write_checkpoint(w);
      } catch (...) {
        failed = std::current_exception();
      }
      { Frozen drop = std::move(w.state); }  // release the buffers outside the lock
      lk.lock();
      if (failed && !error) error = failed;
      writing = false;
      cv.notify_all();
    }
  }

  void loop() {
    std::unique_lock<std::mutex> lk(mu);
    auto last = std::chrono::steady_clock::now();
    while (true) {
      if (!stop && queue.empty() && std::chrono::steady_clock::now() - last < kPollFor) {
        lk.unlock();
        std::this_thread::sleep_for(kPoll);
        lk.lock();
        continue;
      }
      sleeping = true;
      cv.wait(lk, [&] { return stop || !queue.empty(); });
      sleeping = false;
      if (queue.empty()) return;
      Pending p = std::move(queue.front());
      queue.pop_front();
      pending_bytes -= p.bytes;
      busy = true;
      const bool skip = error != nullptr;
      lk.unlock();
      std::exception_ptr failed;
      try {
        if (!skip) process(p);
      } catch (...) {
        failed = std::current_exception();
      }
      { State drop = std::move(p.state); }  // release the buffers outside the lock
      lk.lock();
      if (failed && !error) error = failed;
      busy = false;
      last = std::chrono::steady_clock::now();
      cv.notify_all();
    }
  }

  // The first error of a commit (the worker's, or the inline one's), thrown on the loop's thread
  // at its next call (commit, commitments, finish); every later call throws it again.
  void rethrow() {
    std::exception_ptr e;
    {
      std::lock_guard<std::mutex> lk(mu);
      e = error;
    }
    if (e) std::rethrow_exception(e);
  }

  void enqueue(Pending p) {
    if (!o.background) {
      try {
        process(p);
      } catch (...) {
        error = std::current_exception();  // sticky, as the worker's: the run cannot go on
        throw;
      }
      return;
    }
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [&] { return queue.size() < 2 || pending_bytes + p.bytes <= kPendingBytes || error; });
    if (error) std::rethrow_exception(error);
    pending_bytes += p.bytes;
    queue.push_back(std::move(p));
    const bool wake = sleeping;  // a polling worker finds the state by itself
    lk.unlock();
    if (wake) cv.notify_all();
  }

  void drain() {
    if (!worker.joinable()) return;
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [&] { return queue.empty() && !busy && writes.empty() && !writing; });
  }

  void shutdown() {
    if (!worker.joinable()) return;
    {
      std::lock_guard<std::mutex> lk(mu);
      stop = true;
    }
    cv.notify_all();
    worker.join();
    {  // the worker hands over no more checkpoints
      std::lock_guard<std::mutex> lk(mu);
      stop_writer = true;
    }
    wcv.notify_all();
    writer.join();
  }

  void commit(std::optional<float> loss) {
    rethrow();
    Pending p{step, capture(b, step, job_digest), loss};  // the worker freezes it (builds its header)
    for (auto& [k, t] : p.state) p.bytes += static_cast<size_t>(t.nbytes());
    enqueue(std::move(p));
  }

  void resume();
};

void Run::Impl::resume() {
  const std::string rec_path = o.resume_record.empty() ? o.record : o.resume_record;
  RunRecord old = read_record(rec_path);
  if (old.job.digest() != job_digest)
    throw FormatError("[run] cannot resume from '" + rec_path + "': its job_sha256 is " + hex(old.job.digest()) +
                      ", this run's job is " + hex(job_digest));
  if (old.steps != o.steps || old.checkpoint_every != o.checkpoint_every)
    throw FormatError("[run] cannot resume from '" + rec_path + "': it has " + std::to_string(old.steps) +
                      " steps with a checkpoint every " + std::to_string(old.checkpoint_every) + ", this run " +
                      std::to_string(o.steps) + " and " + std::to_string(o.checkpoint_every));
  std::string ck = o.resume;
  if (ck == "latest") {
    if (old.checkpoints.empty()) throw FormatError("[run] '" + rec_path + "' names no checkpoint to resume from");
    ck = resolve(rec_path, old.checkpoints.back().path);
  }
  Digest got;
  State st = read_checkpoint(ck, &got);
  step = restore(b, st, job_digest, "[run] checkpoint '" + ck + "'");
  if (step >= static_cast<int64_t>(old.states.size()) || old.states[static_cast<size_t>(step)] != got)
    throw FormatError("[run] checkpoint '" + ck + "' (step " + std::to_string(step) + ") has sha256 " + hex(got) +
                      (step < static_cast<int64_t>(old.states.size())
                           ? ", the record commits to " + hex(old.states[static_cast<size_t>(step)])
                           : ", the record has no state for that step"));
  rec.states.assign(old.states.begin(), old.states.begin() + step + 1);
  if (!old.losses.empty()) rec.losses.assign(old.losses.begin(), old.losses.begin() + step);
  for (auto& c : old.checkpoints)
    if (c.step <= step) rec.checkpoints.push_back({c.step, relative_to_record(o.record, resolve(rec_path, c.path))});
}

Run::Run(Job job, StateBinding binding, RunOptions options) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  if (options.record.empty()) throw Error("[run] RunOptions::record (the run record's path) is required");
  if (options.steps <= 0) throw Error("[run] RunOptions::steps must be positive, got " + std::to_string(options.steps));
  if (options.checkpoint_every < 0) throw Error("[run] RunOptions::checkpoint_every must not be negative");
  m.job = std::move(job);
  m.job_digest = m.job.digest();
  m.b = std::move(binding);
  m.o = std::move(options);
}

Run::~Run() {
  try {
    impl_->drain();
  } catch (...) {
  }
  impl_->shutdown();
}

void Run::begin() {
  Impl& m = *impl_;
  if (m.begun) throw Error("[run] begin() called twice");
  std::filesystem::path dir = std::filesystem::path(m.o.record).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir);
  std::filesystem::create_directories(checkpoint_dir_for(m.o.record));
  io::check_writable(m.o.record, "[run]");
  m.rec.job = m.job;
  m.rec.provenance = current_provenance(m.o.command_line);
  m.rec.steps = m.o.steps;
  m.rec.checkpoint_every = m.o.checkpoint_every;
  m.begun = true;
  if (!m.o.resume.empty()) m.resume();
  if (m.o.background) {
    m.writer = std::thread([&m] { m.write_loop(); });
    m.worker = std::thread([&m] { m.loop(); });
  }
  if (m.o.resume.empty()) m.commit(std::nullopt);  // the initial state: step 0, a checkpoint
}

int64_t Run::step() const { return impl_->step; }
int64_t Run::total_steps() const { return impl_->o.steps; }
const Digest& Run::job_digest() const { return impl_->job_digest; }
const StateBinding& Run::binding() const { return impl_->b; }

void Run::commit(std::optional<float> loss) {
  Impl& m = *impl_;
  if (!m.begun) throw Error("[run] commit() before begin()");
  if (m.step >= m.o.steps) throw Error("[run] commit() after the last of " + std::to_string(m.o.steps) + " steps");
  ++m.step;
  m.commit(loss);
}

std::vector<Digest> Run::commitments() {
  impl_->drain();
  impl_->rethrow();
  return impl_->rec.states;
}

RunRecord Run::finish(const std::vector<FileRef>& outputs, const std::map<std::string, std::string>& claims) {
  Impl& m = *impl_;
  if (m.step != m.o.steps)
    throw Error("[run] finish() after " + std::to_string(m.step) + " of " + std::to_string(m.o.steps) + " steps");
  m.drain();
  m.shutdown();
  m.rethrow();
  for (const FileRef& f : outputs)
    m.rec.outputs.push_back({f.name, relative_to_record(m.o.record, f.path), hex(file_digest(f.path, "[run] output"))});
  m.rec.claims = claims;
  write_record(m.rec, m.o.record);
  return m.rec;
}

RunRecord Run::train(const std::function<std::optional<float>(int64_t)>& step_fn) {
  begin();
  while (step() < total_steps()) commit(step_fn(step() + 1));
  return finish();
}

}  // namespace maroon::verify
