// file_digest streams a file through a small buffer (digest.cpp says why): the digest of every
// size around the buffer's is the whole file's SHA-256, and what read_file refuses it refuses.
#include <filesystem>

#include "io/files.h"
#include "job.h"
#include "verify/digest.h"

using namespace maroon;
using namespace maroon::verify;

TEST(VerifyFileDigest, IsTheWholeFilesSha256AtEverySize) {
  std::string dir = verifytest::scratch("file_digest");
  const size_t mb = size_t{1} << 20;
  for (size_t n : {size_t{0}, size_t{1}, mb - 1, mb, mb + 1, 3 * mb + 7}) {
    std::string bytes(n, '\0');
    uint64_t x = n + 1;
    for (char& c : bytes) c = static_cast<char>((x = x * 6364136223846793005ull + 1442695040888963407ull) >> 56);
    std::string path = dir + "/f" + std::to_string(n);
    io::write_file_atomic(path, bytes, "test");
    EXPECT_EQ(file_digest(path, "test"), sha256(bytes)) << n;
  }
}

TEST(VerifyFileDigest, RefusesWhatReadFileRefuses) {
  std::string dir = verifytest::scratch("file_digest_bad");
  auto message = [](const std::string& path) {
    try {
      file_digest(path, "[who]");
      return std::string();
    } catch (const Error& e) {
      return std::string(e.what());
    }
  };
  EXPECT_NE(message(dir + "/missing").find("cannot open"), std::string::npos);
  EXPECT_NE(message(dir).find("is a directory"), std::string::npos);
  EXPECT_NE(message(dir + "/missing").find("[who] '" + dir + "/missing'"), std::string::npos);
}
