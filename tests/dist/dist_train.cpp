// maroon-dist-train: trains on synthetic data with the data-parallel step and prints, on rank 0,
// one line per configuration with the weights and loss-trace digests. tests/dist/mpi_test.sh runs
// it alone and under `mpirun -np R` and compares the lines: the rank count must not change a bit.
//
//   maroon-dist-train STEPS BATCH MODEL:SHARDS:THREADS...
// Launched by mpirun it uses MPI_COMM_WORLD; otherwise it is one process.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "maroon/backend.h"
#include "sharded_run.h"

using namespace maroon;

int main(int argc, char** argv) {
  try {
    if (argc < 4) throw Error("usage: maroon-dist-train STEPS BATCH MODEL:SHARDS:THREADS...");
    int steps = std::atoi(argv[1]);
    int64_t batch = std::atoll(argv[2]);
    std::unique_ptr<dist::Comm> comm =
        dist::launched_by_mpi() ? dist::mpi_world() : std::unique_ptr<dist::Comm>(new dist::SelfComm);
    mnisttest::Synthetic data(steps * batch + 8);
    for (int i = 3; i < argc; ++i) {
      std::string c = argv[i];
      size_t a = c.find(':'), b = c.rfind(':');
      if (a == std::string::npos || a == b) throw Error("a configuration is MODEL:SHARDS:THREADS, got '" + c + "'");
      std::string model = c.substr(0, a);
      int64_t shards = std::atoll(c.substr(a + 1, b - a - 1).c_str());
      set_num_threads(std::atoi(c.substr(b + 1).c_str()));
      disttest::ShardedRun r = disttest::train_sharded(model, shards, steps, batch, data, *comm);
      if (comm->rank() == 0)
        std::printf("%s shards %lld threads %d ranks %d: weights %s losses %s correct %lld\n", model.c_str(),
                    static_cast<long long>(shards), num_threads(), comm->size(), r.weights.c_str(),
                    models::loss_trace_digest(r.losses).c_str(), static_cast<long long>(r.correct));
      std::fflush(stdout);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "maroon-dist-train: error: %s\n", e.what());
    dist::abort_world(2);
  }
}
