// The IDX reader: every size is checked against the bytes actually present before it is used.
#include "maroon/idx.h"

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

IdxArray parse_idx(std::string_view b, const std::string& name) {
  auto fail = [&](const std::string& what) { return FormatError("[idx] '" + name + "': " + what); };
  auto u8 = [&](size_t i) { return static_cast<uint8_t>(b[i]); };
  if (b.size() < 4) throw fail("file of " + std::to_string(b.size()) + " bytes is shorter than the 4-byte magic");
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
  if (b.size() < header)
    throw fail("truncated header: rank " + std::to_string(rank) + " needs " + std::to_string(header) +
               " bytes, file has " + std::to_string(b.size()));
  size_t size = itemsize(a.dtype);
  uint64_t count = 1, avail = (b.size() - header) / size;
  for (size_t d = 0; d < rank; ++d) {
    size_t at = 4 + 4 * d;
    uint32_t dim = uint32_t(u8(at)) << 24 | uint32_t(u8(at + 1)) << 16 | uint32_t(u8(at + 2)) << 8 | u8(at + 3);
    a.shape.push_back(dim);
    // Keeping count at most what the file can hold rules out overflow (dim < 2^32).
    if (count != 0 && dim != 0 && count > avail / dim) {
      throw fail("truncated data: shape " + shape_str(a.shape) + (d + 1 < rank ? "..." : "") + " needs more than the " +
                 std::to_string(b.size() - header) + " data bytes present");
    }
    count *= dim;
  }
  // numpy's rule (core/checked.h): a zero dimension does not excuse huge other ones, whose
  // strides would not fit in 64 bits.
  if (!checked::fits(a.shape, static_cast<int64_t>(size)))
    throw fail("shape " + shape_str(a.shape) + " is too large: its size in bytes does not fit in 64 bits");
  uint64_t need = count * size;
  if (b.size() - header < need)
    throw fail("truncated data: shape " + shape_str(a.shape) + " needs " + std::to_string(need) + " bytes, file has " +
               std::to_string(b.size() - header));
  if (b.size() - header > need)
    throw fail(std::to_string(b.size() - header - need) + " trailing bytes after the data of shape " +
               shape_str(a.shape));
  a.bytes = huge_page_buffer(need);
  const uint8_t* src = reinterpret_cast<const uint8_t*>(b.data()) + header;
  if (size == 1) {  // one byte has no order to reverse
    std::memcpy(a.bytes.data(), src, need);
  } else {
    for (uint64_t i = 0; i < count; ++i)
      for (size_t k = 0; k < size; ++k) a.bytes[i * size + k] = src[i * size + (size - 1 - k)];
  }
  return a;
}

IdxArray load_idx(const std::string& path) {
  return parse_idx(io::read_file(path, "[idx]"), path);
}

}  // namespace maroon::data
