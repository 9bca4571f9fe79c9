// Helpers for the Lagoon layer's tests: owning wrappers over the C ABI's rays and results, and
// a minimal JSON reader for the extracted vectors (tests/data/lagoon/vectors.jsonl).
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "float/u128.h"  // maroon::u128: unsigned __int128, or the portable U128 on 32-bit x86
#include "maroon/lagoon.h"

namespace lagoon_test {

// An owned ray, convertible to the C ABI's input struct.
struct ORay {
  std::vector<uint64_t> shape;
  uint32_t bloq = 5, kind = MAROON_LAGOON_I754;
  std::vector<uint8_t> data;  // atom bytes, pin included
  maroon_lagoon_ray c() const {
    maroon_lagoon_ray r;
    r.meta.shape = shape.data();
    r.meta.rank = uint32_t(shape.size());
    r.meta.bloq = bloq;
    r.meta.kind = kind;
    r.data = data.data();
    r.len = data.size();
    return r;
  }
  maroon_lagoon_meta meta() const { return c().meta; }
  size_t w() const { return size_t{1} << (bloq - 3); }
  uint64_t numel() const {
    uint64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }
  maroon::u128 at(uint64_t i) const {
    maroon::u128 v = 0;
    std::memcpy(&v, data.data() + i * w(), w());
    return v;
  }
  bool operator==(const ORay&) const = default;
};

// Builds a ray from element bits (bloq >= 3).
inline ORay make(std::vector<uint64_t> shape, uint32_t bloq, uint32_t kind,
                 const std::vector<maroon::u128>& elems) {
  ORay r{std::move(shape), bloq, kind, {}};
  size_t w = r.w();
  r.data.assign(elems.size() * w + 1, 0);
  for (size_t i = 0; i < elems.size(); ++i) std::memcpy(r.data.data() + i * w, &elems[i], w);
  r.data.back() = 1;
  return r;
}

// Takes ownership of a result (and frees the C allocation).
inline ORay take(maroon_lagoon_result& res) {
  ORay r;
  r.shape.assign(res.shape, res.shape + res.rank);
  r.bloq = res.bloq;
  r.kind = res.kind;
  r.data.assign(res.data, res.data + res.len);
  maroon_lagoon_result_free(&res);
  return r;
}

inline maroon_lagoon_atom atom(const std::vector<uint8_t>& b) { return maroon_lagoon_atom{b.data(), b.size()}; }
inline std::vector<uint8_t> le_bytes(maroon::u128 v, size_t w) {
  std::vector<uint8_t> b(w);
  std::memcpy(b.data(), &v, w);
  return b;
}

inline std::string hex(const std::vector<uint8_t>& atom) {
  static const char* d = "0123456789abcdef";
  size_t n = atom.size();
  while (n > 0 && atom[n - 1] == 0) --n;
  if (n == 0) return "0x0";
  std::string s = "0x";
  bool lead = true;
  for (size_t i = n; i-- > 0;) {
    for (int sh : {4, 0}) {
      int nib = (atom[i] >> sh) & 15;
      if (lead && nib == 0) continue;
      lead = false;
      s += d[nib];
    }
  }
  return s;
}

inline std::vector<uint8_t> from_hex(const std::string& h) {
  std::string s = h.substr(0, 2) == "0x" ? h.substr(2) : h;
  std::vector<uint8_t> out((s.size() + 1) / 2, 0);
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[s.size() - 1 - i];
    int v = c <= '9' ? c - '0' : c - 'a' + 10;
    out[i / 2] |= uint8_t(v << (4 * (i % 2)));
  }
  while (!out.empty() && out.back() == 0) out.pop_back();
  return out;
}

// ---- a minimal JSON value and reader (objects, arrays, strings, integers, booleans) ----
struct Json {
  enum class T { Null, Bool, Num, Str, Arr, Obj } t = T::Null;
  bool b = false;
  int64_t num = 0;
  std::string str;
  std::vector<Json> arr;
  std::map<std::string, Json> obj;
  const Json& operator[](const std::string& k) const {
    auto it = obj.find(k);
    if (it == obj.end()) throw std::runtime_error("missing key " + k);
    return it->second;
  }
  bool has(const std::string& k) const { return obj.count(k) > 0; }
};

inline Json parse_json(const std::string& s, size_t& i) {
  auto ws = [&] {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  };
  ws();
  Json v;
  if (s[i] == '{') {
    v.t = Json::T::Obj;
    ++i;
    ws();
    if (s[i] == '}') return ++i, v;
    for (;;) {
      Json key = parse_json(s, i);
      ws();
      ++i;  // ':'
      v.obj[key.str] = parse_json(s, i);
      ws();
      if (s[i++] == '}') return v;
    }
  }
  if (s[i] == '[') {
    v.t = Json::T::Arr;
    ++i;
    ws();
    if (s[i] == ']') return ++i, v;
    for (;;) {
      v.arr.push_back(parse_json(s, i));
      ws();
      if (s[i++] == ']') return v;
    }
  }
  if (s[i] == '"') {
    v.t = Json::T::Str;
    ++i;
    while (s[i] != '"') v.str += s[i++];
    ++i;
    return v;
  }
  if (s.compare(i, 4, "true") == 0) return i += 4, v.t = Json::T::Bool, v.b = true, v;
  if (s.compare(i, 5, "false") == 0) return i += 5, v.t = Json::T::Bool, v;
  if (s.compare(i, 4, "null") == 0) return i += 4, v;
  v.t = Json::T::Num;
  size_t j = i;
  while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '-')) ++j;
  v.num = std::stoll(s.substr(i, j - i));
  i = j;
  return v;
}

inline Json parse_json(const std::string& s) {
  size_t i = 0;
  return parse_json(s, i);
}

}  // namespace lagoon_test
