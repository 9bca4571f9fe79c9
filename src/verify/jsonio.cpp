// Strict object reading for records and traces (see jsonio.h).
#include "verify/jsonio.h"

namespace maroon::verify {

Obj::Obj(const json::Value& v, std::string where, std::initializer_list<const char*> keys)
    : v_(v), where_(std::move(where)) {
  if (v.kind != json::Value::Kind::Object) throw fail("is not a JSON object");
  for (auto& f : v.fields) {
    bool known = false;
    for (const char* k : keys) known = known || f.key == k;
    if (!known) throw fail("has an unknown field \"" + f.key + "\"");
  }
  for (const char* k : keys)
    if (!v.find(k)) throw fail("has no field \"" + std::string(k) + "\"");
}

FormatError Obj::fail(const std::string& what) const { return FormatError(where_ + " " + what); }

std::string Obj::field(const char* key) const { return where_ + "." + key; }

const json::Value& Obj::get(const char* key, json::Value::Kind kind) const {
  const json::Value* x = v_.find(key);
  static const char* names[] = {"null", "a boolean", "a number", "a string", "an array", "an object"};
  if (x->kind != kind)
    throw FormatError(field(key) + " is " + names[static_cast<int>(x->kind)] + ", not " +
                      names[static_cast<int>(kind)]);
  return *x;
}

std::string Obj::str(const char* key) const { return get(key, json::Value::Kind::String).str; }

int64_t Obj::num(const char* key) const {
  uint64_t u;
  if (!get(key, json::Value::Kind::Number).as_u64(u) || u >= (uint64_t{1} << 62))
    throw FormatError(field(key) + " is not a non-negative integer below 2^62");
  return static_cast<int64_t>(u);
}

Digest Obj::digest(const char* key) const { return parse_digest(str(key), field(key)); }

std::string q(const std::string& s) { return json::quote(s, "[verify]"); }

}  // namespace maroon::verify
