// Command-line numbers for the benchmarks: the whole argument a decimal integer in [lo, hi], or
// the program stops with a message naming the argument and exit status 2 (never a shape error
// thrown from deep inside, or a silent 0 from atoi).
#pragma once
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "maroon/backend.h"

inline int64_t bench_int(const char* s, const char* what, int64_t lo, int64_t hi) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
    std::fprintf(stderr, "%s: '%s' is not an integer in [%lld, %lld]\n", what, s, static_cast<long long>(lo),
                 static_cast<long long>(hi));
    std::exit(2);
  }
  return v;
}

// The "[--threads T] [batch]" command line: sets the worker threads when given and returns the
// batch (`batch` when none is given).
inline int64_t threads_and_batch(int argc, char** argv, int64_t batch) {
  int a = 1;
  if (argc > 2 && !std::strcmp(argv[1], "--threads")) {
    maroon::set_num_threads(static_cast<int>(bench_int(argv[2], "--threads", 1, 1024)));
    a = 3;
  }
  return argc > a ? bench_int(argv[a], "batch", 1, int64_t{1} << 20) : batch;
}
