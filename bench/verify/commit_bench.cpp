// The cost of committing the full state (SHA-256 of its canonical serialisation) after every step
// of the MNIST MLP (784-512-512-10, Adam, batch 64; or the CNN), against the same steps without it,
// in one process: blocks of steps alternate between a plain loop and loops calling Run::commit
// (background hashing; inline hashing; background hashing with RunOptions::evict off), each
// committed block waiting for its last commitment, so no hashing spills into the next block.
// Prints per-step medians and the ratios,
// in wall time, in the main thread's CPU time (what the step itself pays) and in the process's
// CPU time (what the machine pays), then where one inline commit's time goes.
//
// Why three clocks: on a machine whose cores are all busy (other processes; or the step's own
// threads), a background hasher's CPU time is taken from the step, so the wall ratio is the
// process CPU ratio; with a core the step leaves free it is the main thread's.
//   maroon-bench-commit [--threads T] [--rounds R] [--block B] [--model mlp|cnn] [--batch N]
//                       [--neighbours 1] [--only K]
// It also prints a cache line's round trip between two threads, before and after the rounds: on
// a VM the hasher's vCPU may or may not share a cache with the loop's, which changes the figures
// (the "setting" line says which, or that it changed during the run); and how much of a hash a
// step the background hasher did beside the steps (under 0.8: it had no free core, so the run
// measured no steady state: another process held the second vCPU).
// --only K runs only the K-th kind of block (0 plain, 1 background, 2 inline, 3 background
// without eviction), for a profiler (perf record), and prints no table.
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "maroon/backend.h"
#include "maroon/models.h"
#include "maroon/verify.h"
#include "verify/digest.h"
#include "verify/state.h"

using namespace maroon;

namespace {

struct Loop {
  std::unique_ptr<models::MnistModel> model;
  models::TrainStep train;
  verify::EpochSampler sampler;
  std::vector<uint8_t> images;
  int64_t batch;
  Loop(const std::vector<uint8_t>& im, const std::string& kind, int64_t b)
      : model(models::make_model(kind, 0)), train(*model, 1e-3), sampler(60000, b, 0), images(im), batch(b) {}
  void step() {
    std::vector<uint32_t> idx = sampler.next();
    std::vector<uint8_t> x(idx.size() * 784), y(idx.size());
    for (size_t i = 0; i < idx.size(); ++i) {
      std::memcpy(&x[i * 784], &images[(idx[i] % 1000) * 784ull], 784);
      y[i] = static_cast<uint8_t>(idx[i] % 10);
    }
    train(models::images_to_input(x.data(), batch), models::labels_to_tensor(y.data(), batch));
  }
  verify::StateBinding binding() { return {model->state_dict(), &train.optimizer(), &sampler, true, {}}; }
};

double clock_s(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// This thread's page faults so far (minor: a fresh page's first touch; Linux's RUSAGE_THREAD).
double thread_faults() {
#ifdef RUSAGE_THREAD
  rusage u;
  if (getrusage(RUSAGE_THREAD, &u) == 0) return static_cast<double>(u.ru_minflt + u.ru_majflt);
#endif
  return 0;
}

// Wall, this thread's CPU, the process's CPU (every thread: the pool's, the hasher's) and this
// thread's page faults.
struct Clocks {
  double v[4];
  static Clocks now() {
    return {{clock_s(CLOCK_MONOTONIC), clock_s(CLOCK_THREAD_CPUTIME_ID), clock_s(CLOCK_PROCESS_CPUTIME_ID),
             thread_faults()}};
  }
};

// The 1-minute load average (Linux; "?" elsewhere): whether other work shared the cores.
std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string l;
  return f >> l ? l : "?";
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A cache line's round trip between this thread and another (one atomic bounced N times; median
// of 5 tries), in ns: whether the hasher's core shares a cache with the loop's. On the 2-vCPU VM
// the figures come from it was 330-480 ns at some times (no shared cache: eviction pays) and
// 110-145 ns at others (the vCPUs had moved onto one cache: eviction changes little).
double line_round_trip_ns() {
  std::vector<double> tries;
  for (int t = 0; t < 5; ++t) {
    constexpr int kN = 4000;
    std::atomic<int> x{0};
    std::atomic<bool> give_up{false};  // the other thread is not running (a busy core): no figure
    std::thread other([&] {
      for (int i = 0; i < kN && !give_up; ++i) {
        while (x.load(std::memory_order_acquire) != 2 * i + 1 && !give_up) {
        }
        x.store(2 * i + 2, std::memory_order_release);
      }
    });
    const double a = clock_s(CLOCK_MONOTONIC);
    for (int i = 0; i < kN && !give_up; ++i) {
      x.store(2 * i + 1, std::memory_order_release);
      while (x.load(std::memory_order_acquire) != 2 * i + 2 && !give_up)
        if (clock_s(CLOCK_MONOTONIC) - a > 0.05) give_up = true;
    }
    tries.push_back(give_up ? 1e9 : (clock_s(CLOCK_MONOTONIC) - a) / kN * 1e9);
    other.join();
  }
  return median(tries);
}

// Which machine a run measured, from the round trips before and after it: the vCPUs on one
// cache ("near": committing costs ~nothing), on caches of their own ("far": the case
// docs/verify.md §11 is about), or moved during the run (its ratios mix the two).
std::string setting(double before, double after) {
  auto kind = [](double ns) { return ns >= 1e8 ? 0 : ns < 200 ? 1 : ns > 300 ? 2 : 3; };
  const char* names[] = {"unknown (no free core)", "near (one shared cache)", "far (no shared cache)",
                         "unclear (200-300 ns)"};
  const int a = kind(before), b = kind(after);
  if (a == b) return std::string("setting: ") + names[a];
  return std::string("setting: changed during the run (") + names[a] + " before, " + names[b] +
         " after): its ratios mix both";
}

// Per-step times of one loop, one entry per round and clock.
struct Series {
  std::vector<double> t[4];
  void add(const Clocks& a, const Clocks& b, int steps) {
    for (int c = 0; c < 4; ++c) t[c].push_back((b.v[c] - a.v[c]) / steps);
  }
  double med(int c) const { return median(t[c]); }
};

// Whether the background hasher hashed beside the step during the blocks: the CPU it added to the
// process a step (beyond the plain step's other threads) against what hashing inline adds to the
// loop's thread. Well under 1 means it had no free core and hashed in the block's wait instead:
// the steady-state rows then measure a step with nothing beside it (seen when another process
// held the second vCPU under SCHED_FIFO).
std::string hasher_beside(const Series& plain, const Series& steady, const Series& inl) {
  const double added = (steady.med(2) - steady.med(1)) - (plain.med(2) - plain.med(1));
  const double hash = inl.med(1) - plain.med(1);
  char line[200];
  const double share = hash > 0 ? added / hash : 0;
  std::snprintf(line, sizeof line, "the hasher's CPU beside the steady-state steps: %.2f of an inline hash a step%s",
                share, share < 0.8 ? " (UNDER 0.8: it had no free core; the steady-state rows are not the steady state)" : "");
  return line;
}

void print_row(const char* name, const Series& s, const Series& plain) {
  std::printf("%-32s", name);
  for (int c = 0; c < 3; ++c) {
    std::printf(" %8.2f ms", 1e3 * s.med(c));
    if (&s != &plain) std::printf(" (%.3fx)", s.med(c) / plain.med(c));
    else std::printf("         ");
  }
  std::printf(" %8.1f\n", s.med(3));
}

// What a busy neighbour core costs the step, whatever it does: a thread that hashes, without a
// pause, either one 64-byte block again and again (the SHA instructions alone, no memory traffic)
// or its own 8 MB (the background hasher's memory traffic, on memory the step never touches).
// Compared with the plain step, this separates what any concurrent work costs on this machine
// (shared core resources, caches, clocks) from what committing itself adds.
class Neighbour {
 public:
  explicit Neighbour(size_t bytes) : data_(bytes, 0x5a) {
    worker_ = std::thread([this] {
      while (!stop_.load(std::memory_order_relaxed)) {
        verify::Hasher h;
        h.update(data_.data(), data_.size());
        h.finish();
      }
    });
  }
  ~Neighbour() {
    stop_ = true;
    worker_.join();
  }

 private:
  std::vector<uint8_t> data_;
  std::atomic<bool> stop_{false};
  std::thread worker_;
};

// Where an inline commit's time goes, on this thread: capturing the state (handles, scalars),
// freezing it (the safetensors header; realizing, a no-op after a step), hashing, and writing it
// as a checkpoint. Medians over `n` steps of `loop`.
void breakdown(Loop& loop, int n, const std::string& dir) {
  std::vector<double> cap, frz, hash, write;
  size_t bytes = 0, nodes = 0, pieces = 0;
  for (int i = 0; i < n; ++i) {
    loop.step();
    double t0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
    verify::State s = verify::capture(loop.binding(), i, verify::Digest{});
    double t1 = clock_s(CLOCK_THREAD_CPUTIME_ID);
    verify::Frozen f = verify::freeze(s);
    double t2 = clock_s(CLOCK_THREAD_CPUTIME_ID);
    verify::commitment_of(f);
    double t3 = clock_s(CLOCK_THREAD_CPUTIME_ID);
    verify::write_frozen(f, dir + "/breakdown.safetensors");
    double t4 = clock_s(CLOCK_THREAD_CPUTIME_ID);
    cap.push_back(t1 - t0), frz.push_back(t2 - t1), hash.push_back(t3 - t2), write.push_back(t4 - t3);
    bytes = f.header.size(), nodes = f.nodes.size(), pieces = 0;
    for (const NodePtr& nd : f.nodes)
      verify::for_each_piece(*nd, [&](const uint8_t*, size_t k) { bytes += k, ++pieces; });
  }
  std::printf("one inline commit, this thread's CPU (median of %d): capture %.3f ms, freeze (header) %.3f ms, "
              "SHA-256 of %.2f MB %.2f ms (%.2f GB/s), checkpoint write %.2f ms; %zu tensors in %zu pieces "
              "(%s)\n",
              n, 1e3 * median(cap), 1e3 * median(frz), static_cast<double>(bytes) / 1e6, 1e3 * median(hash),
              static_cast<double>(bytes) / median(hash) / 1e9, 1e3 * median(write), nodes, pieces,
              pieces <= nodes ? "every buffer hashed in place, no copy" : "some gathered row by row");
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 7, block = 20, only = -1;
  bool neighbours = false;
  int64_t batch = 64;
  std::string kind = "mlp";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--threads")) set_num_threads(std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--block")) block = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--model")) kind = argv[i + 1];
    if (!std::strcmp(argv[i], "--batch")) batch = std::atoll(argv[i + 1]);
    if (!std::strcmp(argv[i], "--neighbours")) neighbours = std::atoi(argv[i + 1]) != 0;
    if (!std::strcmp(argv[i], "--only")) only = std::atoi(argv[i + 1]);
  }
  std::vector<uint8_t> images(1000 * 784);
  for (size_t i = 0; i < images.size(); ++i) images[i] = static_cast<uint8_t>(i * 2654435761u >> 24);
  std::string dir = std::filesystem::temp_directory_path() / ("maroon-bench-commit-" + std::to_string(::getpid()));
  const int64_t total = int64_t{rounds} * block + 1;
  Loop plain(images, kind, batch), bg(images, kind, batch), inl(images, kind, batch), kept(images, kind, batch);
  verify::Job job{"bench-mnist-" + kind, {{"batch", std::to_string(batch)}}, {}, std::string(64, '0')};
  verify::RunOptions obg{dir + "/bg.run.json", total, 0, "bench", "", "", true};
  verify::RunOptions oin{dir + "/inline.run.json", total, 0, "bench", "", "", false};
  verify::RunOptions okept{dir + "/kept.run.json", total, 0, "bench", "", "", true, false};  // no eviction
  verify::Run rbg(job, bg.binding(), obg), rin(job, inl.binding(), oin), rkept(job, kept.binding(), okept);
  rbg.begin(), rin.begin(), rkept.begin();
  plain.step(), bg.step(), rbg.commit(), inl.step(), rin.commit(), kept.step(), rkept.commit();  // warm-up
  size_t state_bytes = 0;
  for (auto& [k, t] : verify::capture(bg.binding(), 0, verify::Digest{})) state_bytes += static_cast<size_t>(t.nbytes());
  Series s_plain, s_bg, s_steady, s_inline, s_kept, s_spin, s_stream;
  std::vector<double> drain, commit_call;  // the background loop's Run::commit(), this thread's CPU a step
  // A background block: its steps, then the wait for its last commitment (so no hashing spills
  // into the next block), timed apart.
  auto background_block = [&](Loop& loop, verify::Run& run, Series& with_wait, Series& steady) {
    Clocks a = Clocks::now();
    double in_commit = 0;
    for (int i = 0; i < block; ++i) {
      loop.step();
      const double c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
      run.commit();
      in_commit += clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
    }
    Clocks w = Clocks::now();
    if (&run == &rbg) commit_call.push_back(in_commit / block);
    run.commitments();
    Clocks b = Clocks::now();
    with_wait.add(a, b, block), steady.add(a, w, block);
    return b.v[0] - w.v[0];
  };
  Series kept_with_wait;
  // The blocks of one round, run in an order rotated by one each round, so that no loop always
  // follows the same other loop (each evicts the caches of the one before it).
  auto plain_block = [&](Series& s) {
    Clocks a = Clocks::now();
    for (int i = 0; i < block; ++i) plain.step();
    s.add(a, Clocks::now(), block);
  };
  std::vector<std::function<void()>> blocks = {
      [&] { plain_block(s_plain); },
      [&] { drain.push_back(background_block(bg, rbg, s_bg, s_steady)); },
      [&] {
        Clocks a = Clocks::now();
        for (int i = 0; i < block; ++i) inl.step(), rin.commit();
        s_inline.add(a, Clocks::now(), block);
      },
      [&] { background_block(kept, rkept, kept_with_wait, s_kept); }};
  if (neighbours) {
    blocks.push_back([&] { Neighbour n(64); plain_block(s_spin); });
    blocks.push_back([&] { Neighbour n(state_bytes); plain_block(s_stream); });
  }
  if (only >= 0) {  // one loop's blocks alone, for a profiler: the printed ratios are then empty
    for (int r = 0; r < rounds; ++r) blocks.at(static_cast<size_t>(only))();
    std::printf("ran %d blocks of loop %d only\n", rounds, only);
    return 0;
  }
  const double trip_before = line_round_trip_ns();
  for (int r = 0; r < rounds; ++r)
    for (size_t k = 0; k < blocks.size(); ++k) blocks[(k + static_cast<size_t>(r)) % blocks.size()]();
  std::printf("MNIST %s step, batch %lld, state %.2f MB, %d thread(s), %s, %d rounds of %d steps each (medians), "
              "load average %s\n",
              kind.c_str(), static_cast<long long>(batch), static_cast<double>(state_bytes) / 1e6, num_threads(),
              simd_target().c_str(), rounds, block, load_average().c_str());
  auto trip = [](double ns) { return ns < 1e8 ? std::to_string(static_cast<int>(ns)) + " ns" : std::string("n/a"); };
  const double trip_after = line_round_trip_ns();
  std::printf("a cache line's round trip to another thread (n/a: no free core): %s before the rounds, %s after\n",
              trip(trip_before).c_str(), trip(trip_after).c_str());
  std::printf("%s\n", setting(trip_before, trip_after).c_str());
  std::printf("%-32s %-20s %-20s %-20s %s\n", "per step (ratio to plain)", "   wall", "   main thread CPU", "   process CPU",
              "main thread page faults");
  print_row("plain step", s_plain, s_plain);
  print_row("step + commit (background hash)", s_bg, s_plain);
  print_row("  the same, before the block's wait", s_steady, s_plain);
  print_row("  the same, lines not evicted", s_kept, s_plain);
  print_row("step + commit (inline hash)", s_inline, s_plain);
  std::printf("%s\n", hasher_beside(s_plain, s_steady, s_inline).c_str());
  if (neighbours) {
    print_row("plain, a core hashing 64 B", s_spin, s_plain);
    print_row("plain, a core hashing 8 MB", s_stream, s_plain);
  }
  std::printf("the background block's wait for its last commitment: %.2f ms (median), %.3f ms per step of a %d-step block; "
              "a run waits so once, in finish()\n",
              1e3 * median(drain), 1e3 * median(drain) / block, block);
  std::printf("Run::commit() itself (background hash) on the loop's thread: %.3f ms CPU a step (median of the "
              "blocks): capturing the state and handing it over\n",
              1e3 * median(commit_call));
  breakdown(plain, std::max(3, block / 2), dir);
  std::filesystem::remove_all(dir);
  return 0;
}
