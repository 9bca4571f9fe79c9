// The engine's counters (tinygrad's GlobalCounters): kernels run, their estimated operations and
// bytes, kernel time, and the bytes of live buffers. With MAROON_DEBUG >= 2 each executed kernel
// also prints one line, as tinygrad's DEBUG=2 does. Counters never change a result bit.
#pragma once
#include <cstdint>
#include <string>

namespace maroon {

struct Counters {
  int64_t kernel_count = 0;  // kernels executed (a fused chain is one kernel; views are none)
  int64_t global_ops = 0;    // estimated operations: elements computed per op in each kernel
  int64_t global_mem = 0;    // estimated bytes: each kernel's output plus the inputs it reads
  double time_sum_s = 0;     // wall time inside kernels, timed once counters() or reset_counters()
                             // has been called in the process, or while MAROON_DEBUG >= 2 (a
                             // program that never looks pays no clock reads; tinygrad times
                             // kernels only at DEBUG >= 2)
  int64_t mem_used = 0;      // bytes of buffers alive now (not reset)
};

Counters counters();
// Zeroes all but mem_used (tinygrad's GlobalCounters.reset()).
void reset_counters();

// Where the MAROON_DEBUG >= 2 lines go: nullptr (the default) prints them to stdout. The Python
// binding routes them to sys.stdout.
using KernelLogSink = void (*)(const std::string& line);
void set_kernel_log_sink(KernelLogSink sink);

}  // namespace maroon
