// Shared by the libFuzzer harnesses (fuzz/*_fuzz.cpp): an input is either accepted or refused
// with the parser's documented error; any other exception, a failed check, a crash, a leak or
// undefined behaviour (the harnesses build with ASan+UBSan) is a finding. See docs/reliability.md.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "maroon/error.h"

// A property every accepted input must have; abort() makes libFuzzer save the input.
#define MAROON_FUZZ_CHECK(cond)                                                        \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);    \
      std::abort();                                                                    \
    }                                                                                  \
  } while (0)

namespace maroon::fuzz {

// Runs parse(); true if it returned, false if it threw E and expected(e) holds. Any other
// exception aborts: it is an error the parser does not document.
template <class E, class F, class Pred>
bool accepts(F parse, Pred expected) {
  try {
    parse();
    return true;
  } catch (const E& e) {
    if (expected(e)) return false;
    std::fprintf(stderr, "unexpected error: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "unexpected exception: %s\n", e.what());
  }
  std::abort();
}
template <class E, class F>
bool accepts(F parse) {
  return accepts<E>(parse, [](const E&) { return true; });
}

// For readers that take a path (they bound and check the file first): the input written to a
// per-process temporary file ending in `suffix`, removed when this goes out of scope.
class TempInput {
 public:
  TempInput(const uint8_t* data, size_t size, const std::string& suffix)
      : path_("/tmp/maroon-fuzz-" + std::to_string(::getpid()) + suffix) {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    MAROON_FUZZ_CHECK(f && std::fwrite(data, 1, size, f) == size && std::fclose(f) == 0);
  }
  ~TempInput() { std::remove(path_.c_str()); }
  TempInput(const TempInput&) = delete;
  TempInput& operator=(const TempInput&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace maroon::fuzz
