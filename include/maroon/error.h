// Exceptions for bad user input. Messages name the op and the shapes, MLX style:
//   [reshape] cannot reshape (3,4) to (5,)
#pragma once
#include <stdexcept>
#include <string>

namespace maroon {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// Wrong shapes or arguments (Python maps it to ValueError).
class ShapeError : public Error {
 public:
  using Error::Error;
};
// An op does not accept the dtype (Python maps it to TypeError).
class DTypeError : public Error {
 public:
  using Error::Error;
};
// An index out of range (Python maps it to IndexError).
class IndexError : public Error {
 public:
  using Error::Error;
};

// A buffer larger than the allocation cap (MAROON_MAX_ALLOC_BYTES) or than the machine can give
// (Python maps it to MemoryError).
class MemoryError : public Error {
 public:
  using Error::Error;
};

// A malformed file: safetensors, IDX, a run record (Python maps it to ValueError).
class FormatError : public Error {
 public:
  using Error::Error;
};

}  // namespace maroon
