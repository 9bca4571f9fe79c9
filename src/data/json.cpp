// The strict JSON reader and Python-style string quoting (see json.h).
#include "data/json.h"

#include <cstdio>
#include <unordered_set>

#include "maroon/error.h"

namespace maroon::json {

const Value* Value::find(std::string_view key) const {
  for (auto& [k, v] : fields)
    if (k == key) return &v;
  return nullptr;
}

bool Value::as_u64(uint64_t& out) const {
  if (kind != Kind::Number || str.empty() || (str.size() > 1 && str[0] == '0')) return false;
  uint64_t v = 0;
  for (char c : str) {
    if (c < '0' || c > '9') return false;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  out = v;
  return true;
}

namespace {

void put_utf8(std::string& s, uint32_t cp) {
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Decodes one UTF-8 sequence at s[i] (advancing i); false for anything RFC 3629 forbids
// (overlong forms, surrogates, code points past U+10FFFF, truncation).
bool next_utf8(std::string_view s, size_t& i, uint32_t& cp) {
  auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  uint8_t c = byte(i);
  int len;
  uint32_t min;
  if (c < 0x80) {
    cp = c, len = 1, min = 0;
  } else if ((c & 0xE0) == 0xC0) {
    cp = c & 0x1F, len = 2, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    cp = c & 0x0F, len = 3, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    cp = c & 0x07, len = 4, min = 0x10000;
  } else
    return false;
  if (i + len > s.size()) return false;
  for (int k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return false;
    cp = cp << 6 | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
  i += len;
  return true;
}

class Parser {
 public:
  Parser(std::string_view t, const std::string& who) : t_(t), who_(who) {}

  Value document() {
    Value v = value(0);
    ws();
    if (i_ != t_.size()) fail("unexpected trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    throw FormatError(who_ + " malformed JSON header: " + what + " at byte " + std::to_string(i_));
  }
  void ws() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r')) ++i_;
  }
  bool eat(char c) {
    ws();
    if (i_ < t_.size() && t_[i_] == c) return ++i_, true;
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  bool literal(std::string_view w) {
    if (t_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }

  Value value(int depth) {
    if (depth > 64) fail("nesting deeper than 64");
    ws();
    if (i_ >= t_.size()) fail("unexpected end");
    Value v;
    char c = t_[i_];
    if (c == '{') {
      ++i_;
      v.kind = Value::Kind::Object;
      if (eat('}')) return v;
      // Keys seen so far, hashed: scanning the earlier keys for each one made a header of n
      // tensors cost n^2 comparisons (80k keys: tens of seconds).
      std::unordered_set<std::string> keys;
      do {
        ws();
        if (i_ >= t_.size() || t_[i_] != '"') fail("expected a string key");
        std::string key = string();
        if (!keys.insert(key).second) fail("duplicate key \"" + key + "\"");
        expect(':');
        v.fields.push_back(Field{std::move(key), value(depth + 1)});
      } while (eat(','));
      expect('}');
    } else if (c == '[') {
      ++i_;
      v.kind = Value::Kind::Array;
      if (eat(']')) return v;
      do v.items.push_back(value(depth + 1));
      while (eat(','));
      expect(']');
    } else if (c == '"') {
      v.kind = Value::Kind::String;
      v.str = string();
    } else if (literal("true")) {
      v.kind = Value::Kind::Bool, v.b = true;
    } else if (literal("false")) {
      v.kind = Value::Kind::Bool;
    } else if (literal("null")) {
      v.kind = Value::Kind::Null;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      v.kind = Value::Kind::Number;
      v.str = number();
    } else {
      fail(std::string("unexpected character '") + (c >= 0x20 && c < 0x7f ? std::string(1, c) : "?") + "'");
    }
    return v;
  }

  std::string number() {
    size_t start = i_;
    auto digits = [&] {
      size_t s = i_;
      while (i_ < t_.size() && t_[i_] >= '0' && t_[i_] <= '9') ++i_;
      return i_ - s;
    };
    if (t_[i_] == '-') ++i_;
    size_t int_start = i_;
    size_t n = digits();
    if (n == 0) fail("a number needs digits");
    if (n > 1 && t_[int_start] == '0') fail("a number has a leading zero");
    if (i_ < t_.size() && t_[i_] == '.') {
      ++i_;
      if (!digits()) fail("a fraction needs digits");
    }
    if (i_ < t_.size() && (t_[i_] == 'e' || t_[i_] == 'E')) {
      ++i_;
      if (i_ < t_.size() && (t_[i_] == '+' || t_[i_] == '-')) ++i_;
      if (!digits()) fail("an exponent needs digits");
    }
    return std::string(t_.substr(start, i_ - start));
  }

  uint32_t hex4() {
    if (i_ + 4 > t_.size()) fail("truncated \\u escape");
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      char c = t_[i_++];
      int d = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : -1;
      if (d < 0) fail("bad hex digit in \\u escape");
      v = v << 4 | static_cast<uint32_t>(d);
    }
    return v;
  }

  std::string string() {
    ++i_;  // the opening quote
    std::string s;
    while (true) {
      if (i_ >= t_.size()) fail("unterminated string");
      uint8_t c = static_cast<uint8_t>(t_[i_]);
      if (c == '"') return ++i_, s;
      if (c < 0x20) fail("raw control character in a string");
      if (c == '\\') {
        if (++i_ >= t_.size()) fail("unterminated escape");
        char e = t_[i_++];
        switch (e) {
          case '"':
            s += '"';
            break;
          case '\\':
            s += '\\';
            break;
          case '/':
            s += '/';
            break;
          case 'b':
            s += '\b';
            break;
          case 'f':
            s += '\f';
            break;
          case 'n':
            s += '\n';
            break;
          case 'r':
            s += '\r';
            break;
          case 't':
            s += '\t';
            break;
          case 'u': {
            uint32_t cp = hex4();
            if (cp >= 0xDC00 && cp <= 0xDFFF) fail("lone low surrogate");
            if (cp >= 0xD800 && cp <= 0xDBFF) {
              if (!literal("\\u")) fail("high surrogate without a low one");
              uint32_t lo = hex4();
              if (lo < 0xDC00 || lo > 0xDFFF) fail("high surrogate without a low one");
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            put_utf8(s, cp);
            break;
          }
          default:
            --i_, fail("unknown escape");
        }
        continue;
      }
      size_t start = i_;
      uint32_t cp;
      if (!next_utf8(t_, i_, cp)) fail("invalid UTF-8");
      s.append(t_.substr(start, i_ - start));
    }
  }

  std::string_view t_;
  const std::string& who_;
  size_t i_ = 0;
};

}  // namespace

Value parse(std::string_view text, const std::string& who) { return Parser(text, who).document(); }

std::string quote(std::string_view s, const std::string& who) {
  std::string out = "\"";
  char buf[8];
  auto u = [&](uint32_t v) {
    std::snprintf(buf, sizeof buf, "\\u%04x", v);
    out += buf;
  };
  for (size_t i = 0; i < s.size();) {
    uint32_t cp;
    if (!next_utf8(s, i, cp)) throw Error(who + " a name or metadata string is not valid UTF-8");
    switch (cp) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (cp >= 0x20 && cp < 0x7f)
          out += static_cast<char>(cp);
        else if (cp < 0x10000)
          u(cp);
        else
          u(0xD800 + ((cp - 0x10000) >> 10)), u(0xDC00 + ((cp - 0x10000) & 0x3FF));
    }
  }
  return out + "\"";
}

}  // namespace maroon::json
