// Comm over Open MPI's MPI_COMM_WORLD (maroon/dist.h). MPI only moves bytes here: all-to-all,
// all-gather and broadcast of MPI_BYTE (their nonblocking forms, waited for by wait_for). No MPI
// reduction operator is ever used, since its order would be the library's choice.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "maroon/dist.h"

namespace maroon::dist {

namespace {

void finalize_at_exit() {
  int done = 0;
  MPI_Finalized(&done);
  if (!done) MPI_Finalize();
}

void init_once() {
  int ready = 0;
  MPI_Initialized(&ready);
  if (ready) return;
  // Maroon's worker threads never call MPI; only the thread that steps does.
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    throw Error("[dist] MPI_Init_thread failed");
  // Errors come back as return codes and become maroon::Error naming the call, instead of
  // MPI's default of aborting without a word about what Maroon was doing.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  std::atexit(finalize_at_exit);
}

void check(int rc, const char* call, int rank) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  throw Error("[dist] rank " + std::to_string(rank) + ": " + call + " failed: " + std::string(msg, len));
}

// Waits for a nonblocking collective: tests it in a short spin (most exchanges end within
// microseconds once every rank has arrived), then sleeps between tests, 20 us doubling to 1 ms.
// MPI_Wait spins at full speed until the slowest rank arrives; where ranks share cores (more
// ranks than cores, or other work on the machine) the waiting ranks took the cores from the ones
// they waited for: 40 MLP steps of 4 shards on the shared 2-core machine took 6.6-6.9 s with
// MPI_Wait and 5.2-5.8 s with this on 2 ranks, 8.7-9.6 s and 7.3-7.9 s on 4 (3 runs each,
// alternating).
void wait_for(MPI_Request& req, const char* call, int rank) {
  using clock = std::chrono::steady_clock;
  const clock::time_point start = clock::now();
  std::chrono::microseconds nap(20);
  for (;;) {
    int done = 0;
    check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), call, rank);
    if (done) return;
    if (clock::now() - start < std::chrono::microseconds(100)) continue;
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(1000));
  }
}

int as_count(size_t n, const char* what) {
  if (n > static_cast<size_t>(INT_MAX))
    throw Error(std::string("[dist] ") + what + " of " + std::to_string(n) +
                " bytes is more than one MPI call moves (2^31 - 1 bytes)");
  return static_cast<int>(n);
}

class MpiComm : public Comm {
 public:
  MpiComm() {
    init_once();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::vector<std::string> all_to_all(const std::vector<std::string>& send) override {
    if (send.size() != static_cast<size_t>(size_))
      throw Error("[dist] all_to_all needs one block per rank, got " + std::to_string(send.size()));
    std::vector<uint64_t> out_n(send.size()), in_n(send.size());
    for (size_t q = 0; q < send.size(); ++q) out_n[q] = send[q].size();
    MPI_Request req;
    check(MPI_Ialltoall(out_n.data(), 1, MPI_UINT64_T, in_n.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD, &req),
          "MPI_Ialltoall", rank_);
    wait_for(req, "MPI_Ialltoall", rank_);
    std::vector<int> sc(send.size()), sd(send.size()), rc(send.size()), rd(send.size());
    std::string sbuf, rbuf;
    size_t so = 0, ro = 0;
    for (size_t q = 0; q < send.size(); ++q) {
      sc[q] = as_count(out_n[q], "a block"), sd[q] = as_count(so, "a message"), so += out_n[q];
      rc[q] = as_count(in_n[q], "a block"), rd[q] = as_count(ro, "a message"), ro += in_n[q];
      sbuf += send[q];
    }
    rbuf.resize(ro);
    check(MPI_Ialltoallv(sbuf.data(), sc.data(), sd.data(), MPI_BYTE, rbuf.data(), rc.data(), rd.data(), MPI_BYTE,
                         MPI_COMM_WORLD, &req),
          "MPI_Ialltoallv", rank_);
    wait_for(req, "MPI_Ialltoallv", rank_);
    std::vector<std::string> out(send.size());
    for (size_t q = 0; q < send.size(); ++q) out[q] = rbuf.substr(static_cast<size_t>(rd[q]), in_n[q]);
    return out;
  }

  std::vector<std::string> all_gather(const std::string& mine) override {
    uint64_t n = mine.size();
    std::vector<uint64_t> ns(static_cast<size_t>(size_));
    MPI_Request req;
    check(MPI_Iallgather(&n, 1, MPI_UINT64_T, ns.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD, &req), "MPI_Iallgather",
          rank_);
    wait_for(req, "MPI_Iallgather", rank_);
    std::vector<int> counts(ns.size()), displs(ns.size());
    size_t total = 0;
    for (size_t q = 0; q < ns.size(); ++q) {
      counts[q] = as_count(ns[q], "a block"), displs[q] = as_count(total, "a message");
      total += ns[q];
    }
    std::string all(total, '\0');
    check(MPI_Iallgatherv(mine.data(), as_count(mine.size(), "a block"), MPI_BYTE, all.data(), counts.data(),
                          displs.data(), MPI_BYTE, MPI_COMM_WORLD, &req),
          "MPI_Iallgatherv", rank_);
    wait_for(req, "MPI_Iallgatherv", rank_);
    std::vector<std::string> out(ns.size());
    for (size_t q = 0; q < ns.size(); ++q) out[q] = all.substr(static_cast<size_t>(displs[q]), ns[q]);
    return out;
  }

  std::string broadcast(const std::string& bytes, int root) override {
    std::string buf = bytes;
    MPI_Request req;
    check(MPI_Ibcast(buf.data(), as_count(buf.size(), "a broadcast"), MPI_BYTE, root, MPI_COMM_WORLD, &req),
          "MPI_Ibcast", rank_);
    wait_for(req, "MPI_Ibcast", rank_);
    return buf;
  }

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace

bool have_mpi() { return true; }

std::unique_ptr<Comm> mpi_world() { return std::make_unique<MpiComm>(); }

void abort_world(int code) {
  int ready = 0, done = 0;
  MPI_Initialized(&ready);
  MPI_Finalized(&done);
  std::fflush(stdout);
  std::fflush(stderr);
  if (ready && !done) MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

}  // namespace maroon::dist
