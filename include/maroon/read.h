// Reading a tensor's elements into memory the caller owns (numpy's arrays in the Python
// binding, to_vector): one memcpy for a contiguous view of a realized buffer, any other view row
// by row, so data leaves at memory speed with one copy.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "maroon/tensor.h"

namespace maroon {

// Writes t's elements in row-major order as raw little-endian bytes (exactly what t.bytes()
// returns) to `dst`, which must hold nbytes == numel * itemsize bytes (ShapeError otherwise).
// Realizes t.
void copy_bytes_to(const Tensor& t, void* dst, size_t nbytes);

// `nbytes` bytes of host memory, 64-byte aligned, from the engine's cache of freed buffers: in a
// steady state (a loop reading one result per step) pages already touched, where fresh ones would
// cost a fault each. The memory is the caller's alone (no tensor reads or writes it); releasing
// the last handle returns it to the cache.
std::shared_ptr<uint8_t> cached_bytes(size_t nbytes);

}  // namespace maroon
