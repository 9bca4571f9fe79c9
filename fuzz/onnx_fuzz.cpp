// ONNX models (onnx::load_bytes, what `maroon onnx run`/`info` and maroon.onnx.load read; the
// protobuf itself is parsed by Debian's libprotobuf): any bytes are refused with OnnxError, naming
// the fault, or load into a model whose declared inputs and outputs are well formed. Loading
// converts every initializer and checks every node; running is left out (a valid tiny model can
// ask for any amount of work). Only built when the ONNX component is (fuzz/CMakeLists.txt).
#include <cstdint>
#include <optional>
#include <string_view>

#include "fuzz.h"
#include "maroon/onnx.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace maroon;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::optional<onnx::Model> m;
  if (!fuzz::accepts<onnx::OnnxError>([&] { m.emplace(onnx::load_bytes(in)); })) return 0;
  for (const auto* infos : {&m->inputs(), &m->outputs()})
    for (const onnx::ValueInfo& v : *infos) {
      MAROON_FUZZ_CHECK(v.dims.size() == v.dim_params.size());
      for (int64_t d : v.dims) MAROON_FUZZ_CHECK(d >= -1);
    }
  return 0;
}
