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
//
// Where the pool's threads leave no core free (2 threads on 2 vCPUs), a hashing thread of its own
// is a third thread on two cores: the OS preempts a pool worker for it inside a region, and the
// caller waits for that worker (the 2-thread epoch was slower than the 1-thread one). There the
// hashing is "pooled" instead: the pool's first worker hashes 32 KB pieces whenever it has no
// task (cpu::set_idle_work), and the loop hashes too when more than kPooledUnhashed states wait.
// But beside a busy process the OS shares the cores per runnable thread, and there a hashing
// thread wins the process a larger share (hashing.h): Auto then has both, and chooses per state
// from the process's CPU share (CpuShare) which of them hashes it; they hash the same pieces of
// the same states in order, so the choice changes no byte.
//
// Pooled, switching or on a thread of its own, states are hashed two at a time where the CPU has
// SHA instructions: a state waits for the next step's, and the two are hashed in lockstep
// (PairHasher), ~0.6 of the CPU time of hashing them one after the other. At 2 threads on 2 vCPUs
// the hashing shares the cores with the step, so this is CPU time the step gets back; at 1 thread
// the hashing thread's core is free only while no other process wants it (a shared machine). The cost: a state is committed a
// step later, and up to one more state's buffers are held (8 MB for the MNIST MLP).
#include <condition_variable>
#include <chrono>
#include <cstdio>
#include <deque>
#include <exception>
#include <filesystem>
#include <mutex>
#include <thread>

#include "cpu/threads.h"
#include "io/files.h"
#include "maroon/backend.h"
#include "verify/digest.h"
#include "verify/evict.h"
#include "verify/hashing.h"
#include "verify/sha256_ni.h"
#include "verify/state.h"

namespace maroon::verify {

namespace {
constexpr size_t kPendingBytes = size_t{256} << 20;
// The worker, out of work, checks for a new state every kPoll for up to kPollFor since its last
// one, then sleeps until woken: a step shorter than kPollFor hands over without a system call,
// and a hash ends at most kPoll (plus the timer's slack) later; an idle run's worker sleeps.
constexpr auto kPoll = std::chrono::microseconds(200);
constexpr auto kPollFor = std::chrono::milliseconds(25);
// Pooled hashing: a piece is ~20 us of SHA-256 on the 2-vCPU EPYC (1.5 GB/s), the longest a
// region waits for the worker; past kPooledUnhashed states not yet hashed the loop helps.
constexpr size_t kPiece = size_t{32} << 10;
// A hashing thread's pieces: hashed while in its core's L2, then evicted (as commitment_evicting).
constexpr size_t kThreadPiece = size_t{64} << 10;
constexpr int64_t kPooledUnhashed = 3;
// From this many states not yet hashed (the worker is a step behind) its pieces are urgent.
constexpr int64_t kPooledUrgent = 2;
// Both one more where states are hashed in pairs (two wait before a pair starts).

// Whether the pool's idle time may hash: Pool, or Auto where the pool's threads leave no core free.
bool pool_hashing(RunOptions::Hashing h) {
  if (h != RunOptions::Hashing::Auto) return h == RunOptions::Hashing::Pool;
  return num_threads() >= 2 && num_threads() + 1 > usable_cores();
}

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

  // Pooled hashing: the state being hashed, a piece at a time, by whoever holds hash_mu (the
  // pool's idle worker or the loop); `unhashed` counts the states enqueued and not yet hashed.
  struct Hashing {
    Pending p;
    bool skip;  // an error came first: dropped unhashed
    Frozen f;
    std::unique_ptr<PieceHasher> h;  // reads f
    std::optional<Pending> q;  // paired: the next step's state, hashed with p's
    Frozen g;
    std::unique_ptr<PairHasher> h2;  // reads f and g
  };
  bool pairing = false;   // the hashing takes states two at a time (begin(): SHA instructions)
  bool draining = false;  // under mu: a lone state is hashed without waiting for a partner
  int64_t paired_unhashed() const { return pairing ? 1 : 0; }
  bool pooled = false;  // until shutdown()
  // Auto with the pool's idle time: a hashing thread too, and per state, who hashes it.
  bool switching = false;
  std::atomic<bool> to_thread{false};  // written under mu
  // While the thread hashes (the process is short of cores) and was busy for most of the last
  // window, one pool thread is held out of the step's regions (cpu::reserve_threads). Only while
  // busy: a hasher that is mostly idle (small states) does not make the step's threads three on
  // two cores; and with a thread held out, an idle hasher leaves the process on one core, which
  // CpuShare reads as short of cores even on an idle machine, so the run never went back to both
  // threads (the CNN with a competitor for its first 1.5 s only: 4.9-5.2 s against 3.0-3.2). Not
  // the backlog instead of the busy time: a busy hasher that just caught up let both threads back
  // in, fell behind again, and the epoch beside a busy process lost most of the gain.
  bool reserving = false;
  BusyTime hashing_time;  // the hashing thread's pieces
  bool hasher_busy() {
    if (const int forced_busy = hasher_busy_override(); forced_busy >= 0) return forced_busy == 1;  // a test's
    return hashing_time.busy();
  }
  void reserve(bool on) {
    if (on == reserving) return;
    cpu::reserve_threads(on ? 1 : -1);
    reserving = on;
  }
  std::optional<CpuShare> share;
  std::function<bool(int64_t)> forced;  // hashing_override() at begin()
  RunOptions::Hashing mode = RunOptions::Hashing::Auto;  // what begin() chose
  std::mutex hash_mu;
  std::optional<Hashing> cur;  // under hash_mu
  int64_t unhashed = 0;        // under mu

  bool checkpoint_due(int64_t s) const {
    return s == 0 || s == o.steps || (o.checkpoint_every > 0 && s % o.checkpoint_every == 0);
  }
  std::string checkpoint_path(int64_t s) const {
    char name[48];
    std::snprintf(name, sizeof name, "/step-%09lld.safetensors", static_cast<long long>(s));
    return checkpoint_dir_for(o.record) + name;
  }

  void check_order(int64_t s) const {
    if (static_cast<int64_t>(rec.states.size()) != s)
      throw Error("[run] internal: state " + std::to_string(s) + " committed out of order");
  }
  // On the worker, the state leaves the caches once read (evict.cpp: the loop writes these
  // buffers again a step later, and would otherwise first take every line from this core),
  // unless the cores share their last cache (eviction_helps()).
  bool evicting(int64_t s) const { return o.background && o.evict && eviction_helps() && !checkpoint_due(s); }

  // The worker's part of a commit: the commitment, the checkpoint file and the partial record.
  void process(Pending& pending) {
    check_order(pending.step);
    Frozen f = freeze_realized(pending.state);
    Digest c = evicting(pending.step) ? commitment_evicting(f) : commitment_of(f);
    record_state(pending.step, std::move(f), pending.loss, c);
  }

  // A hashed state into the record; a due checkpoint to the writer (or written here, inline).
  void record_state(int64_t step, Frozen state, std::optional<float> loss, const Digest& c) {
    Write w{step, std::move(state), 0, 0};
    {
      std::lock_guard<std::mutex> lk(rec_mu);
      rec.states.push_back(c);
      if (loss) rec.losses.push_back(*loss);
      w.states = rec.states.size(), w.losses = rec.losses.size();
    }
    if (!checkpoint_due(step)) return;
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

  // Two consecutive states hashed in lockstep by the hashing thread (as advance() does pooled).
  void process_pair(Pending& p, Pending& q) {
    check_order(p.step);
    if (q.step != p.step + 1) throw Error("[run] internal: states paired out of order");
    Frozen f = freeze_realized(p.state), g = freeze_realized(q.state);
    PairHasher h(f, evicting(p.step), g, evicting(q.step));
    while (!h.piece(kThreadPiece)) {
    }
    const auto [a, b] = h.finish();
    if (h.lockstep()) hashing_counts().paired.fetch_add(2, std::memory_order_relaxed);
    record_state(p.step, std::move(f), p.loss, a);
    record_state(q.step, std::move(g), q.loss, b);
  }

  void loop() {
    std::unique_lock<std::mutex> lk(mu);
    auto last = std::chrono::steady_clock::now();
    while (true) {
      if (!stop && !takeable() && std::chrono::steady_clock::now() - last < kPollFor) {
        lk.unlock();
        std::this_thread::sleep_for(kPoll);
        lk.lock();
        continue;
      }
      sleeping = true;
      cv.wait(lk, [&] { return stop || takeable(); });
      sleeping = false;
      if (queue.empty()) return;
      Pending p = std::move(queue.front());
      queue.pop_front();
      pending_bytes -= p.bytes;
      std::optional<Pending> q;  // pairing: the next step's state, hashed with p's
      if (pairing && !queue.empty()) {
        q.emplace(std::move(queue.front()));
        queue.pop_front();
        pending_bytes -= q->bytes;
      }
      busy = true;
      const bool skip = error != nullptr;
      lk.unlock();
      std::exception_ptr failed;
      try {
        if (!skip) q ? process_pair(p, *q) : process(p);
      } catch (...) {
        failed = std::current_exception();
      }
      { State drop = std::move(p.state); }  // release the buffers outside the lock
      if (q) {
        State drop = std::move(q->state);
      }
      lk.lock();
      if (failed && !error) error = failed;
      busy = false;
      last = std::chrono::steady_clock::now();
      cv.notify_all();
    }
  }

  // One piece of pooled hashing (freezing a state counts as one): kNone when no state may be
  // taken (takeable()), kTaken when another thread holds the hashing.
  enum Piece { kNone, kMore, kTaken };
  // Under mu: whether a state may be taken now (where states go in pairs, a lone one waits for
  // the next step's unless the run drains or it is the last step).
  bool takeable() const {
    if (queue.empty()) return false;
    return !pairing || queue.size() >= 2 || draining || queue.back().step >= o.steps;
  }
  // Under mu: a state is being hashed, or one may be taken.
  bool hashable() const { return unhashed > static_cast<int64_t>(queue.size()) || takeable(); }

  Piece hash_piece(size_t budget, std::atomic<int64_t>& count) {
    std::unique_lock<std::mutex> hl(hash_mu, std::try_to_lock);
    if (!hl.owns_lock()) return kTaken;
    if (!cur) {
      std::lock_guard<std::mutex> lk(mu);
      if (!takeable()) return kNone;
      cur.emplace(Hashing{std::move(queue.front()), error != nullptr, {}, nullptr, std::nullopt, {}, nullptr});
      queue.pop_front();
      pending_bytes -= cur->p.bytes;
      if (pairing && !queue.empty()) {
        cur->q.emplace(std::move(queue.front()));
        queue.pop_front();
        pending_bytes -= cur->q->bytes;
      }
      busy = true;
    }
    std::exception_ptr failed;
    try {
      count.fetch_add(1, std::memory_order_relaxed);
      if (!cur->skip && !advance(*cur, budget)) return kMore;
    } catch (...) {
      failed = std::current_exception();
    }
    const int64_t states = cur->q ? 2 : 1;
    { Hashing drop = std::move(*cur); }  // release the buffers outside the lock
    cur.reset();
    std::lock_guard<std::mutex> lk(mu);
    if (failed && !error) error = failed;
    unhashed -= states;
    busy = false;
    cv.notify_all();
    return takeable() ? kMore : kNone;
  }

  // The pool's idle worker's piece.
  cpu::IdleWork idle_piece() {
    if (to_thread.load(std::memory_order_relaxed)) return cpu::IdleWork::kNone;  // until idle_work_ready()
    const Piece r = hash_piece(kPiece, hashing_counts().idle);
    if (r == kNone) return cpu::IdleWork::kNone;
    std::lock_guard<std::mutex> lk(mu);
    return unhashed >= kPooledUrgent + paired_unhashed() ? cpu::IdleWork::kUrgent : cpu::IdleWork::kMore;
  }

  // The next piece of `s`; true once it is hashed and recorded.
  bool advance(Hashing& s, size_t budget) {
    if (!s.h && !s.h2) {
      check_order(s.p.step);
      s.f = freeze_realized(s.p.state);
      if (!s.q) {
        s.h = std::make_unique<PieceHasher>(s.f, evicting(s.p.step));
        return false;
      }
      if (s.q->step != s.p.step + 1) throw Error("[run] internal: states paired out of order");
      s.g = freeze_realized(s.q->state);
      s.h2 = std::make_unique<PairHasher>(s.f, evicting(s.p.step), s.g, evicting(s.q->step));
      return false;
    }
    if (s.h) {
      if (!s.h->piece(budget)) return false;
      record_state(s.p.step, std::move(s.f), s.p.loss, s.h->finish());
      return true;
    }
    if (!s.h2->piece(budget / 2)) return false;  // of each: a piece takes about a lone state's time
    const auto [a, b] = s.h2->finish();
    if (s.h2->lockstep()) hashing_counts().paired.fetch_add(2, std::memory_order_relaxed);
    record_state(s.p.step, std::move(s.f), s.p.loss, a);
    record_state(s.q->step, std::move(s.g), s.q->loss, b);
    return true;
  }

  // The loop hashes pieces while `behind()` (read under mu) holds and no error came; where the
  // worker holds the hashing, it waits for the worker to finish a state.
  template <class F>
  void help_while(F behind) {
    while (true) {
      {
        std::lock_guard<std::mutex> lk(mu);
        if (error || !behind()) return;
      }
      if (hash_piece(kPiece, hashing_counts().loop) != kTaken) continue;
      std::unique_lock<std::mutex> lk(mu);
      cv.wait_for(lk, std::chrono::milliseconds(1), [&] { return error || !behind(); });
    }
  }

  // The hashing thread where Auto switches: hashes pieces while states wait and they are its (as
  // loop() polls, then sleeps, while none wait; sleeps while they are the pool's).
  void piece_loop() {
    std::unique_lock<std::mutex> lk(mu);
    auto last = std::chrono::steady_clock::now();
    while (!stop) {
      if (!to_thread || !hashable()) {
        if (to_thread && std::chrono::steady_clock::now() - last < kPollFor) {
          lk.unlock();
          std::this_thread::sleep_for(kPoll);
          lk.lock();
          continue;
        }
        sleeping = true;
        cv.wait(lk, [&] { return stop || (to_thread && hashable()); });
        sleeping = false;
        continue;
      }
      lk.unlock();
      Piece r;
      auto& count = hashing_counts().thread;
      auto t0 = std::chrono::steady_clock::now();
      auto timed = [&] {  // each piece's time as it ends: the loop reads it every window
        const auto t = std::chrono::steady_clock::now();
        hashing_time.add(t - t0);
        t0 = t;
      };
      while ((r = hash_piece(kThreadPiece, count)) == kMore && to_thread.load(std::memory_order_relaxed)) timed();
      timed();
      if (r == kTaken) std::this_thread::sleep_for(kPoll);  // the idle worker or the loop ends a piece
      lk.lock();
      last = std::chrono::steady_clock::now();
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
    if (pooled) {
      // Where Auto switches: a thread hashes this state while the process is short of cores.
      const bool thread = switching && (forced ? forced(p.step) : share->short_of_cores());
      bool wake;
      {
        std::lock_guard<std::mutex> lk(mu);
        if (error) std::rethrow_exception(error);
        pending_bytes += p.bytes;
        ++unhashed;
        queue.push_back(std::move(p));
        to_thread = thread;
        wake = thread && sleeping;
      }
      if (wake) cv.notify_all();
      if (thread) hashing_counts().to_thread.fetch_add(1, std::memory_order_relaxed);
      reserve(thread && hasher_busy());
      if (!thread) {
        cpu::idle_work_ready();
        help_while([&] { return unhashed > kPooledUnhashed + paired_unhashed(); });
        return;
      }
      // As with a thread of its own: the loop waits only while the states wait past kPendingBytes.
      std::unique_lock<std::mutex> lk(mu);
      cv.wait(lk, [&] { return queue.size() < 3 || pending_bytes <= kPendingBytes || error; });
      return;
    }
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
    if (pairing && !pooled && worker.joinable()) {
      std::unique_lock<std::mutex> lk(mu);
      draining = true;  // a lone state is hashed without waiting for a partner
      const bool wake = sleeping;
      lk.unlock();
      if (wake) cv.notify_all();
      lk.lock();
      cv.wait(lk, [&] { return queue.empty() && !busy; });
      draining = false;
    }
    if (pooled) {
      {
        std::lock_guard<std::mutex> lk(mu);
        draining = true;  // the last state hashed alone
      }
      help_while([&] { return unhashed > 0; });
      std::lock_guard<std::mutex> lk(mu);
      draining = false;
    }
    if (!worker.joinable() && !writer.joinable()) return;
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [&] { return queue.empty() && !busy && writes.empty() && !writing; });
  }

  void shutdown() {
    if (pooled) cpu::clear_idle_work(), pooled = false;  // no piece runs after this
    reserve(false);
    if (worker.joinable()) {
      {
        std::lock_guard<std::mutex> lk(mu);
        stop = true;
      }
      cv.notify_all();
      worker.join();
    }
    if (!writer.joinable()) return;
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

namespace {
// What first differs between a recorded job and this run's, for the refusal's message: a config
// key (train --fused's "products", a learning rate), else the name, the architecture or the data.
std::string job_difference(const Job& old, const Job& now) {
  auto value = [](const std::map<std::string, std::string>& c, const std::string& k) {
    auto it = c.find(k);
    return it == c.end() ? std::string("(none)") : "\"" + it->second + "\"";
  };
  std::map<std::string, std::string> keys = old.config;
  keys.insert(now.config.begin(), now.config.end());
  for (const auto& [k, v] : keys)
    if (value(old.config, k) != value(now.config, k))
      return "job.config." + k + " is " + value(old.config, k) + " there, " + value(now.config, k) + " here";
  if (old.name != now.name) return "job.name is \"" + old.name + "\" there, \"" + now.name + "\" here";
  if (old.arch_sha256 != now.arch_sha256) return "job.arch_sha256 differs";
  return "job.data differs";
}
}  // namespace

void Run::Impl::resume() {
  const std::string rec_path = o.resume_record.empty() ? o.record : o.resume_record;
  RunRecord old = read_record(rec_path);
  if (old.job.digest() != job_digest)
    throw FormatError("[run] cannot resume from '" + rec_path + "': its job_sha256 is " + hex(old.job.digest()) +
                      ", this run's job is " + hex(job_digest) + " (" + job_difference(old.job, job) + ")");
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
    const bool pool = pool_hashing(m.o.hashing);
    m.pairing = pool && have_sha_ni();  // before the idle worker may read it
    m.pooled = pool && cpu::set_idle_work([&m] { return m.idle_piece(); });
    if (!m.pooled) m.pairing = false;  // no idle work installed: nothing reads it yet
    m.forced = hashing_override();  // a test's: Pool switches too, on any machine
    m.switching = m.pooled && (m.o.hashing == RunOptions::Hashing::Auto || m.forced);
    if (m.switching) {
      m.share.emplace(usable_cores());
      m.worker = std::thread([&m] { m.piece_loop(); });
    } else if (!m.pooled) {
      m.pairing = have_sha_ni();  // the thread takes states two at a time too
      m.worker = std::thread([&m] { m.loop(); });
    }
    m.mode = m.switching ? RunOptions::Hashing::Auto
                         : m.pooled ? RunOptions::Hashing::Pool : RunOptions::Hashing::Thread;
  }
  if (m.o.resume.empty()) m.commit(std::nullopt);  // the initial state: step 0, a checkpoint
}

int64_t Run::step() const { return impl_->step; }
int64_t Run::total_steps() const { return impl_->o.steps; }
const Digest& Run::job_digest() const { return impl_->job_digest; }
const StateBinding& Run::binding() const { return impl_->b; }
RunOptions::Hashing Run::hashing() const { return impl_->mode; }

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
