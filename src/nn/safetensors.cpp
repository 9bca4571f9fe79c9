// safetensors save and load (tinygrad's nn.state.safe_save / safe_load), validated as the format
// requires: a file either loads whole or throws FormatError naming what is wrong.
#include "maroon/safetensors.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>

#include "core/checked.h"
#include "data/json.h"
#include "maroon/sha256.h"
#include "io/files.h"

namespace maroon::nn {

namespace {

// safetensors' limit (huggingface/safetensors MAX_HEADER_SIZE).
constexpr uint64_t kMaxHeader = 100'000'000;

struct DTypeName {
  DType dtype;
  const char* name;
};
constexpr DTypeName kNames[] = {{DType::Bool, "BOOL"},   {DType::Int8, "I8"},       {DType::UInt8, "U8"},
                                {DType::Int16, "I16"},   {DType::UInt16, "U16"},    {DType::Int32, "I32"},
                                {DType::UInt32, "U32"},  {DType::Int64, "I64"},     {DType::UInt64, "U64"},
                                {DType::Float16, "F16"}, {DType::BFloat16, "BF16"}, {DType::Float32, "F32"},
                                {DType::Float64, "F64"}};

const char* safe_name(DType d) {
  for (auto& n : kNames)
    if (n.dtype == d) return n.name;
  throw DTypeError("[safe_save] dtype " + std::string(dtype_name(d)) + " has no safetensors name");
}

struct Entry {
  std::string name;
  DType dtype;
  Shape shape;
  uint64_t begin, end;
};

struct Parsed {
  std::vector<Entry> entries;  // in file-offset order
  std::map<std::string, std::string> metadata;
  std::string_view data;
};

Parsed parse(std::string_view bytes, const std::string& who) {
  auto fail = [&](const std::string& what) -> FormatError { return FormatError(who + " " + what); };
  if (bytes.size() < 8)
    throw fail("file of " + std::to_string(bytes.size()) + " bytes is too short for the 8-byte header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | static_cast<uint8_t>(bytes[i]);
  if (n > kMaxHeader) throw fail("header length " + std::to_string(n) + " exceeds the limit of 100000000 bytes");
  if (n > bytes.size() - 8)
    throw fail("header length " + std::to_string(n) + " runs past the end of the " + std::to_string(bytes.size()) +
               "-byte file");
  std::string_view header = bytes.substr(8, n);
  if (header.empty() || header[0] != '{') throw fail("header does not start with '{'");
  json::Value root = json::parse(header, who);
  if (root.kind != json::Value::Kind::Object) throw fail("header is not a JSON object");

  Parsed p;
  p.data = bytes.substr(8 + n);
  for (auto& [name, v] : root.fields) {
    if (name == "__metadata__") {
      if (v.kind != json::Value::Kind::Object) throw fail("__metadata__ is not an object");
      for (auto& [k, s] : v.fields) {
        if (s.kind != json::Value::Kind::String) throw fail("__metadata__ value for \"" + k + "\" is not a string");
        p.metadata[k] = s.str;
      }
      continue;
    }
    std::string t = "tensor \"" + name + "\"";
    if (v.kind != json::Value::Kind::Object) throw fail(t + " is not an object");
    for (auto& [k, x] : v.fields)
      if (k != "dtype" && k != "shape" && k != "data_offsets") throw fail(t + " has an unknown field \"" + k + "\"");
    const json::Value *dt = v.find("dtype"), *sh = v.find("shape"), *off = v.find("data_offsets");
    if (!dt || !sh || !off) throw fail(t + " needs dtype, shape and data_offsets");
    if (dt->kind != json::Value::Kind::String) throw fail(t + " dtype is not a string");
    Entry e{name, DType::Bool, {}, 0, 0};
    auto known = std::find_if(std::begin(kNames), std::end(kNames), [&](auto& d) { return dt->str == d.name; });
    if (known == std::end(kNames)) throw fail(t + " has unsupported dtype \"" + dt->str + "\"");
    e.dtype = known->dtype;
    if (sh->kind != json::Value::Kind::Array) throw fail(t + " shape is not an array");
    // The element count, checked against overflow: a shape may not describe more bytes than a
    // file can hold.
    uint64_t numel = 1;
    bool zero = false;
    for (auto& d : sh->items) {
      uint64_t x;
      if (!d.as_u64(x) || x > static_cast<uint64_t>(INT64_MAX))
        throw fail(t + " shape has an entry that is not a non-negative integer");
      e.shape.push_back(static_cast<int64_t>(x));
      if (x == 0)
        zero = true;
      else if (!zero && numel > (uint64_t{1} << 62) / x)
        throw fail(t + " shape " + shape_str(e.shape) + " is too large");
      else if (!zero)
        numel *= x;
    }
    if (zero) numel = 0;
    // numpy's rule (core/checked.h): a zero does not excuse the other dimensions.
    if (!checked::fits(e.shape, static_cast<int64_t>(itemsize(e.dtype))))
      throw fail(t + " shape " + shape_str(e.shape) + " is too large: its size in bytes does not fit in 64 bits");
    if (off->kind != json::Value::Kind::Array || off->items.size() != 2 || !off->items[0].as_u64(e.begin) ||
        !off->items[1].as_u64(e.end))
      throw fail(t + " data_offsets is not a pair of non-negative integers");
    if (e.end < e.begin)
      throw fail(t + " data_offsets [" + std::to_string(e.begin) + "," + std::to_string(e.end) + "] end before begin");
    uint64_t want = numel * itemsize(e.dtype);
    if (e.end - e.begin != want)
      throw fail(t + " of shape " + shape_str(e.shape) + " and dtype " + dt->str + " needs " + std::to_string(want) +
                 " bytes, data_offsets give " + std::to_string(e.end - e.begin));
    p.entries.push_back(std::move(e));
  }
  std::stable_sort(p.entries.begin(), p.entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t at = 0;
  for (auto& e : p.entries) {
    if (e.begin != at)
      throw fail("tensor \"" + e.name + "\" starts at byte " + std::to_string(e.begin) + " of the data, expected " +
                 std::to_string(at) + (e.begin < at ? " (overlap)" : " (gap)"));
    at = e.end;
  }
  if (at != p.data.size())
    throw fail("tensors cover " + std::to_string(at) + " bytes but the data section has " +
               std::to_string(p.data.size()) + (at < p.data.size() ? " (trailing bytes)" : " (truncated file)"));
  if (auto sum = p.metadata.find(kDataSha256Key); sum != p.metadata.end()) {
    const std::string& want = sum->second;
    if (want.size() != 64 || want.find_first_not_of("0123456789abcdef") != std::string::npos)
      throw fail(std::string("__metadata__ \"") + kDataSha256Key + "\" is not 64 lowercase hex digits");
    std::string got = sha256_hex(p.data);
    if (got != want)
      throw fail("data checksum mismatch: the header says sha256 " + want + ", the data hashes to " + got +
                 " (the tensors were changed or corrupted)");
  }
  return p;
}

StateDict load(std::string_view bytes, const std::string& who) {
  Parsed p = parse(bytes, who);
  StateDict out;
  for (auto& e : p.entries)
    out.push_back({e.name, Tensor::from_bytes(p.data.data() + e.begin, e.end - e.begin, e.shape, e.dtype)});
  return out;
}

}  // namespace

std::string safe_save_header(const StateDict& tensors, const std::map<std::string, std::string>& metadata_in,
                             bool checksum) {
  const std::string who = "[safe_save]";
  std::map<std::string, std::string> metadata = metadata_in;
  // Metadata read from a checksummed file and saved again asks for a fresh digest (a stale one
  // would make the file unloadable).
  if (checksum || metadata.count(kDataSha256Key)) {
    // A first pass over the tensors for the digest (the header precedes the data); reading a
    // realized tensor again costs a copy, not a recomputation.
    Sha256 h;
    for (auto& [name, t] : tensors) {
      std::vector<uint8_t> b = t.bytes();
      h.update(b.data(), b.size());
    }
    metadata[kDataSha256Key] = h.finish_hex();
  }
  std::string j = "{";
  if (!metadata.empty()) {
    j += "\"__metadata__\":{";
    bool first = true;
    for (auto& [k, v] : metadata) {
      if (!first) j += ",";
      first = false;
      j += json::quote(k, who) + ":" + json::quote(v, who);
    }
    j += "}";
  }
  std::set<std::string> seen;
  uint64_t offset = 0;
  for (auto& [name, t] : tensors) {
    if (name == "__metadata__") throw Error(who + " \"__metadata__\" cannot name a tensor");
    if (!seen.insert(name).second) throw Error(who + " duplicate tensor name \"" + name + "\"");
    if (j.size() > 1) j += ",";
    j += json::quote(name, who) + ":{\"dtype\":\"" + safe_name(t.dtype()) + "\",\"shape\":[";
    for (size_t i = 0; i < t.shape().size(); ++i) j += (i ? "," : "") + std::to_string(t.shape()[i]);
    uint64_t nbytes = static_cast<uint64_t>(t.nbytes());
    j += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + nbytes) + "]}";
    offset += nbytes;
  }
  j += "}";
  j.append((8 - j.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(static_cast<uint64_t>(j.size()) >> (8 * i));
  return out + j;
}

std::string safe_save_bytes(const StateDict& tensors, const std::map<std::string, std::string>& metadata,
                            bool checksum) {
  std::string out = safe_save_header(tensors, metadata, checksum);
  size_t data = 0;
  for (auto& [name, t] : tensors) data += static_cast<size_t>(t.nbytes());
  out.reserve(out.size() + data);
  for (auto& [name, t] : tensors) {
    std::vector<uint8_t> b = t.bytes();
    out.append(reinterpret_cast<const char*>(b.data()), b.size());
  }
  return out;
}

void safe_save(const StateDict& tensors, const std::string& path, const std::map<std::string, std::string>& metadata,
               bool checksum) {
  std::string bytes = safe_save_bytes(tensors, metadata, checksum);
  io::write_file_atomic(path, bytes, "[safe_save]");
}

StateDict safe_load_bytes(std::string_view bytes) { return load(bytes, "[safe_load]"); }

StateDict safe_load(const std::string& path) {
  std::string bytes = io::read_file(path, "[safe_load]");
  return load(bytes, "[safe_load] '" + path + "':");
}

std::map<std::string, std::string> safe_load_metadata(const std::string& path) {
  std::string bytes = io::read_file(path, "[safe_load_metadata]");
  return parse(bytes, "[safe_load_metadata] '" + path + "':").metadata;
}

}  // namespace maroon::nn
