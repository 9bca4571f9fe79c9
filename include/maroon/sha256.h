// SHA-256 (FIPS 180-4): the digests `maroon train` prints for weights and loss traces.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace maroon {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t n);
  void update(std::string_view s) { update(s.data(), s.size()); }
  // The digest; the object must not be updated afterwards.
  std::array<uint8_t, 32> finish();
  std::string finish_hex();  // lowercase, 64 characters

 private:
  void block(const uint8_t* p);
  std::array<uint32_t, 8> h_;
  uint8_t buf_[64];
  size_t fill_ = 0;
  uint64_t total_ = 0;  // bytes
};

std::string sha256_hex(std::string_view bytes);

}  // namespace maroon
