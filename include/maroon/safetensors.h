// The safetensors file format (huggingface/safetensors), as tinygrad's nn.state reads and writes
// it: 8 bytes little-endian header length N, N bytes of JSON, then the tensors' raw bytes.
#pragma once
#include <map>
#include <string>
#include <string_view>

#include "maroon/error.h"
#include "maroon/nn.h"

namespace maroon::nn {

// The metadata key of the optional data checksum: the SHA-256 of the data section (everything
// after the header), as 64 lowercase hex digits. safetensors itself has none, so a flipped bit
// in a tensor would load silently; a file that carries this key is verified on every load.
inline constexpr const char* kDataSha256Key = "maroon.data_sha256";

// tinygrad's safe_save: tensors in the given order, dtype names as safetensors spells them (F32,
// F64, F16, BF16, I8..I64, U8..U64, BOOL), header padded with spaces to 8 bytes; metadata goes
// under "__metadata__". With `checksum` (or when `metadata` already has the key, e.g. read from
// a checksummed file) metadata gets a fresh kDataSha256Key; off by default, so that the file has
// exactly tinygrad's bytes. The file is written atomically (io::AtomicFile).
// Throws maroon::Error when the file cannot be written.
void safe_save(const StateDict& tensors, const std::string& path,
               const std::map<std::string, std::string>& metadata = {}, bool checksum = false);
std::string safe_save_bytes(const StateDict& tensors, const std::map<std::string, std::string>& metadata = {},
                            bool checksum = false);
// The file's first part: the 8-byte header length and the JSON header (padded); the tensors'
// bytes follow it in order. Reads only names, dtypes and shapes (nothing is realized) unless a
// checksum is asked for (`checksum`, or kDataSha256Key in `metadata`): then it reads the data to
// hash it. Without one the bytes are exactly tinygrad's (checkpoint digests depend on that).
std::string safe_save_header(const StateDict& tensors, const std::map<std::string, std::string>& metadata = {},
                             bool checksum = false);

// Validates everything (header length within file, JSON well formed, known dtypes, shapes vs
// byte sizes, offsets contiguous/non-overlapping/in bounds, no trailing bytes, and the data
// checksum when the metadata has one); throws maroon::FormatError with a clear message. Reads
// only regular files up to MAROON_MAX_FILE_BYTES (io::read_file). Returns tensors in file-offset
// order.
StateDict safe_load(const std::string& path);
StateDict safe_load_bytes(std::string_view bytes);
std::map<std::string, std::string> safe_load_metadata(const std::string& path);

}  // namespace maroon::nn
