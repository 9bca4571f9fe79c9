// safetensors (src/nn/safetensors.cpp): any bytes either load, and then save and load again to
// the same tensors, or are refused with FormatError.
#include <cstdint>
#include <string_view>

#include "fuzz.h"
#include "maroon/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace maroon;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  nn::StateDict sd;
  if (!fuzz::accepts<FormatError>([&] { sd = nn::safe_load_bytes(in); })) return 0;
  nn::StateDict again = nn::safe_load_bytes(nn::safe_save_bytes(sd));
  MAROON_FUZZ_CHECK(again.size() == sd.size());
  for (size_t i = 0; i < sd.size(); ++i) {
    MAROON_FUZZ_CHECK(again[i].first == sd[i].first);
    MAROON_FUZZ_CHECK(again[i].second.shape() == sd[i].second.shape());
    MAROON_FUZZ_CHECK(again[i].second.dtype() == sd[i].second.dtype());
    MAROON_FUZZ_CHECK(again[i].second.bytes() == sd[i].second.bytes());
  }
  return 0;
}
