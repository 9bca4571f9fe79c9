// A small strict JSON reader (RFC 8259) and Python-compatible writing helpers, for safetensors
// headers and run records. Internal: not part of the public API.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace maroon::json {

struct Field;

struct Value {
  enum class Kind { Null, Bool, Number, String, Array, Object } kind = Kind::Null;
  bool b = false;
  std::string str;                                    // String: the decoded UTF-8 text; Number: the literal as written
  std::vector<Value> items;                           // Array
  std::vector<Field> fields;                          // Object, in file order (keys unique)

  const Value* find(std::string_view key) const;
  // A Number written as plain digits (no sign, fraction or exponent) that fits in uint64;
  // false otherwise.
  bool as_u64(uint64_t& out) const;
};

// A member of an object. Not a std::pair: a pair of an incomplete Value is undefined (clang
// rejects it), a vector of an incomplete struct is allowed.
struct Field {
  std::string key;
  Value value;
};

// Parses one JSON document; trailing whitespace is allowed, anything else is not. Duplicate
// object keys, invalid UTF-8, raw control characters and nesting deeper than 64 are rejected.
// Throws maroon::FormatError whose message starts with `who` (e.g. "[safe_load]").
Value parse(std::string_view text, const std::string& who);

// A string as Python's json.dumps writes it (ensure_ascii): quotes, \" \\ \b \f \n \r \t, other
// control characters and every non-ASCII code point as \uXXXX (lowercase hex, surrogate pairs).
// Throws maroon::Error for invalid UTF-8.
std::string quote(std::string_view utf8, const std::string& who);

}  // namespace maroon::json
