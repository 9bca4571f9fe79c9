// The state digest every rank compares with rank 0's after each step: SHA-256 over tensors' bytes
// in order. It is computed every step, so it uses OpenSSL's SHA-256 (SHA-NI where the CPU has
// it) when the build found OpenSSL, else Maroon's own (maroon/sha256.h): the same digest.
#pragma once
#include <memory>
#include <string>

#include "maroon/tensor.h"

namespace maroon::dist {

class StateHasher {
 public:
  StateHasher();
  ~StateHasher();
  StateHasher(const StateHasher&) = delete;
  StateHasher& operator=(const StateHasher&) = delete;
  void add(const Tensor& t);  // the tensor's little-endian bytes
  std::string hex();          // lowercase; ends the hashing

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace maroon::dist
