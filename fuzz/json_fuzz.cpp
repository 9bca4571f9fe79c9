// The strict JSON reader (src/data/json.cpp): any bytes parse or are refused with FormatError;
// what parses has unique keys, and its strings quote back (json.dumps style) without error.
#include <cstdint>
#include <set>
#include <string_view>
#include <vector>

#include "data/json.h"
#include "fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace maroon;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  json::Value v;
  if (!fuzz::accepts<FormatError>([&] { v = json::parse(in, "[fuzz]"); })) return 0;
  std::vector<const json::Value*> todo{&v};
  while (!todo.empty()) {
    const json::Value* x = todo.back();
    todo.pop_back();
    if (x->kind == json::Value::Kind::String) json::quote(x->str, "[fuzz]");  // valid UTF-8 by now
    std::set<std::string> keys;
    for (auto& f : x->fields) {
      MAROON_FUZZ_CHECK(keys.insert(f.key).second);
      todo.push_back(&f.value);
    }
    for (auto& i : x->items) todo.push_back(&i);
  }
  return 0;
}
