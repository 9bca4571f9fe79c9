// keccak against Python's hashlib (SHA-3 and SHAKE), run live.
#include <fstream>

#include <unistd.h>

#include "util.h"

namespace maroon {
namespace {

std::string hex(const std::vector<uint8_t>& b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (uint8_t x : b) s += std::string{d[x >> 4], d[x & 15]};
  return s;
}

TEST(Keccak, MatchesHashlib) {
  // Messages of 0, 5, 135, 136 and 300 bytes: empty, short, the one-byte-pad case for sha3_256
  // (135), an exact block (136) and two blocks.
  std::vector<int64_t> lens{0, 5, 135, 136, 300};
  std::string stem = ::testing::TempDir() + "maroon_keccak_" + std::to_string(::getpid());
  std::string code = "import hashlib\n";
  std::vector<std::string> got;
  for (int64_t n : lens) {
    std::vector<uint8_t> msg(n);
    for (int64_t i = 0; i < n; ++i) msg[i] = static_cast<uint8_t>((i * 37 + 11) & 255);
    Tensor t = Tensor::from_vector<uint8_t>(msg, {1, n});
    for (const char* cfg : {"sha3_224", "sha3_256", "shake_128"}) {
      got.push_back(hex(t.keccak(cfg).to_vector<uint8_t>()));
      std::string digest = std::string(cfg) == "shake_128" ? ".digest(16)" : ".digest()";
      code += "print(hashlib." + std::string(cfg) + "(bytes((i * 37 + 11) & 255 for i in range(" + std::to_string(n) +
              ")))" + digest + ".hex())\n";
    }
  }
  {
    std::ofstream f(stem + ".py");
    f << code;
  }
  ASSERT_EQ(std::system((std::string(MAROON_PYTHON) + " " + stem + ".py > " + stem + ".txt").c_str()), 0);
  std::ifstream in(stem + ".txt");
  for (size_t i = 0; i < got.size(); ++i) {
    std::string want;
    in >> want;
    EXPECT_EQ(got[i], want) << "case " << i;
  }
  std::remove((stem + ".py").c_str());
  std::remove((stem + ".txt").c_str());
  // Rows are hashed independently.
  Tensor two = Tensor::from_vector<uint8_t>({1, 2, 3, 1, 2, 3}, {2, 3}).keccak();
  std::vector<uint8_t> d = two.to_vector<uint8_t>();
  EXPECT_TRUE(std::equal(d.begin(), d.begin() + 32, d.begin() + 32));
}

TEST(Keccak, HashMatchesTinygradsScheme) {
  // tinygrad's hash of a small tensor: the bytes zero-padded to 1 MiB, shake_128 of each 4 KiB
  // piece, then shake_128 of the 256 concatenated digests; written with hashlib.
  std::vector<int32_t> v{1, -2, 300000, 7};
  std::string got = hex(Tensor::from_vector<int32_t>(v, {2, 2}).hash().to_vector<uint8_t>());
  std::string stem = ::testing::TempDir() + "maroon_hash_" + std::to_string(::getpid());
  {
    std::ofstream f(stem + ".py");
    f << "import hashlib, struct\n"
         "d = struct.pack('<4i', 1, -2, 300000, 7).ljust(1 << 20, b'\\0')\n"
         "inner = b''.join(hashlib.shake_128(d[i:i + 4096]).digest(16) for i in range(0, 1 << 20, 4096))\n"
         "print(hashlib.shake_128(inner).digest(16).hex())\n";
  }
  ASSERT_EQ(std::system((std::string(MAROON_PYTHON) + " " + stem + ".py > " + stem + ".txt").c_str()), 0);
  std::ifstream in(stem + ".txt");
  std::string want;
  in >> want;
  EXPECT_EQ(got, want);
  std::remove((stem + ".py").c_str());
  std::remove((stem + ".txt").c_str());
}

}  // namespace
}  // namespace maroon
