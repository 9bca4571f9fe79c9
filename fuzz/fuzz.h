// Shared by the libFuzzer harnesses (fuzz/*_fuzz.cpp): an input is either accepted or refused
// with the parser's documented error; any other exception, a failed check, a crash, a leak or
// undefined behaviour (the harnesses build with ASan+UBSan) is a finding. See docs/reliability.md.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <exception>

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

}  // namespace maroon::fuzz
