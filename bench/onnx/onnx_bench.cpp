// Runs an ONNX model with Maroon on a .npy input, the protocol of tools/onnx/ort_run.js: one
// warm-up run (two with replays: the second captures them), REPS timed runs (loading excluded;
// each run binds the input, builds the graph and realizes every output), on THREADS CPU threads
// or the reference executor ('ref'). Writes the first output's bytes to OUT and prints
// {"ms": median ms per run, "cpu_ms": mean process CPU ms per run (all threads, spinning
// included; on a shared machine the fairer measure of one thread's work), "digest": inference
// digest}.
// The C++ twin of tools/onnx/maroon_run.py, so the benchmark measures the engine, not Python.
// Runs after the second replay the captured kernels (maroon/onnx.h). Options after OUT: `plain`
// turns replays off (Model::set_replay(false)), to time the graph building they save; `fused`
// runs the model's matmuls and convolutions fused (FusedScope: REDUCE_MULACC, docs/spec.md §14,
// other bits than the default's, as defined).
// usage: maroon-bench-onnx MODEL X.npy THREADS|ref REPS OUT [plain] [fused]
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "maroon/backend.h"
#include "maroon/digest.h"
#include "maroon/npy.h"
#include "maroon/onnx.h"

int main(int argc, char** argv) try {
  bool plain = false, fused = false, usage = argc < 6;
  for (int i = 6; i < argc; ++i) {
    const std::string o = argv[i];
    plain |= o == "plain";
    fused |= o == "fused";
    usage |= o != "plain" && o != "fused";
  }
  if (usage) {
    std::fprintf(stderr, "usage: %s MODEL X.npy THREADS|ref REPS OUT [plain] [fused]\n", argv[0]);
    return 2;
  }
  const maroon::FusedScope fused_scope(fused);
  const std::string threads = argv[3];
  const int reps = std::stoi(argv[4]);
  if (reps < 1) throw maroon::Error("REPS must be at least 1");
  if (threads == "ref") maroon::set_backend(maroon::Backend::Ref);
  else maroon::set_num_threads(std::stoi(threads));
  maroon::onnx::Model model = maroon::onnx::load(argv[1]);
  model.set_replay(!plain);
  const maroon::Tensor x = maroon::data::load_npy(argv[2]).tensor();
  auto run = [&] {
    std::vector<maroon::Tensor> ys = model.run(std::vector<maroon::Tensor>{x});
    for (maroon::Tensor& y : ys) y.realize();
    return ys;
  };
  std::vector<maroon::Tensor> ys = run();
  // The second run captures the kernels that later runs replay: a warm-up too, or the CPU mean
  // below would carry it (the wall median never did).
  if (!plain) ys = run();
  auto cpu_now = [] {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
  };
  // The process clock counts a thread's time when it leaves its core, or at a scheduler tick: a
  // pool worker spinning between regions (up to 1 ms, src/cpu/spin_policy.h) is counted late,
  // so per-run differences missed most of a second thread's time. The CPU figure is therefore
  // the whole loop's, read once the workers have given up spinning and blocked (a pause past
  // their spin before and after), over REPS: it includes the last run's trailing spin, at most
  // 1 ms per worker spread over the runs.
  auto settle = [] { std::this_thread::sleep_for(std::chrono::milliseconds(5)); };
  std::vector<double> ms;
  settle();
  const double c0 = cpu_now();
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    ys = run();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  settle();
  const double cpu_ms = (cpu_now() - c0) / reps;
  std::sort(ms.begin(), ms.end());
  const std::vector<uint8_t> bytes = ys.at(0).bytes();
  std::ofstream(argv[5], std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                 static_cast<std::streamsize>(bytes.size()));
  std::printf("{\"ms\": %.4f, \"cpu_ms\": %.4f, \"digest\": \"%s\"}\n", ms[ms.size() / 2], cpu_ms,
              maroon::tensors_digest(maroon::kInferenceTag, ys).c_str());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "maroon-bench-onnx: %s\n", e.what());
  return 1;
}
