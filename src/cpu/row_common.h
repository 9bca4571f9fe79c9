// What the row kernels (row_softmax.cpp, row_layernorm.cpp) share outside their per-target code:
// the task split, the lane bound and the dtype test their pattern matchers apply to every node.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/graph.h"

namespace maroon::cpu::rows {

constexpr int64_t kRowsPerTask = 32;  // a function of nothing but the shape: the split is by data
constexpr size_t kMaxLanes = 64;      // a group's rows on any target (2048-bit vectors; AVX-512 has 16)

// The row kernels compute float32 in round-to-nearest only (the lane ops' mode).
inline bool is_f32(const Node* n) { return n->dtype == DType::Float32 && n->rnd == Round::NearestEven; }

// A row's scalar tail: the product stored, a NaN as the canonical quiet NaN (docs/spec.md), as the
// vector part's Canonical() does.
inline void store_canonical(float p, float* out) {
  if (p != p) {
    const uint32_t q = 0x7FC00000u;
    std::memcpy(out, &q, 4);
  } else {
    *out = p;
  }
}

}  // namespace maroon::cpu::rows
