// Helpers for the MNIST tests: files in a scratch directory, running a command, stored digests.
#pragma once
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace maroon::mnisttest {

inline std::string scratch(const std::string& name) {
  return ::testing::TempDir() + "maroon_mnist_" + std::to_string(::getpid()) + "_" + name;
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// stdout of a shell command; the exit status in *status.
inline std::string run(const std::string& cmd, int* status = nullptr) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int st = pclose(p);
  if (status) *status = st;
  return out;
}

// tests/mnist/digests.txt: "name sha256" lines, produced by this code (see that file's header).
inline std::string stored_digest(const std::string& name) {
  std::ifstream f(std::string(MAROON_SOURCE_DIR) + "/tests/mnist/digests.txt");
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto sp = line.find(' ');
    if (line.substr(0, sp) == name) return line.substr(sp + 1);
  }
  return "(no stored digest named " + name + ")";
}

inline std::string mnist_dir() { return std::string(MAROON_SOURCE_DIR) + "/data/mnist"; }
inline bool have_mnist() { return std::ifstream(mnist_dir() + "/train-images-idx3-ubyte").good(); }

}  // namespace maroon::mnisttest
