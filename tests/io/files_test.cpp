// Atomic writes leave either the old file or the new one; bounded reads refuse what is not a
// regular file or is too large, instead of hanging or exhausting memory.
#include "io/files.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "maroon/error.h"

namespace fs = std::filesystem;
using namespace maroon;

namespace {

fs::path scratch(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("maroon-io-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

size_t entries(const fs::path& d) { return static_cast<size_t>(std::distance(fs::directory_iterator(d), {})); }

// Runs f with files limited to `bytes` (RLIMIT_FSIZE), SIGXFSZ ignored so that a write past it
// fails with EFBIG instead of killing the test; both restored after.
template <class F>
void with_file_size_limit(rlim_t bytes, F f) {
  struct rlimit old {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  struct rlimit small = old;
  small.rlim_cur = bytes;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  auto* prev = signal(SIGXFSZ, SIG_IGN);
  f();
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, prev);
}

}  // namespace

TEST(AtomicFile, WritesAndReplacesWholeFiles) {
  fs::path d = scratch("replace");
  std::string p = (d / "w.bin").string();
  io::write_file_atomic(p, "first", "[test]");
  EXPECT_EQ(slurp(p), "first");
  io::write_file_atomic(p, std::string(100000, 'x'), "[test]");
  EXPECT_EQ(slurp(p), std::string(100000, 'x'));
  EXPECT_EQ(entries(d), 1u);  // no temporary file left behind
  fs::remove_all(d);
}

TEST(AtomicFile, AnUncommittedWriteLeavesTheOldFile) {
  fs::path d = scratch("abandon");
  std::string p = (d / "w.bin").string();
  io::write_file_atomic(p, "good", "[test]");
  {
    io::AtomicFile f(p, "[test]");
    f.write("partial");
  }  // destroyed without commit, as when an exception unwinds
  EXPECT_EQ(slurp(p), "good");
  EXPECT_EQ(entries(d), 1u);
  fs::remove_all(d);
}

TEST(AtomicFile, AFileSizeLimitMidWriteKeepsTheGoodFile) {
  fs::path d = scratch("efbig");
  std::string p = (d / "w.bin").string();
  io::write_file_atomic(p, "good weights", "[test]");
  with_file_size_limit(4096, [&] {
    try {
      io::write_file_atomic(p, std::string(1 << 20, 'y'), "[test]");
      ADD_FAILURE() << "a write past RLIMIT_FSIZE succeeded";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("w.bin"), std::string::npos) << e.what();
    }
  });
  EXPECT_EQ(slurp(p), "good weights");
  EXPECT_EQ(entries(d), 1u);
  fs::remove_all(d);
}

// Small writes are gathered in memory (files.h): thousands of 12-byte pieces, past the 1 MiB
// the buffer holds, give exactly those bytes; and with the file size limited, the error surfaces
// (at a later write or at commit) naming the path, the good file stays and no temporary is left.
TEST(AtomicFile, GatheredSmallWritesKeepTheirBytesAndTheirErrors) {
  fs::path d = scratch("gather");
  std::string p = (d / "w.bin").string();
  std::string want;
  {
    io::AtomicFile f(p, "[test]");
    for (int i = 0; i < 100000; ++i) {
      std::string piece = std::to_string(1000000000 + i) + ",\n";  // 12 bytes
      f.write(piece);
      want += piece;
      if (i % 9973 == 0) {  // a large write between small ones keeps the order
        std::string big(70000, static_cast<char>('a' + i % 26));
        f.write(big);
        want += big;
      }
    }
    f.commit();
  }
  EXPECT_EQ(slurp(p), want);
  io::write_file_atomic(p, "good weights", "[test]");
  with_file_size_limit(4096, [&] {
    try {
      io::AtomicFile f(p, "[test]");
      for (int i = 0; i < 1000; ++i) f.write("twelve bytes");  // 12 KB, none of it written yet
      f.commit();
      ADD_FAILURE() << "12 KB of small writes past a 4 KB RLIMIT_FSIZE were committed";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("w.bin"), std::string::npos) << e.what();
    }
  });
  EXPECT_EQ(slurp(p), "good weights");
  EXPECT_EQ(entries(d), 1u);
  fs::remove_all(d);
}

TEST(AtomicFile, AMissingDirectoryIsAnErrorNamingThePath) {
  EXPECT_THROW(io::write_file_atomic("/nonexistent-maroon-dir/w.bin", "x", "[test]"), Error);
  EXPECT_THROW(io::check_writable("/nonexistent-maroon-dir/w.bin", "[test]"), Error);
  fs::path d = scratch("isdir");
  EXPECT_THROW(io::check_writable(d.string(), "[test]"), Error);
  io::check_writable((d / "ok.bin").string(), "[test]");
  fs::remove_all(d);
}

TEST(ReadFile, RefusesWhatIsNotARegularFile) {
  EXPECT_THROW(io::read_file("/dev/zero", "[test]"), FormatError);
  fs::path d = scratch("fifo");
  std::string fifo = (d / "f").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW(io::read_file(fifo, "[test]"), FormatError);  // returns at once, never blocks
  EXPECT_THROW(io::read_file(d.string(), "[test]"), FormatError);
  EXPECT_THROW(io::read_file((d / "missing").string(), "[test]"), FormatError);
  fs::remove_all(d);
}

TEST(ReadFile, RefusesFilesOverTheCap) {
  fs::path d = scratch("cap");
  std::string p = (d / "big").string();
  io::write_file_atomic(p, std::string(1000, 'z'), "[test]");
  EXPECT_EQ(io::read_file(p, "[test]", 1000).size(), 1000u);
  try {
    io::read_file(p, "[test]", 999);
    ADD_FAILURE() << "read past the cap";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("over the limit"), std::string::npos) << e.what();
  }
  fs::remove_all(d);
}

TEST(BoundedFile, ReadsAtOffsetsAndRefusesAFileThatShrank) {
  fs::path d = scratch("bounded");
  std::string p = (d / "b").string();
  std::string bytes;
  for (int i = 0; i < 5000; ++i) bytes.push_back(static_cast<char>(i * 7));
  io::write_file_atomic(p, bytes, "[test]");
  io::BoundedFile f(p, "[test]");
  ASSERT_EQ(f.size(), bytes.size());
  std::string got(100, '\0');
  f.read_at(got.data(), got.size(), 4900);
  EXPECT_EQ(got, bytes.substr(4900));
  f.read_at(got.data(), 0, 5000);  // nothing to read at the end: no error
  ASSERT_EQ(::truncate(p.c_str(), 4950), 0);
  try {
    f.read_at(got.data(), got.size(), 4900);
    ADD_FAILURE() << "read past the end of a file that shrank";
  } catch (const FormatError& e) {
    std::string w = e.what();
    EXPECT_NE(w.find("shrank while being read"), std::string::npos) << w;
    EXPECT_NE(w.find(p), std::string::npos) << w;
  }
  fs::remove_all(d);
}

TEST(BoundedFile, ClosesItsDescriptorUnlessReleased) {
  fs::path d = scratch("release");
  std::string p = (d / "r").string();
  io::write_file_atomic(p, "abc", "[test]");
  int fd;
  {
    io::BoundedFile f(p, "[test]");
    fd = f.release();
  }
  char c;
  EXPECT_EQ(::pread(fd, &c, 1, 1), 1) << "release() must hand the descriptor over open";
  EXPECT_EQ(c, 'b');
  ::close(fd);
  size_t before = entries("/proc/self/fd");
  {
    io::BoundedFile f(p, "[test]");
    EXPECT_EQ(entries("/proc/self/fd"), before + 1);
  }
  EXPECT_EQ(entries("/proc/self/fd"), before) << "the descriptor leaked";
  EXPECT_THROW(io::BoundedFile("/dev/zero", "[test]"), FormatError);
  fs::remove_all(d);
}
