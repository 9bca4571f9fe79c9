// The IDX format of the MNIST files (yann.lecun.com/exdb/mnist): two zero bytes, a type code
// (0x08 u8, 0x09 i8, 0x0B i16, 0x0C i32, 0x0D f32, 0x0E f64), the rank, then each dimension and
// every element big-endian.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "maroon/tensor.h"

namespace maroon::data {

struct IdxArray {
  DType dtype;
  Shape shape;
  std::vector<uint8_t> bytes;  // the elements, row-major, converted to little-endian
  Tensor tensor() const;
};

// Throws maroon::FormatError naming the file and the problem (bad magic, unknown type code,
// truncated header or data, trailing bytes, a size that overflows) and maroon::Error when the
// file cannot be read. Never trusts a size before checking it against the file's length.
IdxArray parse_idx(std::string_view bytes, const std::string& name = "<memory>");
IdxArray load_idx(const std::string& path);

}  // namespace maroon::data
