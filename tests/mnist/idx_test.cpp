// The IDX reader: element types and byte order, rejection of malformed files, MNIST's checks, and
// the real files when tools/fetch_mnist.sh has fetched them.
#include "maroon/idx.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "data/pages.h"
#include "maroon/datasets.h"
#include "util.h"

using namespace maroon;
using namespace maroon::mnisttest;

namespace {

std::string idx(uint8_t type, const std::vector<uint32_t>& dims, const std::string& data) {
  std::string s = {'\0', '\0', static_cast<char>(type), static_cast<char>(dims.size())};
  for (uint32_t d : dims)
    s += {static_cast<char>(d >> 24), static_cast<char>(d >> 16), static_cast<char>(d >> 8), static_cast<char>(d)};
  return s + data;
}

std::string idx_error(const std::string& bytes) {
  try {
    data::parse_idx(bytes, "test.idx");
    return "";
  } catch (const FormatError& e) { return e.what(); }
}

}  // namespace

TEST(Idx, ReadsEveryTypeBigEndian) {
  data::IdxArray u8 = data::parse_idx(idx(0x08, {2, 3}, "\x01\x02\x03\x04\x05\xff"));
  EXPECT_EQ(u8.dtype, DType::UInt8);
  EXPECT_EQ(u8.shape, (Shape{2, 3}));
  EXPECT_EQ(u8.tensor().to_vector<uint8_t>(), (std::vector<uint8_t>{1, 2, 3, 4, 5, 255}));
  EXPECT_EQ(data::parse_idx(idx(0x09, {2}, "\xff\x7f")).tensor().to_vector<int8_t>(), (std::vector<int8_t>{-1, 127}));
  EXPECT_EQ(data::parse_idx(idx(0x0B, {2}, std::string("\x01\x02\xff\xfe", 4))).tensor().to_vector<int16_t>(),
            (std::vector<int16_t>{0x0102, -2}));
  EXPECT_EQ(data::parse_idx(idx(0x0C, {1}, std::string("\x12\x34\x56\x78", 4))).tensor().to_vector<int32_t>(),
            (std::vector<int32_t>{0x12345678}));
  EXPECT_EQ(data::parse_idx(idx(0x0D, {1}, std::string("\x3f\x80\x00\x00", 4))).tensor().to_vector<float>(),
            (std::vector<float>{1.0f}));
  EXPECT_EQ(data::parse_idx(idx(0x0E, {1}, std::string("\xc0\x00\0\0\0\0\0\0", 8))).tensor().to_vector<double>(),
            (std::vector<double>{-2.0}));
  EXPECT_EQ(data::parse_idx(idx(0x08, {0, 28}, "")).shape, (Shape{0, 28}));
}

TEST(Idx, RejectsMalformedFiles) {
  struct Case {
    std::string bytes, message;
  };
  std::vector<Case> cases = {
      {"", "shorter than the 4-byte magic"},
      {std::string("\0\0\x08", 3), "shorter than the 4-byte magic"},
      {std::string("\x1f\x8b\x08\x00", 4), "bad magic"},
      {std::string("\0\x01\x08\x01", 4), "bad magic"},
      {idx(0x07, {1}, "x"), "unknown type code 0x07"},
      {idx(0x08, {}, ""), "rank 0"},
      {std::string("\0\0\x08\x02\0\0\0\x01\0\0", 10), "truncated header"},
      {idx(0x08, {2, 3}, "12345"), "truncated data"},
      {idx(0x0C, {2}, "1234567"), "truncated data"},
      {idx(0x08, {2, 3}, "1234567"), "1 trailing bytes"},
      {idx(0x08, {0xffffffffu, 0xffffffffu, 0xffffffffu}, "abc"), "truncated data"},
      {idx(0x0E, {0x20000000u, 0x20000000u}, ""), "truncated data"},
  };
  for (auto& c : cases) {
    std::string err = idx_error(c.bytes);
    EXPECT_NE(err.find(c.message), std::string::npos) << "expected '" << c.message << "', got '" << err << "'";
    EXPECT_NE(err.find("'test.idx'"), std::string::npos) << err;
  }
  EXPECT_THROW(data::load_idx("/nonexistent/train-images-idx3-ubyte"), Error);
}

TEST(Idx, EveryTruncationOfAFileIsRejected) {
  std::string good = idx(0x0B, {3, 2}, "abcdefghijkl");
  ASSERT_EQ(idx_error(good), "");
  for (size_t len = 0; len < good.size(); ++len) EXPECT_NE(idx_error(good.substr(0, len)), "") << len;
}

// Large arrays go into memory advised for huge pages (data/pages.h): the same bytes, every size
// (below, at and across the 2 MB boundaries the advice rounds to).
TEST(Idx, LargeArraysKeepEveryByte) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{4095}, size_t{2} << 20, (size_t{5} << 20) + 3}) {
    std::string data(n, '\0');
    uint64_t x = n;
    for (char& c : data) c = static_cast<char>((x = x * 6364136223846793005ull + 1442695040888963407ull) >> 56);
    data::IdxArray a = data::parse_idx(idx(0x08, {static_cast<uint32_t>(n)}, data));
    ASSERT_EQ(a.bytes.size(), n);
    EXPECT_EQ(std::memcmp(a.bytes.data(), data.data(), n), 0) << n;
  }
  std::vector<uint8_t> z = data::huge_page_buffer((size_t{3} << 20) + 5);
  EXPECT_EQ(z.size(), (size_t{3} << 20) + 5);
  EXPECT_TRUE(std::all_of(z.begin(), z.end(), [](uint8_t b) { return b == 0; }));
}

// load_idx reads the header, then the data straight into the array (no copy of the file): from
// disk it gives parse_idx's array or parse_idx's error for every file, every truncation included,
// naming the path.
TEST(Idx, LoadingAFileIsParsingItsBytes) {
  std::string dir = scratch("load_");
  std::vector<std::string> files = {
      idx(0x08, {2, 3}, "\x01\x02\x03\x04\x05\xff"), idx(0x0B, {3, 2}, "abcdefghijkl"),
      idx(0x0E, {1}, std::string("\xc0\x00\0\0\0\0\0\0", 8)), idx(0x08, {0, 28}, ""),
      idx(0x08, {2, 3}, "1234567"), idx(0x08, {0xffffffffu, 0xffffffffu, 0xffffffffu}, "abc"),
      std::string("\x1f\x8b\x08\x00", 4), idx(0x07, {1}, "x")};
  std::string big = idx(0x0C, {3000, 300}, std::string(3000 * 300 * 4, '\x5a'));
  for (size_t len = 0; len < 40; ++len) files.push_back(big.substr(0, len));
  files.push_back(big);
  files.push_back(big.substr(0, big.size() - 1));
  for (const std::string& f : files) {
    std::string path = dir + "f.idx";
    write_file(path, f);
    std::string want_error, got_error;
    data::IdxArray want{}, got{};
    try {
      want = data::parse_idx(f, path);
    } catch (const FormatError& e) { want_error = e.what(); }
    try {
      got = data::load_idx(path);
    } catch (const FormatError& e) { got_error = e.what(); }
    EXPECT_EQ(got_error, want_error) << f.size();
    EXPECT_EQ(got.dtype, want.dtype);
    EXPECT_EQ(got.shape, want.shape);
    EXPECT_EQ(got.bytes, want.bytes) << f.size();
    unlink(path.c_str());
  }
  EXPECT_NE(idx_error(big.substr(0, big.size() - 1)).find("truncated data"), std::string::npos);
}

TEST(Idx, MnistSplitChecks) {
  std::string dir = scratch("split_");
  auto split_error = [&](const std::string& images, const std::string& labels) {
    write_file(dir + "im", images);
    write_file(dir + "lb", labels);
    try {
      data::load_split(dir + "im", dir + "lb");
      return std::string();
    } catch (const FormatError& e) { return std::string(e.what()); }
  };
  std::string two(2 * 784, '\x10');
  EXPECT_EQ(split_error(idx(0x08, {2, 28, 28}, two), idx(0x08, {2}, "\x03\x09")), "");
  EXPECT_NE(split_error(idx(0x08, {2, 28, 27}, two.substr(56)), idx(0x08, {2}, "\x03\x09")).find("(n,28,28)"),
            std::string::npos);
  EXPECT_NE(split_error(idx(0x08, {2, 28, 28}, two), idx(0x08, {3}, "\x03\x09\x01")).find("2 images"),
            std::string::npos);
  EXPECT_NE(split_error(idx(0x08, {2, 28, 28}, two), idx(0x08, {2}, "\x03\x0a")).find("label 10 at index 1"),
            std::string::npos);
  EXPECT_NE(split_error(idx(0x08, {2, 28, 28}, two), idx(0x0C, {2}, std::string(8, '\0'))).find("uint8 labels"),
            std::string::npos);
  unlink((dir + "im").c_str());
  unlink((dir + "lb").c_str());
}

// The real files, as tools/fetch_mnist.sh leaves them (the setup runs it; this fails without).
TEST(Idx, RealMnist) {
  ASSERT_TRUE(have_mnist()) << "no MNIST in " << mnist_dir() << ": run bash tools/fetch_mnist.sh";
  data::Mnist m = data::load_mnist(mnist_dir());
  EXPECT_EQ(m.train.n, 60000);
  EXPECT_EQ(m.test.n, 10000);
  std::vector<int> train(10), test(10);
  for (uint8_t l : m.train.labels) train[l]++;
  for (uint8_t l : m.test.labels) test[l]++;
  // The class counts of the canonical files (LeCun's MNIST, as torchvision ships it).
  EXPECT_EQ(train, (std::vector<int>{5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949}));
  EXPECT_EQ(test, (std::vector<int>{980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009}));
  EXPECT_EQ(std::vector<uint8_t>(m.train.labels.begin(), m.train.labels.begin() + 5),
            (std::vector<uint8_t>{5, 0, 4, 1, 9}));
  EXPECT_EQ(std::vector<uint8_t>(m.test.labels.begin(), m.test.labels.begin() + 5),
            (std::vector<uint8_t>{7, 2, 1, 0, 4}));
}
