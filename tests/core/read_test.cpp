// Reading a tensor's elements (bytes, copy_bytes_to, to_vector, bits) against the plain
// definition: element by element in row-major order, each through the view's index() into the
// buffer, padding as zero bits. The fast paths (one memcpy for a contiguous view, runs of
// consecutive indices per row) must give exactly these bytes for every dtype and view.
#include <gtest/gtest.h>

#include <random>

#include "maroon/read.h"
#include "util.h"

namespace maroon::test {
namespace {

// The definition: what Tensor::bits() did before it was built on bytes().
std::vector<uint8_t> bytes_by_index(const Tensor& t) {
  Tensor x = t;
  x.realize();
  const Node& n = *x.node();
  const size_t sz = itemsize(x.dtype());
  std::vector<uint8_t> out;
  if (x.numel() == 0) return out;
  std::vector<int64_t> idx(n.shape.size(), 0);
  while (true) {
    int64_t i = n.view.index(idx.data());
    uint64_t v = i < 0 ? 0 : n.buffer->load(i);
    const auto* p = reinterpret_cast<const uint8_t*>(&v);  // little-endian hosts only
    out.insert(out.end(), p, p + sz);
    size_t d = n.shape.size();
    while (d > 0 && ++idx[d - 1] == n.shape[d - 1]) idx[--d] = 0;
    if (d == 0) break;
  }
  return out;
}

Tensor random_tensor(DType d, const Shape& s, std::mt19937_64& rng) {
  std::vector<uint8_t> b(static_cast<size_t>(numel(s)) * itemsize(d));
  for (auto& v : b) v = static_cast<uint8_t>(d == DType::Bool ? rng() & 1 : rng());
  return Tensor::from_bytes(b.data(), b.size(), s, d);
}

// Views of a realized (4, 6, 5) buffer: none, transposed, sliced (with a step through flip),
// expanded, padded, zero-size, a scalar, a permute then reshape (two views), a contiguous
// prefix of the buffer.
std::vector<std::pair<std::string, Tensor>> views(const Tensor& x) {
  Tensor flat = x.reshape({120});
  return {
      {"whole", x},
      {"transposed", x.permute({2, 0, 1})},
      {"sliced", x.shrink({{1, 3}, {2, 6}, {0, 5}})},
      {"flipped", x.flip({1})},
      {"expanded", x.shrink({{0, 4}, {0, 1}, {0, 5}}).expand({4, 3, 5})},
      {"padded", x.pad({{1, 0}, {0, 2}, {3, 1}})},
      {"zero-size", x.shrink({{0, 4}, {2, 2}, {0, 5}})},
      {"scalar", flat.shrink({{7, 8}}).reshape({})},
      {"permute-reshape", x.permute({1, 0, 2}).reshape({24, 5})},
      {"prefix", flat.shrink({{0, 30}})},
      {"offset", flat.shrink({{30, 60}}).reshape({5, 6})},
  };
}

TEST(Read, EveryDTypeAndViewMatchesTheElementByElementDefinition) {
  std::mt19937_64 rng(18);
  for (DType d : kConcreteDTypes) {
    Tensor x = random_tensor(d, {4, 6, 5}, rng);
    for (auto& [name, v] : views(x)) {
      SCOPED_TRACE(std::string(dtype_name(d)) + " " + name);
      std::vector<uint8_t> want = bytes_by_index(v);
      ASSERT_EQ(want.size(), static_cast<size_t>(v.numel()) * itemsize(d));
      EXPECT_EQ(v.bytes(), want);
      std::vector<uint8_t> into(want.size() + 1, 0xA5);  // one byte past the end must stay
      copy_bytes_to(v, into.data(), want.size());
      EXPECT_EQ(std::vector<uint8_t>(into.begin(), into.end() - 1), want);
      EXPECT_EQ(into.back(), 0xA5);
      std::vector<uint64_t> bits = v.bits();
      ASSERT_EQ(bits.size(), static_cast<size_t>(v.numel()));
      for (size_t i = 0; i < bits.size(); ++i) {
        uint64_t w = 0;
        std::memcpy(&w, want.data() + i * itemsize(d), itemsize(d));
        ASSERT_EQ(bits[i], w) << "element " << i;
      }
    }
  }
}

TEST(Read, ToVectorIsTheBytes) {
  std::mt19937_64 rng(7);
  Tensor f = random_tensor(DType::Float32, {3, 7}, rng), i = random_tensor(DType::Int64, {2, 5}, rng);
  for (const Tensor& v : {f, f.permute({1, 0}), f.shrink({{1, 3}, {2, 5}})}) {
    std::vector<float> got = v.to_vector<float>();
    std::vector<uint8_t> want = bytes_by_index(v);
    ASSERT_EQ(got.size() * 4, want.size());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size()), 0);
  }
  std::vector<int64_t> got = i.flip({0}).to_vector<int64_t>();
  std::vector<uint8_t> want = bytes_by_index(i.flip({0}));
  ASSERT_EQ(got.size() * 8, want.size());
  EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size()), 0);
  EXPECT_THROW(f.to_vector<double>(), DTypeError);
}

TEST(Read, ComputedResultsAndWrongRoomSizes) {
  std::mt19937_64 rng(3);
  Tensor a = random_tensor(DType::Int32, {8, 9}, rng);
  Tensor s = (a + a).permute({1, 0});  // a kernel's result, then a view of it
  EXPECT_EQ(s.bytes(), bytes_by_index(s));
  std::vector<uint8_t> room(a.numel() * 4 + 4);
  EXPECT_THROW(copy_bytes_to(a, room.data(), room.size()), ShapeError);
  EXPECT_THROW(copy_bytes_to(a, room.data(), room.size() - 8), ShapeError);
  Tensor empty = Tensor::full({0, 3}, 1.0, DType::Float32);
  EXPECT_TRUE(empty.bytes().empty());
  EXPECT_NO_THROW(copy_bytes_to(empty, nullptr, 0));
}

}  // namespace
}  // namespace maroon::test
