// The safetensors file format (huggingface/safetensors), as tinygrad's nn.state reads and writes
// it: 8 bytes little-endian header length N, N bytes of JSON, then the tensors' raw bytes.
#pragma once
#include <map>
#include <string>
#include <string_view>

#include "maroon/error.h"
#include "maroon/nn.h"

namespace maroon::nn {

// tinygrad's safe_save: tensors in the given order, dtype names as safetensors spells them (F32,
// F64, F16, BF16, I8..I64, U8..U64, BOOL), header padded with spaces to 8 bytes; metadata goes
// under "__metadata__". Throws maroon::Error when the file cannot be written.
void safe_save(const StateDict& tensors, const std::string& path,
               const std::map<std::string, std::string>& metadata = {});
std::string safe_save_bytes(const StateDict& tensors, const std::map<std::string, std::string>& metadata = {});
// The file's first part: the 8-byte header length and the JSON header (padded); the tensors'
// bytes follow it in order. Reads only names, dtypes and shapes (nothing is realized).
std::string safe_save_header(const StateDict& tensors, const std::map<std::string, std::string>& metadata = {});

// Validates everything (header length within file, JSON well formed, known dtypes, shapes vs
// byte sizes, offsets contiguous/non-overlapping/in bounds, no trailing bytes); throws
// maroon::FormatError with a clear message. Returns tensors in file-offset order.
StateDict safe_load(const std::string& path);
StateDict safe_load_bytes(std::string_view bytes);
std::map<std::string, std::string> safe_load_metadata(const std::string& path);

}  // namespace maroon::nn
