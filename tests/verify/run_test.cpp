// Run: every step committed, checkpoints, the record, and exact resume for the MLP and the CNN.
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include "cpu/threads.h"
#include "maroon/backend.h"

#include "io/files.h"
#include "verify/hashing.h"
#include "verify/sha256_ni.h"
#include "job.h"

using namespace maroon;
using namespace maroon::verify;
using maroon::verifytest::TestJob;
using maroon::verifytest::data;

namespace {

// A run, then resumes from each checkpoint in `points` with fresh objects: every resumed run
// must end with the same record states, root and final state.
void expect_exact_resume(const std::string& kind, int64_t batch, int64_t steps, int64_t every,
                         const std::vector<int64_t>& points) {
  std::string dir = verifytest::scratch("resume_" + kind);
  TestJob full(data(), kind, batch);
  RunRecord whole = full.run(dir + "/full.run.json", steps, every);
  ASSERT_TRUE(whole.complete());
  EXPECT_EQ(whole.states.size(), static_cast<size_t>(steps + 1));
  for (int64_t p : points) {
    char name[64];
    std::snprintf(name, sizeof name, "/full.ckpt/step-%09lld.safetensors", static_cast<long long>(p));
    TestJob again(data(), kind, batch);
    RunRecord r = again.run(dir + "/from" + std::to_string(p) + ".run.json", steps, every, dir + name,
                            dir + "/full.run.json");
    EXPECT_EQ(r.states, whole.states) << kind << " resumed at " << p;
    EXPECT_EQ(hex(r.merkle_root), hex(whole.merkle_root));
    EXPECT_EQ(r.losses.size(), whole.losses.size());
    EXPECT_EQ(std::memcmp(r.losses.data(), whole.losses.data(), 4 * r.losses.size()), 0);
    State end = capture(again.binding(), steps, again.job().digest());
    EXPECT_EQ(state_commitment(end), whole.states.back());
  }
}

}  // namespace

TEST(VerifyRun, RecordCommitsEveryStepAndCheckpointsAtTheInterval) {
  std::string dir = verifytest::scratch("record");
  TestJob j(data(), "mlp", 8);
  RunRecord r = j.run(dir + "/a.run.json", 5, 2);
  ASSERT_EQ(r.states.size(), 6u);
  ASSERT_EQ(r.losses.size(), 5u);
  std::vector<int64_t> steps;
  for (auto& c : r.checkpoints) steps.push_back(c.step);
  EXPECT_EQ(steps, (std::vector<int64_t>{0, 2, 4, 5}));
  for (auto& c : r.checkpoints) {
    Digest got;
    read_checkpoint(resolve(dir + "/a.run.json", c.path), &got);
    EXPECT_EQ(got, r.states[static_cast<size_t>(c.step)]) << c.path;
  }
  RunRecord back = read_record(dir + "/a.run.json");
  EXPECT_EQ(back.states, r.states);
  EXPECT_EQ(back.merkle_root, merkle_root(r.states));
  EXPECT_EQ(back.seal, r.seal);
  EXPECT_EQ(back.provenance.command_line, "test");
  EXPECT_FALSE(back.provenance.git_commit.empty());
  EXPECT_EQ(back.provenance.spec_sha256.size(), 64u);
}

TEST(VerifyRun, BackgroundAndInlineHashingGiveTheSameRecord) {
  std::string dir = verifytest::scratch("bg");
  TestJob a(data(), "mlp", 8), b(data(), "mlp", 8);
  RunRecord ra = a.run(dir + "/a.run.json", 4, 0, "", "", true);
  RunRecord rb = b.run(dir + "/b.run.json", 4, 0, "", "", false);
  EXPECT_EQ(ra.states, rb.states);
}

// Checkpoints are written by a thread of their own (at most two wait for it): with one every
// step, the background run names the same checkpoints, each file holding its committed state,
// and its partial record after step 3 is the inline run's.
TEST(VerifyRun, CheckpointWriterKeepsOrderAndPartialRecords) {
  std::string dir = verifytest::scratch("writer");
  RunRecord r[2], partial[2];
  for (bool background : {false, true}) {
    std::string rec = dir + (background ? "/bg.run.json" : "/in.run.json");
    TestJob j(data(), "mlp", 8);
    {
      verify::Run run(j.job(), j.binding(), {rec, 5, 1, "test", "", "", background});
      run.begin();
      while (run.step() < 3) run.commit(j.step(run.step() + 1));
      run.commitments();  // waits for the hasher and the writer
      partial[background] = read_record(rec);
      while (run.step() < run.total_steps()) run.commit(j.step(run.step() + 1));
      r[background] = run.finish();
    }
    ASSERT_EQ(r[background].checkpoints.size(), 6u);
    for (size_t k = 0; k < 6; ++k) {
      const auto& c = r[background].checkpoints[k];
      EXPECT_EQ(c.step, static_cast<int64_t>(k));
      EXPECT_EQ(sha256(io::read_file(resolve(rec, c.path), "test")), r[background].states.at(k)) << c.path;
    }
  }
  EXPECT_EQ(r[0].states, r[1].states);
  EXPECT_EQ(r[0].losses, r[1].losses);
  for (const RunRecord& p : partial) {
    EXPECT_FALSE(p.complete());
    EXPECT_EQ(p.states, std::vector<Digest>(r[0].states.begin(), r[0].states.begin() + 4));
    EXPECT_EQ(p.losses, std::vector<float>(r[0].losses.begin(), r[0].losses.begin() + 3));
    EXPECT_EQ(p.checkpoints.size(), 4u);
  }
}

// The background hasher's commitments are the plain ones (capture + state_commitment on this
// thread, after each step), bit for bit, and each checkpoint holds exactly the committed bytes.
TEST(VerifyRun, BackgroundCommitmentsEqualPlainOnesBitForBit) {
  std::string dir = verifytest::scratch("bg_plain");
  TestJob j(data(), "mlp", 8);
  verify::Run run(j.job(), j.binding(), {dir + "/a.run.json", 5, 2, "test", "", "", true});
  run.begin();
  std::vector<Digest> plain{state_commitment(capture(j.binding(), 0, j.job().digest()))};
  while (run.step() < run.total_steps()) {
    run.commit(j.step(run.step() + 1));
    plain.push_back(state_commitment(capture(j.binding(), run.step(), j.job().digest())));
  }
  EXPECT_EQ(run.commitments(), plain);
  RunRecord r = run.finish();
  EXPECT_EQ(r.states, plain);
  for (auto& c : r.checkpoints)
    EXPECT_EQ(sha256(io::read_file(resolve(dir + "/a.run.json", c.path), "test")), plain.at(c.step)) << c.path;
}

// A failure on the hasher's thread (here: the checkpoint directory replaced by a file, so the last
// step's checkpoint cannot be written) is thrown on the loop's thread by the next call, with the
// message the inline hasher throws from commit() itself, and again by every later call; the record
// on disk stays the last good one.
TEST(VerifyRun, BackgroundHasherErrorSurfacesInTheLoop) {
  std::string messages[2];
  for (bool background : {true, false}) {
    std::string dir = verifytest::scratch("hasher_error");  // the same paths, so the same message
    TestJob j(data(), "mlp", 8);
    verify::Run run(j.job(), j.binding(), {dir + "/a.run.json", 2, 0, "test", "", "", background});
    run.begin();
    ASSERT_EQ(run.commitments().size(), 1u);  // step 0's checkpoint and record are written
    std::filesystem::remove_all(dir + "/a.ckpt");
    io::write_file_atomic(dir + "/a.ckpt", "not a directory", "test");
    run.commit(j.step(1));
    std::string& m = messages[background];
    try {
      run.commit(j.step(2));  // the last step: a checkpoint is due
      run.commitments();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      m = e.what();
    }
    EXPECT_NE(m.find("step-000000002.safetensors"), std::string::npos) << m;
    EXPECT_THROW(run.commitments(), Error);  // every later call throws it again
    EXPECT_THROW(run.finish(), Error);
    EXPECT_EQ(read_record(dir + "/a.run.json").states.size(), 1u);
  }
  EXPECT_EQ(messages[0], messages[1]);
}

namespace {

// A run of `steps` steps hashing as `how` (a checkpoint every `every`): its record, and the
// partial record on disk after step 3.
struct Hashed {
  RunRecord whole, partial;
  RunOptions::Hashing took;
};
Hashed run_hashing(const std::string& rec, RunOptions::Hashing how, bool background, int64_t steps, int64_t every,
                   const std::function<void(int64_t)>& before_step = nullptr) {
  TestJob j(data(), "mlp", 8);
  RunOptions o{rec, steps, every, "test", "", "", background};
  o.hashing = how;
  verify::Run run(j.job(), j.binding(), o);
  run.begin();
  Hashed h;
  h.took = run.hashing();
  while (run.step() < run.total_steps()) {
    if (before_step) before_step(run.step() + 1);
    run.commit(j.step(run.step() + 1));
    if (run.step() == 3) {
      run.commitments();
      h.partial = read_record(rec);
    }
  }
  h.whole = run.finish();
  return h;
}

void expect_same_records(const Hashed& a, const Hashed& b, const std::string& what) {
  EXPECT_EQ(a.whole.states, b.whole.states) << what;
  EXPECT_EQ(a.whole.losses, b.whole.losses) << what;
  EXPECT_EQ(a.whole.merkle_root, b.whole.merkle_root) << what;
  EXPECT_EQ(a.partial.states, b.partial.states) << what;
  EXPECT_EQ(a.partial.losses, b.partial.losses) << what;
  ASSERT_EQ(a.whole.checkpoints.size(), b.whole.checkpoints.size()) << what;
  for (size_t k = 0; k < a.whole.checkpoints.size(); ++k) EXPECT_EQ(a.whole.checkpoints[k].step, b.whole.checkpoints[k].step);
}

// A background run hashing in the pool's idle time (Pool), which switches to the hashing thread
// per state where a test overrides the choice (set_hashing_override).
RunOptions pooled_options(const std::string& rec, int64_t steps, int64_t every) {
  RunOptions o{rec, steps, every, "test", "", "", true};
  o.hashing = RunOptions::Hashing::Pool;
  return o;
}

struct RunThreadsGuard {
  int saved = num_threads();
  ~RunThreadsGuard() { set_num_threads(saved); }
};

}  // namespace

// Hashing in the pool's idle time (RunOptions::Hashing::Pool, what Auto picks where the pool's
// threads leave no core free) gives the inline run's record bit for bit: every commitment, the
// losses, the checkpoints (each file's sha256 its committed state) and the partial record; so
// does a hashing thread. At 1 thread (no worker) Pool falls back to a thread.
TEST(VerifyRun, PooledHashingGivesTheInlineRecordBitForBit) {
  RunThreadsGuard g;
  std::string dir = verifytest::scratch("pooled");
  set_num_threads(2);
  Hashed in = run_hashing(dir + "/in.run.json", RunOptions::Hashing::Auto, false, 7, 2);
  EXPECT_EQ(in.took, RunOptions::Hashing::Auto);
  for (int threads : {2, 3, 1}) {
    set_num_threads(threads);
    for (auto how : {RunOptions::Hashing::Pool, RunOptions::Hashing::Thread}) {
      const bool pool = how == RunOptions::Hashing::Pool;
      std::string rec = dir + "/" + (pool ? "pool" : "thread") + std::to_string(threads) + ".run.json";
      const int64_t paired0 = hashing_counts().paired.load();
      Hashed h = run_hashing(rec, how, true, 7, 2);
      EXPECT_EQ(h.took, pool && threads > 1 ? RunOptions::Hashing::Pool : RunOptions::Hashing::Thread);
      // Pooled or on the hashing thread, the states go two at a time: 0 and 1, 2 and 3 (drained
      // by commitments() after step 3, when both wait), 4 and 5, 6 and 7.
      if (have_sha_ni()) {
        EXPECT_GE(hashing_counts().paired.load() - paired0, 4) << rec;
      }
      expect_same_records(h, in, rec);
      for (auto& c : h.whole.checkpoints)
        EXPECT_EQ(sha256(io::read_file(resolve(rec, c.path), "test")), h.whole.states.at(c.step)) << c.path;
    }
  }
}

// With the pool's worker held inside another thread's region (it runs no idle work), the loop
// hashes the states itself once more than a few wait: the same record, and the run ends.
TEST(VerifyRun, PooledHashingLoopHashesWhenTheWorkerCannot) {
  RunThreadsGuard g;
  std::string dir = verifytest::scratch("pooled_stuck");
  Hashed in = run_hashing(dir + "/in.run.json", RunOptions::Hashing::Auto, false, 9, 4);
  std::atomic<bool> inside{false}, release{false}, done{false}, timed_out{false};
  std::thread blocker;
  std::thread watchdog([&] {  // a loop that never hashes would wait for the worker forever
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!done.load() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (!done.load()) timed_out = true, release = true;
  });
  set_num_threads(2);
  Hashed h = run_hashing(dir + "/stuck.run.json", RunOptions::Hashing::Pool, true, 9, 4, [&](int64_t step) {
    if (step != 1) return;
    blocker = std::thread([&] {  // task 0 is the blocker's own, task 1 the worker's
      cpu::parallel_for(
          2,
          [&](int64_t t) {
            if (t == 1) inside = true;
            while (!release.load()) std::this_thread::yield();
          },
          Round::NearestEven);
    });
    while (!inside.load()) std::this_thread::yield();
    set_num_threads(1);  // this loop's steps run without the pool, which the blocker holds
  });
  done = true, release = true;
  blocker.join();
  watchdog.join();
  EXPECT_FALSE(timed_out.load()) << "the loop did not hash while the worker was held";
  EXPECT_EQ(h.took, RunOptions::Hashing::Pool);
  expect_same_records(h, in, "worker held");
}

// Where the run chooses per state who hashes it (Auto beside a busy process), states handed to
// the thread and to the pool's idle time by turns, switched mid-run both ways and mid-backlog,
// give the inline run's record bit for bit; the thread and the pool's side each hashed pieces.
TEST(VerifyRun, SwitchingHashingGivesTheInlineRecordBitForBit) {
  RunThreadsGuard g;
  std::string dir = verifytest::scratch("switching");
  set_num_threads(2);
  Hashed in = run_hashing(dir + "/in.run.json", RunOptions::Hashing::Auto, false, 11, 3);
  struct Schedule {
    const char* name;
    std::function<bool(int64_t)> to_thread;
  };
  // By turns two states at a time: where states are hashed in pairs (SHA instructions), the
  // state that completes a pair (an odd step) decides who starts it, so one state at a time would
  // give every pair to the thread.
  for (const Schedule& sc : {Schedule{"alternate", [](int64_t s) { return (s / 2) % 2 == 1; }},
                             Schedule{"runs", [](int64_t s) { return (s / 3) % 2 == 0; }},
                             Schedule{"thread_then_pool", [](int64_t s) { return s < 6; }}}) {
    for (int threads : {2, 3}) {
      set_num_threads(threads);
      HashingCounts& c = hashing_counts();
      const int64_t t0 = c.thread.load(), p0 = c.idle.load() + c.loop.load(), s0 = c.to_thread.load();
      int64_t handed = 0;
      for (int64_t s = 0; s <= 11; ++s) handed += sc.to_thread(s);
      set_hashing_override(sc.to_thread);
      std::string rec = dir + "/" + sc.name + std::to_string(threads) + ".run.json";
      // While the thread hashes (and is busy: forced here), one pool thread sits out the step's
      // regions (reserve_threads): after state s was handed over, before step s + 1.
      set_hasher_busy_override(1);
      int64_t wrong_reserve = 0;
      Hashed h = run_hashing(rec, RunOptions::Hashing::Pool, true, 11, 3, [&](int64_t next) {
        wrong_reserve += cpu::reserved_threads() != (sc.to_thread(next - 1) ? 1 : 0);
      });
      set_hasher_busy_override(-1);
      set_hashing_override(nullptr);
      EXPECT_EQ(wrong_reserve, 0) << rec << ": steps whose regions held the wrong number of threads out";
      EXPECT_EQ(cpu::reserved_threads(), 0) << rec << ": finish() left pool threads held out";
      EXPECT_EQ(h.took, RunOptions::Hashing::Auto) << rec;  // chose per state
      EXPECT_EQ(c.to_thread.load() - s0, handed) << rec << ": the states handed to the thread";
      EXPECT_GT(c.thread.load(), t0) << rec << ": the thread hashed nothing";
      EXPECT_GT(c.idle.load() + c.loop.load(), p0) << rec << ": the pool's side hashed nothing";
      expect_same_records(h, in, rec);
      for (auto& ck : h.whole.checkpoints)
        EXPECT_EQ(sha256(io::read_file(resolve(rec, ck.path), "test")), h.whole.states.at(ck.step)) << ck.path;
    }
  }
}

// A hashing thread idle for most of the window (small states, steps far apart) holds no pool
// thread out, even while it has the states: held out beside an idle hasher, the process ran on
// one core, CpuShare read that as short of cores, and a run whose competitor had gone never went
// back to both threads.
TEST(VerifyRun, AnIdleHashingThreadHoldsNoPoolThreadOut) {
  RunThreadsGuard g;
  std::string dir = verifytest::scratch("idle_hasher");
  set_num_threads(2);
  set_hashing_override([](int64_t) { return true; });
  TestJob j(data(), "mlp", 8);
  int64_t held = 0;
  {
    verify::Run run(j.job(), j.binding(), pooled_options(dir + "/idle.run.json", 4, 2));
    run.begin();
    while (run.step() < run.total_steps()) {
      // Past CpuShare's window, in which a state of ~8 MB takes a few ms to hash.
      std::this_thread::sleep_for(5 * CpuShare::kWindow);
      run.commit(j.step(run.step() + 1));
      held += cpu::reserved_threads();
    }
    run.finish();
  }
  set_hashing_override(nullptr);
  EXPECT_EQ(held, 0) << "steps that held a pool thread out for an idle hasher";
}

// A run dropped mid-way (an exception in the training loop) gives the held pool thread back.
TEST(VerifyRun, ADroppedRunGivesItsHeldPoolThreadBack) {
  RunThreadsGuard g;
  std::string dir = verifytest::scratch("dropped");
  set_num_threads(2);
  set_hashing_override([](int64_t) { return true; });
  set_hasher_busy_override(1);
  TestJob j(data(), "mlp", 8);
  int held = 0;
  {
    verify::Run run(j.job(), j.binding(), pooled_options(dir + "/dropped.run.json", 6, 3));
    run.begin();
    run.commit(j.step(1));
    held = cpu::reserved_threads();
  }
  set_hasher_busy_override(-1);
  set_hashing_override(nullptr);
  EXPECT_EQ(held, 1) << "the thread hashes, busy: one pool thread sits out";
  EXPECT_EQ(cpu::reserved_threads(), 0) << "a dropped run left a pool thread held out";
}

// CpuShare: a process that slept through a window got less than its cores; with no cores to
// miss, it never is short.
TEST(VerifyRun, CpuShareSeesAProcessShortOfCores) {
  CpuShare two(2), none(0);
  EXPECT_FALSE(two.short_of_cores());  // the first call starts a window
  EXPECT_FALSE(none.short_of_cores());
  std::this_thread::sleep_for(CpuShare::kWindow + std::chrono::milliseconds(10));
  EXPECT_TRUE(two.short_of_cores()) << two.last_share();
  EXPECT_LT(two.last_share(), 1.6);
  EXPECT_FALSE(none.short_of_cores());
}

// BusyTime: work added for most of a window reads busy, a sliver of it idle; the answer holds
// until the next window has passed.
TEST(VerifyRun, BusyTimeSeesAThreadBusyForHalfAWindow) {
  using std::chrono::milliseconds;
  BusyTime t;
  EXPECT_FALSE(t.busy());  // the first call starts a window
  std::this_thread::sleep_for(CpuShare::kWindow + milliseconds(10));
  t.add(2 * CpuShare::kWindow);  // more than the window: busy whatever the sleep overshot
  EXPECT_TRUE(t.busy());
  t.add(milliseconds(1));
  EXPECT_TRUE(t.busy()) << "within the window: the last answer";
  std::this_thread::sleep_for(CpuShare::kWindow + milliseconds(10));
  EXPECT_FALSE(t.busy()) << "1 ms of work in a window of 60 ms or more";
}

TEST(VerifyRun, MlpResumesExactlyFromEveryCheckpoint) { expect_exact_resume("mlp", 8, 9, 3, {0, 3, 6}); }

TEST(VerifyRun, CnnResumesExactlyIncludingBatchNormStatistics) { expect_exact_resume("cnn", 4, 4, 2, {2}); }

TEST(VerifyRun, InterruptedRunResumesFromTheLatestCheckpoint) {
  std::string dir = verifytest::scratch("interrupt");
  TestJob whole(data(), "mlp", 8);
  RunRecord ref = whole.run(dir + "/ref.run.json", 7, 3);
  {
    TestJob j(data(), "mlp", 8);
    RunOptions o;
    o.record = dir + "/a.run.json", o.steps = 7, o.checkpoint_every = 3;
    verify::Run r(j.job(), j.binding(), o);
    r.begin();
    while (r.step() < 5) r.commit(j.step(r.step() + 1));  // killed after step 5
  }
  RunRecord partial = read_record(dir + "/a.run.json");
  EXPECT_FALSE(partial.complete());
  EXPECT_EQ(partial.states.size(), 4u);  // steps 0..3: the record written with checkpoint 3
  TestJob j(data(), "mlp", 8);
  RunRecord done = j.run(dir + "/a.run.json", 7, 3, "latest");
  EXPECT_EQ(done.states, ref.states);
}

TEST(VerifyRun, ResumeRejectsAnotherJobsRecordAndAForgedCheckpoint) {
  std::string dir = verifytest::scratch("reject");
  TestJob a(data(), "mlp", 8);
  a.run(dir + "/a.run.json", 4, 2);
  TestJob other(data(), "mlp", 16);
  EXPECT_THROW(other.run(dir + "/b.run.json", 4, 2, "latest", dir + "/a.run.json"), FormatError);
  // A checkpoint whose bytes are not what the record commits to for its step.
  std::string ck = dir + "/a.ckpt/step-000000002.safetensors";
  std::string bytes = io::read_file(ck, "test");
  bytes[bytes.size() / 2] ^= 1;  // inside a parameter
  io::write_file_atomic(ck, bytes, "test");
  TestJob c(data(), "mlp", 8);
  try {
    c.run(dir + "/c.run.json", 4, 2, ck, dir + "/a.run.json");
    ADD_FAILURE();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("the record commits to"), std::string::npos) << e.what();
  }
}
