// Command-line numbers for the benchmarks: the whole argument a decimal integer in [lo, hi], or
// the program stops with a message naming the argument and exit status 2 (never a shape error
// thrown from deep inside, or a silent 0 from atoi).
#pragma once
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

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
