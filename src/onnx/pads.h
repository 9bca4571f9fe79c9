// Sliding-window attributes shared by Conv and the pools: strides, dilations, pads (explicit or
// auto_pad) and, for the pools, ceil_mode as extra padding at the end of each axis.
#pragma once
#include <vector>

#include "onnx/graph.h"

namespace maroon::onnx {

struct Window {
  std::vector<int64_t> strides, dilations;
  std::vector<int64_t> begin, end;  // per spatial axis, ONNX's pads split in two
  std::vector<int64_t> ceil_extra;  // per spatial axis: padding ceil_mode adds after `end`
};

// Reads strides, dilations, pads and auto_pad (and ceil_mode when `pool`) for an input of shape
// `x` (N, C, spatial...) and a kernel of `kernel` (spatial only), checking every length.
Window window(const OpCtx& c, const Shape& x, const Shape& kernel, bool pool);

// The Tensor API's flat padding (tinygrad's order: last axis first, (before, after) each).
std::vector<int64_t> tinygrad_pads(const Window& w);

}  // namespace maroon::onnx
