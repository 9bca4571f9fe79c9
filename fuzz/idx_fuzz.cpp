// IDX files (src/data/idx.cpp): any bytes either parse into an array whose shape, dtype and data
// agree, or are refused with FormatError. Nothing else may happen.
#include <cstdint>
#include <string_view>

#include "core/view.h"
#include "fuzz.h"
#include "maroon/idx.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  maroon::data::IdxArray a;
  if (!maroon::fuzz::accepts<maroon::FormatError>([&] { a = maroon::data::parse_idx(in, "fuzz"); })) return 0;
  MAROON_FUZZ_CHECK(static_cast<uint64_t>(maroon::numel(a.shape)) * maroon::itemsize(a.dtype) == a.bytes.size());
  MAROON_FUZZ_CHECK(a.tensor().bytes() == a.bytes);  // little-endian, row-major
  return 0;
}
