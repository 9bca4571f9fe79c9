// Checkpoints (verify::read_checkpoint, what `maroon verify`, bisect and resume read): any bytes
// are refused with FormatError or are a canonical checkpoint, one whose state serialises back to
// exactly the bytes read, so its commitment is the file's SHA-256 (docs/verify.md).
#include <cstdint>
#include <string_view>

#include "fuzz.h"
#include "maroon/verify.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace maroon;
  fuzz::TempInput in(data, size, ".safetensors");
  verify::State s;
  verify::Digest commitment{};
  if (!fuzz::accepts<FormatError>([&] { s = verify::read_checkpoint(in.path(), &commitment); })) return 0;
  MAROON_FUZZ_CHECK(commitment == verify::sha256(std::string_view(reinterpret_cast<const char*>(data), size)));
  MAROON_FUZZ_CHECK(verify::state_commitment(s) == commitment);
  return 0;
}
