// .npy files (src/data/npy.cpp, what `maroon infer` reads): any bytes either parse into an array
// whose shape, dtype and data agree, and which writes back (npy_bytes) to a file that parses to
// the same array, or are refused with FormatError.
#include <cstdint>
#include <string_view>

#include "core/view.h"
#include "fuzz.h"
#include "maroon/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace maroon;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  data::NpyArray a;
  if (!fuzz::accepts<FormatError>([&] { a = data::parse_npy(in, "fuzz"); })) return 0;
  MAROON_FUZZ_CHECK(static_cast<uint64_t>(numel(a.shape)) * itemsize(a.dtype) == a.bytes.size());
  MAROON_FUZZ_CHECK(a.tensor().bytes() == a.bytes);
  data::NpyArray b = data::parse_npy(data::npy_bytes(a), "fuzz");
  MAROON_FUZZ_CHECK(b.dtype == a.dtype && b.shape == a.shape && b.bytes == a.bytes);
  return 0;
}
