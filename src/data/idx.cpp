// The IDX reader: every size is checked against the bytes actually present before it is used.
#include "maroon/idx.h"


#include <algorithm>
#include <cstring>
#include <iterator>

#include "core/checked.h"
#include "data/pages.h"
#include "io/files.h"

namespace maroon::data {

namespace {

struct TypeCode {
  uint8_t code;
  DType dtype;
};
constexpr TypeCode kTypes[] = {{0x08, DType::UInt8}, {0x09, DType::Int8},    {0x0B, DType::Int16},
                               {0x0C, DType::Int32}, {0x0D, DType::Float32}, {0x0E, DType::Float64}};

}  // namespace

Tensor IdxArray::tensor() const { return Tensor::from_bytes(bytes.data(), bytes.size(), shape, dtype); }

namespace {

// What the header says, checked against the file's size `total` (`b` holds the file's first
// bytes: all of it, or at least the largest header, kMaxIdxHeader).
struct IdxHeader {
  IdxArray array;   // dtype and shape; no bytes yet
  size_t header;    // bytes before the data
  uint64_t count;   // elements
};
constexpr size_t kMaxIdxHeader = 4 + 4 * 255;

IdxHeader parse_idx_header(std::string_view b, uint64_t total, const std::string& name) {
  auto fail = [&](const std::string& what) { return FormatError("[idx] '" + name + "': " + what); };
  auto u8 = [&](size_t i) { return static_cast<uint8_t>(b[i]); };
  if (total < 4) throw fail("file of " + std::to_string(total) + " bytes is shorter than the 4-byte magic");
  if (u8(0) != 0 || u8(1) != 0) throw fail("bad magic: the first two bytes must be zero (is this a gzip file?)");
  IdxArray a{DType::UInt8, {}, {}};
  bool known = false;
  for (auto& t : kTypes)
    if (t.code == u8(2)) a.dtype = t.dtype, known = true;
  if (!known)
    throw fail("unknown type code 0x" + std::string(1, "0123456789abcdef"[u8(2) >> 4]) +
               std::string(1, "0123456789abcdef"[u8(2) & 15]));
  size_t rank = u8(3);
  if (rank == 0) throw fail("rank 0 (no dimensions)");
  size_t header = 4 + 4 * rank;
  if (total < header)
    throw fail("truncated header: rank " + std::to_string(rank) + " needs " + std::to_string(header) +
               " bytes, file has " + std::to_string(total));
  size_t size = itemsize(a.dtype);
  uint64_t count = 1, avail = (total - header) / size;
  for (size_t d = 0; d < rank; ++d) {
    size_t at = 4 + 4 * d;
    uint32_t dim = uint32_t(u8(at)) << 24 | uint32_t(u8(at + 1)) << 16 | uint32_t(u8(at + 2)) << 8 | u8(at + 3);
    a.shape.push_back(dim);
    // Keeping count at most what the file can hold rules out overflow (dim < 2^32).
    if (count != 0 && dim != 0 && count > avail / dim) {
      throw fail("truncated data: shape " + shape_str(a.shape) + (d + 1 < rank ? "..." : "") + " needs more than the " +
                 std::to_string(total - header) + " data bytes present");
    }
    count *= dim;
  }
  // numpy's rule (core/checked.h): a zero dimension does not excuse huge other ones, whose
  // strides would not fit in 64 bits.
  if (!checked::fits(a.shape, static_cast<int64_t>(size)))
    throw fail("shape " + shape_str(a.shape) + " is too large: its size in bytes does not fit in 64 bits");
  uint64_t need = count * size;
  if (total - header < need)
    throw fail("truncated data: shape " + shape_str(a.shape) + " needs " + std::to_string(need) + " bytes, file has " +
               std::to_string(total - header));
  if (total - header > need)
    throw fail(std::to_string(total - header - need) + " trailing bytes after the data of shape " +
               shape_str(a.shape));
  return {std::move(a), header, count};
}

// Big-endian elements to little-endian, in place (one-byte elements have no order to reverse).
void reverse_idx_elements(std::vector<uint8_t>& bytes, size_t size) {
  if (size == 1) return;
  for (size_t i = 0; i + size <= bytes.size(); i += size) std::reverse(&bytes[i], &bytes[i] + size);
}

// The array of a parsed header: its buffer (2 MB pages where the kernel gives them) filled by
// `fill(data, n)` with the file's n data bytes, then made little-endian. `fill` is not called
// for an empty array (memcpy into an empty vector's data(), which may be null, is undefined).
template <class Fill>
IdxArray fill_idx(IdxHeader& h, Fill fill) {
  IdxArray& a = h.array;
  a.bytes = huge_page_buffer(static_cast<size_t>(h.count * itemsize(a.dtype)));
  if (!a.bytes.empty()) fill(a.bytes.data(), a.bytes.size());
  reverse_idx_elements(a.bytes, itemsize(a.dtype));
  return std::move(a);
}

}  // namespace

IdxArray parse_idx(std::string_view b, const std::string& name) {
  IdxHeader h = parse_idx_header(b, b.size(), name);
  return fill_idx(h, [&](uint8_t* to, size_t n) { std::memcpy(to, b.data() + h.header, n); });
}

// The header first, then the data read straight into the array's own buffer: no copy of the
// file, and no zero-filled buffer of its size read into and dropped (for MNIST's 47 MB of
// training images that was ~11.5K page faults, ~11 us each on the 2-vCPU VM). Every check is
// parse_idx's, made against the file's size before anything is allocated; a file that shrinks
// while read is refused, as read_file refuses it.
IdxArray load_idx(const std::string& path) {
  io::BoundedFile f(path, "[idx]");
  std::string head(static_cast<size_t>(std::min<uint64_t>(f.size(), kMaxIdxHeader)), '\0');
  f.read_at(head.data(), head.size(), 0);
  IdxHeader h = parse_idx_header(head, f.size(), path);
  return fill_idx(h, [&](uint8_t* to, size_t n) { f.read_at(to, n, h.header); });
}

}  // namespace maroon::data
