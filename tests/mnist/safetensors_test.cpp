// safetensors: round trips of every dtype, tinygrad's exact bytes (checked by Python's json), and
// rejection of malformed files with FormatError, never a crash.
#include "maroon/safetensors.h"

#include <unistd.h>

#include <cstring>

#include "util.h"

using namespace maroon;
using namespace maroon::mnisttest;

namespace {

nn::StateDict sample() {
  nn::StateDict sd;
  int i = 0;
  for (DType d : kConcreteDTypes) {
    Shape s = i % 3 == 0 ? Shape{2, 3} : i % 3 == 1 ? Shape{5} : Shape{};
    std::vector<uint8_t> bytes(static_cast<size_t>(itemsize(d)) * (s.empty() ? 1 : s.size() == 1 ? 5 : 6));
    for (size_t k = 0; k < bytes.size(); ++k) bytes[k] = static_cast<uint8_t>(k * 37 + i);
    if (d == DType::Bool)
      for (auto& b : bytes) b &= 1;
    sd.push_back({"t" + std::to_string(i) + "." + std::string(dtype_name(d)),
                  Tensor::from_bytes(bytes.data(), bytes.size(), s, d)});
    ++i;
  }
  sd.push_back({"empty", Tensor::zeros({0, 4})});
  return sd;
}

void expect_same(const nn::StateDict& a, const nn::StateDict& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first, b[i].first);
    EXPECT_EQ(a[i].second.dtype(), b[i].second.dtype()) << a[i].first;
    EXPECT_EQ(a[i].second.shape(), b[i].second.shape()) << a[i].first;
    EXPECT_EQ(a[i].second.bytes(), b[i].second.bytes()) << a[i].first;
  }
}

std::string header_file(const std::string& json, const std::string& data) {
  std::string out(8, '\0');
  uint64_t n = json.size();
  std::memcpy(out.data(), &n, 8);
  return out + json + data;
}

// The error a malformed file gets, or "" if it loads.
std::string load_error(const std::string& bytes) {
  try {
    nn::safe_load_bytes(bytes);
    return "";
  } catch (const FormatError& e) { return e.what(); }
}

}  // namespace

TEST(Safetensors, RoundTripEveryDType) {
  nn::StateDict sd = sample();
  std::string bytes = nn::safe_save_bytes(sd);
  expect_same(sd, nn::safe_load_bytes(bytes));
  std::string path = scratch("rt.safetensors");
  nn::safe_save(sd, path, {{"format", "pt"}});
  expect_same(sd, nn::safe_load(path));
  auto md = nn::safe_load_metadata(path);
  EXPECT_EQ(md.size(), 1u);
  EXPECT_EQ(md["format"], "pt");
  unlink(path.c_str());
}

TEST(Safetensors, HeaderIsTinygradsJsonPaddedToEight) {
  nn::StateDict sd{{"b", Tensor::from_vector<float>({1, 2, 3}, {3})}, {"a", Tensor::from_vector<int64_t>({7}, {})}};
  std::string bytes = nn::safe_save_bytes(sd);
  std::string j =
      "{\"b\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,12]},"
      "\"a\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[12,20]}}";
  j.append((8 - j.size() % 8) % 8, ' ');
  uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n, j.size());
  EXPECT_EQ(n % 8, 0u);
  EXPECT_EQ(bytes.substr(8, n), j);
  EXPECT_EQ(bytes.size(), 8 + n + 20);
}

TEST(Safetensors, PythonJsonWritesTheSameBytes) {
  nn::StateDict sd = sample();
  sd.push_back({"odd \"name\" \\ / \xc3\xa9 \n \x7f \xe2\x98\x83 \xf0\x9d\x84\x9e", Tensor::ones({2})});
  std::string path = scratch("py.safetensors");
  nn::safe_save(sd, path, {{"producer", "maroon \xe2\x9c\x93"}, {"a\tb", "\x01"}});
  int st = 0;
  std::string out = run(
      std::string(MAROON_PYTHON) + " " + MAROON_SOURCE_DIR + "/tests/mnist/safetensors_check.py '" + path + "'", &st);
  EXPECT_EQ(st, 0);
  EXPECT_EQ(out, "same\n");
  expect_same(sd, nn::safe_load(path));
  EXPECT_EQ(nn::safe_load_metadata(path).at("producer"), "maroon \xe2\x9c\x93");
  unlink(path.c_str());
}

TEST(Safetensors, LoadsInFileOffsetOrder) {
  std::string j =
      "{\"late\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[1,3]},"
      "\"early\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}";
  nn::StateDict sd = nn::safe_load_bytes(header_file(j, "\x01\x02\x03"));
  ASSERT_EQ(sd.size(), 2u);
  EXPECT_EQ(sd[0].first, "early");
  EXPECT_EQ(sd[1].first, "late");
  EXPECT_EQ(sd[1].second.bytes(), (std::vector<uint8_t>{2, 3}));
}

TEST(Safetensors, SaveRejectsDuplicateNames) {
  nn::StateDict sd{{"x", Tensor::ones({1})}, {"x", Tensor::ones({1})}};
  EXPECT_THROW(nn::safe_save_bytes(sd), Error);
  EXPECT_THROW(nn::safe_save_bytes({{"__metadata__", Tensor::ones({1})}}), Error);
}

TEST(Safetensors, RejectsMalformedFiles) {
  const std::string ok = "{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
  const std::string d8(8, '\0');
  ASSERT_EQ(load_error(header_file(ok, d8)), "");
  struct Case {
    std::string bytes, message;
  };
  std::string huge(8, '\0');
  uint64_t big = 200'000'000;
  std::memcpy(huge.data(), &big, 8);
  std::string past(8, '\0');
  uint64_t p = 100;
  std::memcpy(past.data(), &p, 8);
  std::vector<Case> cases = {
      {"", "too short"},
      {"\x05\0\0", "too short"},
      {huge + "{}", "exceeds the limit"},
      {past + "{}", "runs past the end"},
      {header_file("[]", ""), "does not start with '{'"},
      {header_file("", ""), "does not start with '{'"},
      {header_file("{", ""), "malformed JSON"},
      {header_file("{\"x\":}", ""), "malformed JSON"},
      {header_file("{\"x\":1,}", ""), "malformed JSON"},
      {header_file(ok + "x", d8), "trailing characters"},
      {header_file("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},\"x\":{}}", d8), "duplicate key"},
      {header_file("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"extra\":1}}", d8),
       "unknown field"},
      {header_file("{\"x\":{\"dtype\":\"F33\",\"shape\":[2],\"data_offsets\":[0,8]}}", d8), "unsupported dtype"},
      {header_file("{\"x\":{\"dtype\":\"F8_E4M3\",\"shape\":[8],\"data_offsets\":[0,8]}}", d8), "unsupported dtype"},
      {header_file("{\"x\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", d8), "needs 12 bytes"},
      {header_file("{\"x\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", d8),
       "not a non-negative integer"},
      {header_file("{\"x\":{\"dtype\":\"F32\",\"shape\":[2.0],\"data_offsets\":[0,8]}}", d8),
       "not a non-negative integer"},
      {header_file("{\"x\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4],\"data_offsets\":[0,8]}}", d8),
       "too large"},
      {header_file("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", d8), "end before begin"},
      {header_file("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}", d8), "data_offsets"},
      {header_file("{\"x\":{\"dtype\":\"F32\",\"shape\":[2]}}", d8), "needs dtype, shape and data_offsets"},
      {header_file("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", std::string(12, '\0')),
       "(gap)"},
      {header_file("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                   "\"y\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
                   d8),
       "(overlap)"},
      {header_file(ok, std::string(9, '\0')), "(trailing bytes)"},
      {header_file(ok, std::string(7, '\0')), "(truncated file)"},
      {header_file("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,18446744073709551616]}}", d8),
       "data_offsets"},
      {header_file("{\"__metadata__\":{\"a\":1}}", ""), "is not a string"},
      {header_file("{\"__metadata__\":[]}", ""), "is not an object"},
      {header_file("{\"x\":3}", ""), "is not an object"},
      {header_file("{\"\xff\":3}", ""), "invalid UTF-8"},
      {header_file("{\"\xc0\x80\":3}", ""), "invalid UTF-8"},
      {header_file("{\"a\nb\":3}", ""), "raw control character"},
      {header_file("{\"\\ud800\":3}", ""), "surrogate"},
      {header_file("{\"\\q\":3}", ""), "unknown escape"},
      {header_file("{\"x\":01}", ""), "leading zero"},
      {header_file("{\"x\":" + std::string(100, '[') + std::string(100, ']') + "}", ""), "nesting deeper"},
  };
  for (auto& c : cases) {
    std::string err = load_error(c.bytes);
    EXPECT_NE(err.find(c.message), std::string::npos) << "expected '" << c.message << "', got '" << err << "'";
    EXPECT_EQ(err.rfind("[safe_load]", 0), 0u) << err;
  }
}

// Every prefix and many single-byte corruptions of a valid file either load or throw
// FormatError; nothing else escapes and nothing crashes.
TEST(Safetensors, TruncationsAndCorruptionsNeverCrash) {
  nn::StateDict sd{{"w", Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3})},
                   {"n", Tensor::from_vector<int64_t>({9}, {})}};
  std::string good = nn::safe_save_bytes(sd, {{"k", "v"}});
  int loaded = 0, rejected = 0;
  for (size_t len = 0; len < good.size(); ++len) {
    EXPECT_THROW(nn::safe_load_bytes(std::string_view(good).substr(0, len)), FormatError) << len;
    ++rejected;
  }
  for (size_t i = 0; i < good.size(); ++i) {
    for (int v : {0x00, 0x22, 0x2c, 0x30, 0x39, 0x5b, 0x7b, 0x7d, 0x80, 0xff}) {
      std::string bad = good;
      bad[i] = static_cast<char>(v);
      try {
        nn::safe_load_bytes(bad);
        ++loaded;
      } catch (const FormatError&) { ++rejected; }
    }
  }
  // Corrupting the data section (or a digit into an equal-length digit) can leave a valid file.
  EXPECT_GT(loaded, 0);
  EXPECT_GT(rejected, static_cast<int>(good.size()));
}

TEST(Safetensors, MissingFileIsAnError) {
  EXPECT_THROW(nn::safe_load("/nonexistent/x.safetensors"), Error);
  EXPECT_THROW(nn::safe_save({{"x", Tensor::ones({1})}}, "/nonexistent/dir/x.safetensors"), Error);
}
