// Traces (verify::read_trace, what `maroon trace --compare` and bisect read): any bytes are
// refused with FormatError or parse into a trace that writes out and reads back to the same
// JSON (every node index in range, every digest 64 hex digits).
#include <cstdint>
#include <string>

#include "fuzz.h"
#include "maroon/verify.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace maroon;
  verify::Trace t;
  {
    fuzz::TempInput in(data, size, ".trace.json");
    if (!fuzz::accepts<FormatError>([&] { t = verify::read_trace(in.path()); })) return 0;
  }
  for (const verify::TraceState& s : t.state_out)
    MAROON_FUZZ_CHECK(s.node >= -1 && s.node < static_cast<int64_t>(t.nodes.size()));
  const std::string json = verify::trace_json(t);
  fuzz::TempInput again(reinterpret_cast<const uint8_t*>(json.data()), json.size(), ".again.trace.json");
  MAROON_FUZZ_CHECK(verify::trace_json(verify::read_trace(again.path())) == json);
  return 0;
}
