// Tensor::dot's graph made node by node where the operands share one dtype (dot_graph.cpp).
#pragma once
#include <cstdint>
#include <optional>

#include "maroon/tensor.h"

namespace maroon::api {

// Whether dot_direct builds this product: both operands and the result of one dtype that sums
// in itself (float32, float64, int32, int64...), so the composition casts nothing.
bool dot_direct_applies(DType x, DType w, std::optional<DType> dtype);

// x.reshape(xs) * w.reshape(ws) (its last two axes swapped when w_swap), summed over the last
// axis: the nodes the composition in Tensor::dot builds, without a Tensor for each (xs and ws
// are moved into them). nullopt, xs and ws untouched, where the shapes do not broadcast (the
// caller's composition then throws the error).
std::optional<Tensor> dot_direct(const Tensor& x, const Tensor& w, Shape& xs, Shape& ws, bool w_swap);

// Products built by dot_direct in this process (tests check that the path ran).
uint64_t dot_direct_graphs();

}  // namespace maroon::api
