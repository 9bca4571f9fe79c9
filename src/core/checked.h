// Checked size arithmetic (docs/spec.md contract rule 5: never an unchecked overflow). Every
// shape, stride, element count and byte size Maroon computes fits in int64 or is an error that
// names the op and the values it was given; nothing wraps.
//
// The rule for shapes is numpy's: the product of the non-zero dimensions, times the item size,
// fits in int64. So a shape with a zero next to huge dimensions is refused too, and then every
// partial product of a valid shape (a stride, a row, a batch count) and its byte size fit.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "core/view.h"
#include "maroon/dtype.h"

namespace maroon {

namespace checked {

// a * b and a + b, false (and `out` unspecified) when the result does not fit in int64.
inline bool mul(int64_t a, int64_t b, int64_t& out) { return !__builtin_mul_overflow(a, b, &out); }
inline bool add(int64_t a, int64_t b, int64_t& out) { return !__builtin_add_overflow(a, b, &out); }

// Whether every dimension is >= 0 and the product of the non-zero ones times `item` fits.
bool fits(const Shape& s, int64_t item = 1);

}  // namespace checked

// Throws ShapeError "[op] ..." naming the shape and dtype unless checked::fits(s, itemsize(d))
// (and every dimension is non-negative).
void check_shape(std::string_view op, const Shape& s, DType d);

// a * b and a + b, or ShapeError "[op] <what> a*b does not fit in 64 bits".
int64_t mul_or_throw(std::string_view op, std::string_view what, int64_t a, int64_t b);
int64_t add_or_throw(std::string_view op, std::string_view what, int64_t a, int64_t b);

// The largest number of bytes one buffer may have: MAROON_MAX_ALLOC_BYTES, else the machine's
// physical memory (an allocation beyond it could only end in the out-of-memory killer).
uint64_t max_alloc_bytes();
// Whether `count` items of `item` bytes are at most max_alloc_bytes(). Builds no message: every
// buffer allocation asks, and formatting one (a shape, an op name) cost ~1% of a training step.
bool alloc_fits(uint64_t count, uint64_t item);
// While alive, alloc_fits on this thread uses the cap read when it was made (realize() makes one:
// the setting is read once per graph instead of once per buffer, ~0.2 us each).
class AllocCapScope {
 public:
  AllocCapScope();
  ~AllocCapScope();
  AllocCapScope(const AllocCapScope&) = delete;
  AllocCapScope& operator=(const AllocCapScope&) = delete;

 private:
  uint64_t prev_;
};
// Throws maroon::MemoryError "[op] cannot allocate ... (what): over the limit ..." when `count`
// items of `item` bytes are more than max_alloc_bytes().
void check_alloc(std::string_view op, uint64_t count, uint64_t item, const std::string& what);

}  // namespace maroon
