// Lagoon's cue (src/lagoon/noun.cpp): any bytes either cue to a noun, which jams and cues back to
// an equal noun, or are refused with the format error. A cued noun that is a ray converts back.
#include <cstdint>

#include "fuzz.h"
#include "lagoon/lagoon.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace maroon::lagoon;
  NounP n;
  auto format_error = [](const Error& e) { return e.code() == kEFormat; };
  if (!maroon::fuzz::accepts<Error>([&] { n = cue(data, size); }, format_error)) return 0;
  std::vector<uint8_t> b = jam(*n);
  NounP back = cue(b.data(), b.size());
  MAROON_FUZZ_CHECK(noun_equal(*n, *back));
  // Rays: [[shape bloq kind ~] data]. Most nouns are not one; those that are must round-trip.
  Ray r;
  if (!maroon::fuzz::accepts<Error>([&] { r = noun_to_ray(*n); }, [](const Error&) { return true; })) return 0;
  MAROON_FUZZ_CHECK(noun_equal(*ray_to_noun(r.ref()), *n));
  return 0;
}
