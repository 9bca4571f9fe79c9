// MNIST and Fashion-MNIST as IDX files in a directory (tools/fetch_mnist.sh puts them in
// data/mnist and data/fashion-mnist).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace maroon::data {

struct Split {
  int64_t n = 0;
  std::vector<uint8_t> images;  // n * 28 * 28 pixels, row-major
  std::vector<uint8_t> labels;  // n labels, each 0..9
};

struct Mnist {
  Split train, test;
};

// Reads {train,t10k}-{images-idx3,labels-idx1}-ubyte from `dir`; checks the shapes (n,28,28) and
// (n,), the dtype uint8, equal counts and labels below 10. Throws maroon::FormatError.
Mnist load_mnist(const std::string& dir);
Split load_split(const std::string& images_path, const std::string& labels_path);

}  // namespace maroon::data
