// A small pool. Work is always cut into the same tasks whatever the thread count, and each task
// writes its own outputs, so the thread count can never change a result.
#pragma once
#include <cstdint>
#include <functional>

#include "maroon/round.h"

namespace maroon::cpu {

// Runs fn(task) for task in [0, n) on up to num_threads() threads (the caller included). Every
// worker runs with IEEE defaults (no flush-to-zero) and rounding mode `r`.
void parallel_for(int64_t n, const std::function<void(int64_t)>& fn, Round r);

// Sets the hardware rounding mode of the calling thread.
void set_hw_round(Round r);

// Work the pool's first worker does between regions, instead of spinning idle: `piece()` does a
// short piece of it (tens of microseconds: a region waits that long at most for the worker) and
// says whether more is left, and whether it is urgent: then the worker runs pieces before it
// joins regions (the caller runs those alone meanwhile). Why: Run (src/verify) hashes each
// committed state while training goes on; on a machine with no core beyond the pool's, a hashing
// thread of its own preempts a worker inside a region and the caller waits for it
// (docs/performance/threads.md). Returns false and installs nothing when
// the pool has no worker (num_threads() is 1) or another piece function is installed.
enum class IdleWork { kNone, kMore, kUrgent };
bool set_idle_work(std::function<IdleWork()> piece);
// Removes it; returns once no worker runs a piece of it.
void clear_idle_work();
// There is new idle work: a worker that found none, or sleeps, takes it up.
void idle_work_ready();

// Holds `delta` more (or, negative, fewer) of the pool's threads out of parallel regions; the
// caller always runs, so a region runs on max(1, num_threads() - reserved) threads. Run
// (src/verify) holds one while its hashing thread runs beside a busy process: there the two
// compute threads and the hasher are three runnable threads on two cores, the OS preempts a
// worker inside a region, the caller waits for it, and the two-thread epoch was slower than the
// one-thread one (docs/performance/threads.md). Which thread runs a task never changes a bit.
void reserve_threads(int delta);
// Tests only: the threads held out now.
int reserved_threads();

// Tests only: how many times a pool worker went on spinning past the short spin (spin_policy.h)
// since the process started.
int64_t long_spins();

}  // namespace maroon::cpu
