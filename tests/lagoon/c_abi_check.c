/* Compiled as C (not C++): the header is plain C, and a C caller can build a ray, call an arm,
   read the status and free the result. Called from c_abi_test.cpp. */
#include <string.h>

#include "maroon/lagoon.h"

int maroon_lagoon_c_smoke(void) {
  /* [1 2] + [3 4] in f32, bare Lagoon rounding: [4 6]. */
  static const uint8_t a[] = {0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 1};
  static const uint8_t b[] = {0, 0, 0x40, 0x40, 0, 0, 0x80, 0x40, 1};
  static const uint8_t want[] = {0, 0, 0x80, 0x40, 0, 0, 0xc0, 0x40, 1};
  uint64_t shape[1] = {2};
  maroon_lagoon_ray ra = {{shape, 1, 5, MAROON_LAGOON_I754}, a, sizeof a};
  maroon_lagoon_ray rb = {{shape, 1, 5, MAROON_LAGOON_I754}, b, sizeof b};
  maroon_lagoon_result out;
  maroon_lagoon_error err;
  int ok;
  if (maroon_lagoon_add(&ra, &rb, MAROON_LAGOON_RND_DEFAULT, &out, &err) != MAROON_LAGOON_OK) return 1;
  ok = out.len == sizeof want && memcmp(out.data, want, sizeof want) == 0 && out.rank == 1 && out.shape[0] == 2;
  {
    maroon_lagoon_ray chained = maroon_lagoon_as_ray(&out);
    maroon_lagoon_result sum;
    if (maroon_lagoon_cumsum(&chained, 'n', &sum, &err) != MAROON_LAGOON_OK) ok = 0;
    else {
      ok = ok && sum.len == 5 && sum.data[2] == 0x20 && sum.data[3] == 0x41; /* 10.0f */
      maroon_lagoon_result_free(&sum);
    }
  }
  maroon_lagoon_result_free(&out);
  /* An error comes back as a code and a message, not an exception. */
  if (maroon_lagoon_add(&ra, NULL, 'z', &out, &err) != MAROON_LAGOON_EARG || err.code != MAROON_LAGOON_EARG ||
      strlen(err.message) == 0)
    ok = 0;
  return ok ? 0 : 2;
}
