// Internal to src/verify: strict reading of the JSON objects in records and traces (every field
// present with its type, no unknown field), with errors that name the file and the field.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>

#include "data/json.h"
#include "maroon/error.h"
#include "maroon/verify.h"

namespace maroon::verify {

class Obj {
 public:
  // `where`: the file and the path to this object, e.g. "'a.run.json': job".
  Obj(const json::Value& v, std::string where, std::initializer_list<const char*> keys);
  const json::Value& get(const char* key, json::Value::Kind kind) const;
  std::string str(const char* key) const;
  int64_t num(const char* key) const;  // a non-negative integer below 2^62
  Digest digest(const char* key) const;
  const json::Value& arr(const char* key) const { return get(key, json::Value::Kind::Array); }
  const json::Value& obj(const char* key) const { return get(key, json::Value::Kind::Object); }
  FormatError fail(const std::string& what) const;
  std::string field(const char* key) const;  // "<where>.<key>"

 private:
  const json::Value& v_;
  std::string where_;
};

// A JSON string as json.dumps writes it (ensure_ascii).
std::string q(const std::string& s);

}  // namespace maroon::verify
