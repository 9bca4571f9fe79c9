// SHA-256 of bytes, files and realized nodes (see digest.h).
#include "verify/digest.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>

#include "data/sha256_constants.h"
#include "io/files.h"
#include "maroon/sha256.h"
#include "verify/sha256_ni.h"


namespace maroon::verify {

// SHA-256 with the SHA instructions when the CPU has them (FIPS 180-4's padding here, the rounds
// in sha256_ni.cpp), else the portable maroon::Sha256: the same digest either way.
struct Hasher::Impl {
  bool ni = have_sha_ni();
  Sha256 portable;
  uint32_t h[8];
  uint8_t buf[64];
  size_t fill = 0;
  uint64_t total = 0;

  Impl() { std::memcpy(h, sha256_constants::kH0, sizeof h); }
  void update(const void* data, size_t n) {
    if (!ni) return portable.update(data, n);
    const uint8_t* p = static_cast<const uint8_t*>(data);
    total += n;
    if (fill) {
      size_t k = std::min(n, 64 - fill);
      std::memcpy(buf + fill, p, k);
      fill += k, p += k, n -= k;
      if (fill < 64) return;
      sha256_ni_blocks(h, buf, 1);
      fill = 0;
    }
    sha256_ni_blocks(h, p, n / 64);
    std::memcpy(buf, p + n / 64 * 64, n % 64);
    fill = n % 64;
  }
  Digest finish() {
    if (!ni) return portable.finish();
    uint64_t bits = total * 8;
    uint8_t pad[72] = {0x80};
    size_t padlen = (fill < 56 ? 56 : 120) - fill;
    for (int i = 0; i < 8; ++i) pad[padlen + i] = static_cast<uint8_t>(bits >> (56 - 8 * i));
    update(pad, padlen + 8);
    Digest d;
    for (int i = 0; i < 8; ++i)
      for (int k = 0; k < 4; ++k) d[4 * i + k] = static_cast<uint8_t>(h[i] >> (24 - 8 * k));
    return d;
  }
};

Hasher::Hasher() : impl_(std::make_unique<Impl>()) {}
Hasher::~Hasher() = default;
void Hasher::update(const void* data, size_t n) {
  if (n) impl_->update(data, n);
}
Digest Hasher::finish() { return impl_->finish(); }

namespace {
std::atomic<int64_t> g_paired_blocks{0};
}  // namespace
int64_t paired_blocks() { return g_paired_blocks.load(std::memory_order_relaxed); }

void update_pair(Hasher& a, const void* p, Hasher& b, const void* q, size_t n) {
  Hasher::Impl &x = *a.impl_, &y = *b.impl_;
  if (n == 0) return;
  if (!x.ni || !y.ni || x.fill != y.fill) {
    a.update(p, n);
    b.update(q, n);
    return;
  }
  const uint8_t* s = static_cast<const uint8_t*>(p);
  const uint8_t* t = static_cast<const uint8_t*>(q);
  x.total += n, y.total += n;
  if (x.fill) {  // both partial blocks, the same length: fill them, compress them together
    const size_t k = std::min(n, 64 - x.fill);
    std::memcpy(x.buf + x.fill, s, k);
    std::memcpy(y.buf + y.fill, t, k);
    x.fill += k, y.fill += k, s += k, t += k, n -= k;
    if (x.fill < 64) return;
    sha256_ni_blocks2(x.h, x.buf, y.h, y.buf, 1);
    g_paired_blocks.fetch_add(1, std::memory_order_relaxed);
    x.fill = y.fill = 0;
  }
  sha256_ni_blocks2(x.h, s, y.h, t, n / 64);
  g_paired_blocks.fetch_add(static_cast<int64_t>(n / 64), std::memory_order_relaxed);
  std::memcpy(x.buf, s + n / 64 * 64, n % 64);
  std::memcpy(y.buf, t + n / 64 * 64, n % 64);
  x.fill = y.fill = n % 64;
}

std::string hex(const Digest& d) {
  static const char* k = "0123456789abcdef";
  std::string s(64, '0');
  for (size_t i = 0; i < 32; ++i) {
    s[2 * i] = k[d[i] >> 4];
    s[2 * i + 1] = k[d[i] & 15];
  }
  return s;
}

Digest parse_digest(std::string_view h, const std::string& what) {
  Digest d{};
  auto nib = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
  bool ok = h.size() == 64;
  for (size_t i = 0; ok && i < 32; ++i) {
    int hi = nib(h[2 * i]), lo = nib(h[2 * i + 1]);
    ok = hi >= 0 && lo >= 0;
    d[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  if (!ok) throw FormatError(what + " is not 64 lowercase hex digits: \"" + std::string(h.substr(0, 80)) + "\"");
  return d;
}

Digest sha256(std::string_view bytes) {
  Hasher h;
  h.update(bytes);
  return h.finish();
}

bool contiguous_bytes(const Node& node, const uint8_t** p, size_t* n) {
  const int64_t count = numel(node.shape);
  *p = nullptr, *n = 0;
  if (count == 0) return true;
  if (!node.view.is_contiguous() || node.buffer->count < count) return false;
  *p = node.buffer->bytes(), *n = static_cast<size_t>(count) * itemsize(node.dtype);
  return true;
}

void for_each_piece(const Node& n, const PieceFn& emit) {
  const size_t sz = itemsize(n.dtype);
  const int64_t count = numel(n.shape);
  if (count == 0) return;
  const uint8_t* whole;
  size_t bytes;
  if (contiguous_bytes(n, &whole, &bytes)) {
    emit(whole, bytes);
    return;
  }
  // Row by row: row_indices walks the views with additions (view.h).
  const size_t nd = n.shape.size();
  const int64_t row = nd ? n.shape[nd - 1] : 1;
  std::vector<int64_t> idx(nd, 0), at(static_cast<size_t>(row));
  std::vector<uint8_t> out(static_cast<size_t>(row) * sz);
  for (int64_t done = 0; done < count; done += row) {
    if (nd) n.view.row_indices(idx.data(), row, at.data());
    else at[0] = n.view.index(idx.data());
    for (int64_t i = 0; i < row; ++i) {
      uint64_t v = at[i] < 0 ? 0 : n.buffer->load(at[i]);
      std::memcpy(&out[static_cast<size_t>(i) * sz], &v, sz);  // little-endian hosts only
    }
    emit(out.data(), out.size());
    for (size_t d = nd ? nd - 1 : 0; d-- > 0;) {  // the next row: carry through the outer axes
      if (++idx[d] < n.shape[d]) break;
      idx[d] = 0;
    }
  }
}

void hash_elements(Hasher& h, const Node& n) {
  for_each_piece(n, [&](const uint8_t* p, size_t k) { h.update(p, k); });
}

Digest node_digest(const Node& n) {
  Hasher h;
  hash_elements(h, n);
  return h.finish();
}

const Node& realized(const Tensor& t) {
  maroon::realize(t.node());
  return *t.node();
}

Digest tensor_digest(const Tensor& t) { return node_digest(realized(t)); }

// Streamed through one 1 MB buffer: read_file's checks (a regular file within the size limit),
// without a buffer the size of the file. Why: maroon train digests its four data files (55 MB for
// MNIST) before the first step; reading each whole into a zero-filled string took a page fault
// per 4 KB (13K, ~150 ms on the 2-vCPU VM, where a fault costs ~11 us). The same bytes, the same
// digest; a file that changes size while read is refused as read_file refuses it.
Digest file_digest(const std::string& path, const std::string& who) {
  io::BoundedFile f(path, who);
  std::unique_ptr<uint8_t[]> buf(new uint8_t[size_t{1} << 20]);
  Hasher h;
  for (uint64_t got = 0; got < f.size();) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(f.size() - got, uint64_t{1} << 20));
    f.read_at(buf.get(), n, got);
    h.update(buf.get(), n);
    got += n;
  }
  return h.finish();
}

}  // namespace maroon::verify
