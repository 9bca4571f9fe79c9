// The canonical serialisation of a list of tensors and its SHA-256, defined in
// docs/spec-model.md ("Digests of tensors"): a domain tag, then for each tensor its dtype name,
// shape and element bytes, every length a u64 little-endian. Model-agnostic: the inference
// digest is tensors_digest(kInferenceTag, outputs), whatever the model (MNIST weights today,
// ONNX graphs later).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "maroon/sha256.h"
#include "maroon/tensor.h"

namespace maroon {

// The tag of the inference digest (20 bytes: the text and a NUL).
inline constexpr std::string_view kInferenceTag{"maroon-inference/1\0", 19};

// Appends one tensor's record (u64 len(dtype name), the name, u64 rank, u64 per dim, u64 byte
// count, the row-major little-endian elements) to `h`. Realizes the tensor.
void hash_tensor(Sha256& h, const Tensor& t);
// SHA-256 of tag || u64 count || each tensor's record, as lowercase hex.
std::string tensors_digest(std::string_view tag, const std::vector<Tensor>& tensors);
// The bytes tensors_digest hashes (for the spec's vectors and for independent checkers).
std::string tensors_serialization(std::string_view tag, const std::vector<Tensor>& tensors);

}  // namespace maroon
