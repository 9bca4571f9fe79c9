// The .npy reader and writer: the header is a Python dict literal, parsed strictly (three known
// keys, nothing else), and every size is checked against the bytes present before it is used.
#include "maroon/npy.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>

#include "io/files.h"

namespace maroon::data {

namespace {

struct Descr {
  const char* code;  // numpy's kind letter and item size
  size_t size;
  DType dtype;
};
constexpr Descr kDescrs[] = {{"b1", 1, DType::Bool},    {"i1", 1, DType::Int8},    {"i2", 2, DType::Int16},
                             {"i4", 4, DType::Int32},   {"i8", 8, DType::Int64},   {"u1", 1, DType::UInt8},
                             {"u2", 2, DType::UInt16},  {"u4", 4, DType::UInt32},  {"u8", 8, DType::UInt64},
                             {"f2", 2, DType::Float16}, {"f4", 4, DType::Float32}, {"f8", 8, DType::Float64}};

// The header dict, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (2, 28, 28), }.
class HeaderParser {
 public:
  HeaderParser(std::string_view s, std::function<FormatError(const std::string&)> fail) : s_(s), fail_(fail) {}

  void parse(std::string& descr, bool& fortran, Shape& shape) {
    bool seen[3] = {false, false, false};
    expect('{');
    while (!peek('}')) {
      std::string key = string();
      expect(':');
      if (key == "descr" && !seen[0]) descr = string(), seen[0] = true;
      else if (key == "fortran_order" && !seen[1]) fortran = boolean(), seen[1] = true;
      else if (key == "shape" && !seen[2]) shape = tuple(), seen[2] = true;
      else throw fail_("header has an unknown or repeated key '" + key + "'");
      if (!peek('}')) expect(',');
    }
    expect('}');
    skip();
    if (i_ != s_.size()) throw fail_("header has text after its closing brace");
    if (!seen[0] || !seen[1] || !seen[2]) throw fail_("header lacks one of 'descr', 'fortran_order', 'shape'");
  }

 private:
  void skip() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t')) ++i_;
  }
  bool peek(char c) {
    skip();
    return i_ < s_.size() && s_[i_] == c;
  }
  void expect(char c) {
    if (!peek(c)) throw fail_(std::string("header: expected '") + c + "' at byte " + std::to_string(i_));
    ++i_;
  }
  std::string string() {
    skip();
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) throw fail_("header: expected a quoted string");
    char q = s_[i_++];
    size_t end = s_.find(q, i_);
    if (end == std::string_view::npos) throw fail_("header: unterminated string");
    std::string out(s_.substr(i_, end - i_));
    i_ = end + 1;
    return out;
  }
  bool boolean() {
    skip();
    for (auto [word, v] : {std::pair{"True", true}, std::pair{"False", false}}) {
      std::string_view w(word);
      if (s_.substr(i_, w.size()) == w) {
        i_ += w.size();
        return v;
      }
    }
    throw fail_("header: fortran_order is not True or False");
  }
  Shape tuple() {
    Shape out;
    expect('(');
    while (!peek(')')) {
      skip();
      uint64_t v = 0;
      size_t start = i_;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
        if (v > (uint64_t{1} << 40)) throw fail_("header: a dimension is too large");
        v = v * 10 + static_cast<uint64_t>(s_[i_++] - '0');
      }
      if (i_ == start) throw fail_("header: shape is not a tuple of non-negative integers");
      out.push_back(static_cast<int64_t>(v));
      if (!peek(')')) expect(',');
    }
    expect(')');
    return out;
  }

  std::string_view s_;
  size_t i_ = 0;
  std::function<FormatError(const std::string&)> fail_;
};

}  // namespace

NpyArray parse_npy(std::string_view b, const std::string& name) {
  auto fail = [&](const std::string& what) { return FormatError("[npy] '" + name + "': " + what); };
  static const std::string_view kMagic("\x93NUMPY", 6);
  if (b.size() < 10 || b.substr(0, 6) != kMagic) throw fail("not a .npy file (no \\x93NUMPY magic)");
  const auto u8 = [&](size_t i) { return static_cast<uint64_t>(static_cast<uint8_t>(b[i])); };
  const uint64_t major = u8(6);
  if (major < 1 || major > 3) throw fail("unsupported .npy version " + std::to_string(major));
  const size_t lenbytes = major == 1 ? 2 : 4;
  if (b.size() < 8 + lenbytes) throw fail("truncated header length");
  uint64_t hlen = 0;
  for (size_t k = lenbytes; k-- > 0;) hlen = hlen << 8 | u8(8 + k);
  const uint64_t start = 8 + lenbytes;
  if (hlen > b.size() - start)
    throw fail("header of " + std::to_string(hlen) + " bytes runs past the end of the " + std::to_string(b.size()) +
               "-byte file");
  std::string descr;
  bool fortran = false;
  NpyArray a{DType::UInt8, {}, {}};
  HeaderParser(b.substr(start, hlen), fail).parse(descr, fortran, a.shape);
  if (fortran) throw fail("fortran_order True is not supported (save a C-order array)");
  bool swap = false, known = false;
  size_t size = 0;
  if (descr.size() >= 2 && std::string("<>|=").find(descr[0]) != std::string::npos) {
    swap = descr[0] == '>';
    descr.erase(0, 1);
  }
  for (const Descr& d : kDescrs)
    if (descr == d.code) a.dtype = d.dtype, size = d.size, known = true;
  if (!known) throw fail("unsupported dtype descr '" + descr + "' (expected b1, i1-i8, u1-u8, f2, f4 or f8)");
  // numpy's rule: the product of the non-zero dimensions must fit too, so a zero dimension does
  // not excuse huge other ones (their strides would overflow).
  uint64_t count = 1, nonzero = 1;
  for (int64_t d : a.shape) {
    if (d == 0) {
      count = 0;
      continue;
    }
    if (nonzero > (uint64_t{1} << 62) / size / static_cast<uint64_t>(d))
      throw fail("shape " + shape_str(a.shape) + " needs more than 2^62 bytes");
    nonzero *= static_cast<uint64_t>(d);
    count *= static_cast<uint64_t>(d);
  }
  const uint64_t have = b.size() - start - hlen;
  if (have != count * size)
    throw fail("shape " + shape_str(a.shape) + " needs " + std::to_string(count * size) + " data bytes, file has " +
               std::to_string(have));
  a.bytes.assign(b.begin() + static_cast<std::ptrdiff_t>(start + hlen), b.end());
  if (swap)
    for (uint64_t i = 0; i < count; ++i)
      std::reverse(a.bytes.begin() + static_cast<std::ptrdiff_t>(i * size),
                   a.bytes.begin() + static_cast<std::ptrdiff_t>((i + 1) * size));
  if (a.dtype == DType::Bool)
    for (uint8_t& v : a.bytes)
      if (v > 1) throw fail("a bool element is neither 0 nor 1");
  return a;
}

NpyArray load_npy(const std::string& path) { return parse_npy(io::read_file(path, "[npy]"), path); }

std::string npy_bytes(const NpyArray& a) {
  const Descr* descr = nullptr;
  for (const Descr& d : kDescrs)
    if (d.dtype == a.dtype) descr = &d;
  if (!descr) throw DTypeError("[npy] dtype " + std::string(dtype_name(a.dtype)) + " has no .npy descr");
  std::string shape;
  for (size_t i = 0; i < a.shape.size(); ++i) shape += std::to_string(a.shape[i]) + (i + 1 < a.shape.size() ? ", " : "");
  if (a.shape.size() == 1) shape += ",";
  char head[64];
  std::snprintf(head, sizeof head, "{'descr': '%c%s', 'fortran_order': False, 'shape': (", descr->size == 1 ? '|' : '<',
                descr->code);
  std::string header = head + shape + "), }";
  // Magic (6) + version (2) + length (2) + header + '\n', padded with spaces to 64 bytes.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char*>(a.bytes.data()), a.bytes.size());
  return out;
}

}  // namespace maroon::data
