// What the buffer cache (buffer.cpp) tells about itself, for tests and reports.
#pragma once
#include <cstdint>

namespace maroon {

// Bytes of the blocks the buffer cache has taken fresh from the allocator so far (it never
// decreases): memory the process touches for the first time. A loop whose steps reuse their
// buffers stops adding to it (tests/api/jit_memory_test.cpp).
uint64_t buffer_fresh_bytes();

// How many 2 MiB pieces fresh blocks were populated in by the thread pool (buffer.cpp's
// populate(): blocks of two pieces or more, when the pool has a worker).
uint64_t buffer_populate_pieces();

// The most bytes of buffers alive at once since the last reset_buffer_peak() (or the start):
// a step's working set.
uint64_t buffer_peak_bytes();
void reset_buffer_peak();

// For tests: while on, every buffer's bytes are filled with a pattern (0xA5) when it is made, so
// that an output element a kernel fails to write shows (a freed block is reused by the next
// buffer of its size class, which in the harness's repeated runs already held the right bytes).
void set_buffer_poison(bool on);

}  // namespace maroon
