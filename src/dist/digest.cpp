// The state digest (see digest.h).
#include "dist/digest.h"

#include <array>
#include <cstdio>

#ifdef MAROON_DIST_OPENSSL
#include <openssl/evp.h>
#else
#include "maroon/sha256.h"
#endif

namespace maroon::dist {

#ifdef MAROON_DIST_OPENSSL
struct StateHasher::Impl {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  Impl() {
    if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) != 1) throw Error("[dist] OpenSSL's SHA-256 failed");
  }
  ~Impl() { EVP_MD_CTX_free(ctx); }
  void update(const uint8_t* p, size_t n) {
    if (EVP_DigestUpdate(ctx, p, n) != 1) throw Error("[dist] OpenSSL's SHA-256 failed");
  }
  std::array<uint8_t, 32> finish() {
    std::array<uint8_t, 32> d{};
    unsigned n = 0;
    if (EVP_DigestFinal_ex(ctx, d.data(), &n) != 1 || n != 32) throw Error("[dist] OpenSSL's SHA-256 failed");
    return d;
  }
};
#else
struct StateHasher::Impl {
  Sha256 h;
  void update(const uint8_t* p, size_t n) { h.update(p, n); }
  std::array<uint8_t, 32> finish() { return h.finish(); }
};
#endif

StateHasher::StateHasher() : impl_(std::make_unique<Impl>()) {}
StateHasher::~StateHasher() = default;

void StateHasher::add(const Tensor& t) {
  std::vector<uint8_t> b = t.bytes();
  impl_->update(b.data(), b.size());
}

std::string StateHasher::hex() {
  std::string out;
  char b[3];
  for (uint8_t x : impl_->finish()) {
    std::snprintf(b, sizeof b, "%02x", x);
    out += b;
  }
  return out;
}

}  // namespace maroon::dist
