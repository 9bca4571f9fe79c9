// Run records (verify::read_record, what `maroon verify` and `maroon eval` read): any bytes parse
// into a record whose numbers are within the documented bounds, or are refused with FormatError.
// read_record takes a path (it bounds and checks the file first), so the input goes through a
// per-process temporary file.
#include <cstdint>

#include "fuzz.h"
#include "maroon/verify.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace maroon;
  fuzz::TempInput in(data, size, ".run.json");
  verify::RunRecord r;
  if (!fuzz::accepts<FormatError>([&] { r = verify::read_record(in.path()); })) return 0;
  MAROON_FUZZ_CHECK(r.steps >= 0 && r.steps < (int64_t{1} << 62));
  MAROON_FUZZ_CHECK(r.checkpoint_every >= 0 && r.checkpoint_every < (int64_t{1} << 62));
  MAROON_FUZZ_CHECK(static_cast<int64_t>(r.states.size()) <= r.steps + 1);
  for (size_t i = 0; i < r.checkpoints.size(); ++i)
    MAROON_FUZZ_CHECK(r.checkpoints[i].step < static_cast<int64_t>(r.states.size()) &&
                      (i == 0 || r.checkpoints[i - 1].step < r.checkpoints[i].step));
  MAROON_FUZZ_CHECK(r.losses.empty() || r.losses.size() + 1 == r.states.size());
  return 0;
}
