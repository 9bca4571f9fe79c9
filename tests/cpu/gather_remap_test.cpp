// A gather along the last axis whose index depends on the position along that axis alone
// (interpolate's along an image's width) runs as rows remapped by a table of the axis's offsets
// (cpu/gather.cpp's remap_last_axis): the reference's bits on every SIMD target and 1-3 threads,
// each CPU run checked to have taken the path; interpolate nearest and linear, float32 and
// float64, one- and two-byte elements, indices out of range (zeros), a source read through a
// permuted and a flipped view; and an index that varies along the rows must not take it.
#include <gtest/gtest.h>

#include "harness.h"
#include "cpu/gather.h"
#include "maroon/primitives.h"

namespace maroon::test {
namespace {

int64_t remaps() { return cpu::gather_last_axis_remaps(); }

void check_remap(const std::string& what, const std::function<Tensor()>& build) {
  check_path(what, build, remaps, "remap the rows by a table");
}

// An index of `len` positions along the last axis, broadcast over the rows before it: 0, 3, 1,
// 4, ... modulo `size`, with every fifth out of range (size + 2, or -1 for a signed dtype).
Tensor axis_index(const Shape& out, int64_t size, DType d) {
  std::vector<uint64_t> v;
  const int64_t len = out.back();
  for (int64_t j = 0; j < len; ++j) {
    int64_t p = (j * 3) % size;
    if (j % 5 == 4) p = d == DType::UInt8 ? size + 2 : -1;
    v.push_back(static_cast<uint64_t>(p) & (d == DType::UInt8 ? 0xFF : ~uint64_t{0}));
  }
  Shape one(out.size(), 1);
  one.back() = len;
  return tensor_of_bits(v, one, d).expand(out);
}

TEST(CpuGatherRemap, SameBitsAsTheReference) {
  for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::Int8}) {
    const std::string dn(dtype_name(d));
    for (DType id : {DType::Int32, DType::UInt8})
      check_remap(dn + " by " + std::string(dtype_name(id)), [=] {
        return random_bits_tensor({3, 4, 7}, d, 10).gather(2, axis_index({3, 4, 11}, 7, id));
      });
  }
  check_remap("a permuted source", [] {
    return random_bits_tensor({5, 6, 4}, DType::Float32, 20).permute({2, 0, 1}).gather(2, axis_index({4, 5, 9}, 6, DType::Int32));
  });
  check_remap("a flipped source", [] {
    return random_bits_tensor({5, 8}, DType::Float32, 21).flip({1}).gather(1, axis_index({5, 13}, 8, DType::Int32));
  });
  check_remap("interpolate nearest", [] { return random_bits_tensor({2, 3, 8, 8}, DType::Float32, 22).interpolate({16, 16}, "nearest"); });
  check_remap("interpolate linear", [] { return random_bits_tensor({2, 3, 8, 8}, DType::Float32, 23).interpolate({16, 12}, "linear"); });
}

TEST(CpuGatherRemap, AnIndexVaryingAlongTheRowsKeepsTheOtherPaths) {
  const int64_t before = remaps();
  check("an index per element", [] {
    Tensor ix = random_bits_tensor({4, 9}, DType::UInt8, 31).bitwise_and(Tensor::full({}, 7, DType::UInt8));
    return random_bits_tensor({4, 8}, DType::Float32, 30).gather(1, ix);
  });
  EXPECT_EQ(remaps(), before) << "an index varying along the rows took the remap";
}

}  // namespace
}  // namespace maroon::test
