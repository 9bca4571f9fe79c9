// SHA-256 against FIPS 180-2's examples and against sha256sum on a file.
#include "maroon/sha256.h"

#include <unistd.h>

#include "util.h"

using namespace maroon;
using namespace maroon::mnisttest;

TEST(Sha256, Fips180Examples) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PieceSizesDoNotMatter) {
  std::string s;
  for (int i = 0; i < 1000; ++i) s += static_cast<char>(i * 131 + 7);
  std::string whole = sha256_hex(s);
  // Every padding case: lengths around the 55/56/64-byte boundaries, fed in uneven pieces.
  for (size_t len : {0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000}) {
    for (size_t piece : {1, 3, 63, 64, 65, 200}) {
      Sha256 h;
      for (size_t i = 0; i < len; i += piece) h.update(s.data() + i, std::min(piece, len - i));
      ASSERT_EQ(h.finish_hex(), sha256_hex(std::string_view(s).substr(0, len))) << len << " " << piece;
    }
  }
  EXPECT_EQ(whole, sha256_hex(s));
}

TEST(Sha256, MatchesSha256sum) {
  std::string path = scratch("sha.bin"), bytes;
  for (int i = 0; i < 100000; ++i) bytes += static_cast<char>((i * 7919) >> 3);
  write_file(path, bytes);
  int st = 0;
  std::string out = run("sha256sum '" + path + "'", &st);
  ASSERT_EQ(st, 0) << "sha256sum failed";
  EXPECT_EQ(out.substr(0, 64), sha256_hex(bytes));
  unlink(path.c_str());
}
