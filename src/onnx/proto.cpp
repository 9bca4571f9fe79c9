// ONNX TensorProto -> Maroon Tensor: dtypes, raw_data, the typed repeated fields, external data.
//
// Every field is checked against the declared dims before any byte is copied, so a lying file
// (dims that overflow, raw_data of the wrong length, external data past the end of its file or
// outside the model's folder) is refused with the tensor's name and the fact that is wrong.
#include "onnx/proto.h"


#include <filesystem>

#include <google/protobuf/io/coded_stream.h>

#include "io/files.h"
#include "onnx/graph.h"

namespace maroon::onnx {

namespace fs = std::filesystem;

DType dtype_from_onnx(int32_t t, const std::string& where) {
  using P = ::onnx::TensorProto;
  switch (t) {
    case P::FLOAT: return DType::Float32;
    case P::UINT8: return DType::UInt8;
    case P::INT8: return DType::Int8;
    case P::UINT16: return DType::UInt16;
    case P::INT16: return DType::Int16;
    case P::INT32: return DType::Int32;
    case P::INT64: return DType::Int64;
    case P::BOOL: return DType::Bool;
    case P::FLOAT16: return DType::Float16;
    case P::DOUBLE: return DType::Float64;
    case P::UINT32: return DType::UInt32;
    case P::UINT64: return DType::UInt64;
    case P::BFLOAT16: return DType::BFloat16;
    default: break;
  }
  std::string name = P::DataType_IsValid(t) ? P::DataType_Name(static_cast<P::DataType>(t)) : std::to_string(t);
  throw OnnxError(where + ": element type " + name + " has no Maroon dtype (strings and complex numbers are refused)");
}

template <class M>
bool parse_message(M& m, std::string_view bytes) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  in.SetTotalBytesLimit(INT32_MAX);
  in.SetRecursionLimit(kMaxMessageDepth);  // graph.h: deeper subgraph nesting is refused
  return m.ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
}
template bool parse_message(::onnx::ModelProto&, std::string_view);
template bool parse_message(::onnx::TensorProto&, std::string_view);

namespace {

// numel of `dims`, refusing negative dims and products past 2^62 bytes.
// The element count, or OnnxError. The bound is on the product of the nonzero dims, as the
// engine's own shape check (checked::fits) has it: an empty tensor's strides are still products
// of its other dims, so (0, 2^40, 2^40) is refused here rather than by Tensor::from_bytes' error
// (found by the ONNX fuzzer, 2026-12-04).
int64_t checked_numel(const ::onnx::TensorProto& t, size_t item, const std::string& where) {
  int64_t span = 1;  // the nonzero dims' product
  bool empty = false;
  for (int64_t d : t.dims()) {
    if (d < 0) throw OnnxError(where + ": negative dimension " + std::to_string(d));
    if (d == 0) {
      empty = true;
      continue;
    }
    if (span > (INT64_C(1) << 62) / static_cast<int64_t>(item) / d)
      throw OnnxError(where + ": dims overflow the addressable size");
    span *= d;
  }
  return empty ? 0 : span;
}

// Little-endian bytes of the low `size` bytes of each value (the typed fields hold wider ints).
template <class Field>
std::string le_bytes(const Field& f, size_t size) {
  std::string out(f.size() * size, '\0');
  for (int i = 0; i < f.size(); ++i) {
    uint64_t v;
    if constexpr (std::is_same_v<std::decay_t<decltype(f.Get(0))>, float>) {
      uint32_t u;
      float x = f.Get(i);
      std::memcpy(&u, &x, 4);
      v = u;
    } else if constexpr (std::is_same_v<std::decay_t<decltype(f.Get(0))>, double>) {
      double x = f.Get(i);
      std::memcpy(&v, &x, 8);
    } else {
      v = static_cast<uint64_t>(f.Get(i));
    }
    for (size_t b = 0; b < size; ++b) out[i * size + b] = static_cast<char>(v >> (8 * b));
  }
  return out;
}

// The typed field ONNX stores this data type in, as little-endian element bytes.
std::string typed_bytes(const ::onnx::TensorProto& t, DType d, const std::string& where) {
  using P = ::onnx::TensorProto;
  size_t item = itemsize(d);
  switch (t.data_type()) {
    case P::FLOAT: return le_bytes(t.float_data(), 4);
    case P::DOUBLE: return le_bytes(t.double_data(), 8);
    case P::INT64: return le_bytes(t.int64_data(), 8);
    case P::UINT32: case P::UINT64: return le_bytes(t.uint64_data(), item);
    case P::INT32: case P::INT16: case P::INT8: case P::UINT16: case P::UINT8: case P::BOOL:
    case P::FLOAT16: case P::BFLOAT16:
      return le_bytes(t.int32_data(), item);  // float16/bfloat16: the bits, in the low 16
    default: throw OnnxError(where + ": no typed field for this element type");
  }
}

// The bytes external data names: location relative to base_dir, never leaving it.
std::string external_bytes(const ::onnx::TensorProto& t, const std::string& base_dir, const std::string& where) {
  if (base_dir.empty()) throw OnnxError(where + ": external data, but the model was not loaded from a file");
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    try {
      if (kv.key() == "location") location = kv.value();
      else if (kv.key() == "offset") offset = std::stoll(kv.value());
      else if (kv.key() == "length") length = std::stoll(kv.value());
    } catch (const std::exception&) {
      throw OnnxError(where + ": external data " + kv.key() + " '" + kv.value() + "' is not an integer");
    }
  }
  fs::path rel(location);
  if (location.empty() || rel.is_absolute() || location.find('\0') != std::string::npos)
    throw OnnxError(where + ": external data location '" + location + "' must be a relative path");
  for (const auto& part : rel)
    if (part == "..") throw OnnxError(where + ": external data location '" + location + "' leaves the model's folder");
  std::error_code ec;
  fs::path base = fs::weakly_canonical(fs::path(base_dir), ec);
  fs::path full = fs::weakly_canonical(fs::path(base_dir) / rel, ec);
  auto [b, f] = std::mismatch(base.begin(), base.end(), full.begin(), full.end());
  if (ec || b != base.end())  // a symbolic link out of the folder
    throw OnnxError(where + ": external data location '" + location + "' resolves outside the model's folder");
  // io's bounded open: a regular file (a FIFO named as external data would block an ifstream for
  // ever) within MAROON_MAX_FILE_BYTES.
  try {
    io::BoundedFile f(full.string(), where + ": external data");
    int64_t size = static_cast<int64_t>(f.size());
    if (offset < 0 || offset > size || length < -1 || (length >= 0 && length > size - offset))
      throw OnnxError(where + ": external data offset " + std::to_string(offset) + " length " + std::to_string(length) +
                      " lies outside '" + location + "' (" + std::to_string(size) + " bytes)");
    if (length < 0) length = size - offset;
    std::string out(static_cast<size_t>(length), '\0');
    f.read_at(out.data(), out.size(), static_cast<uint64_t>(offset));
    return out;
  } catch (const OnnxError&) {
    throw;
  } catch (const FormatError& e) {  // io's refusals, under OnnxError like every other here
    throw OnnxError(e.what());
  }
}

}  // namespace

Tensor tensor_from_proto(const ::onnx::TensorProto& t, const std::string& base_dir, const std::string& where) {
  if (t.has_segment()) throw OnnxError(where + ": segmented tensors are refused");
  DType d = dtype_from_onnx(t.data_type(), where);
  int64_t n = checked_numel(t, itemsize(d), where);
  Shape shape(t.dims().begin(), t.dims().end());
  std::string ext;
  const std::string* bytes;
  std::string typed;
  if (t.data_location() == ::onnx::TensorProto::EXTERNAL) {
    ext = external_bytes(t, base_dir, where);
    bytes = &ext;
  } else if (t.has_raw_data()) {
    bytes = &t.raw_data();
  } else {
    typed = typed_bytes(t, d, where);
    bytes = &typed;
  }
  size_t want = static_cast<size_t>(n) * itemsize(d);
  if (bytes->size() != want)
    throw OnnxError(where + ": holds " + std::to_string(bytes->size()) + " bytes of data, its dims " +
                    shape_str(shape) + " of " + std::string(dtype_name(d)) + " need " + std::to_string(want));
  if (d == DType::Bool)
    for (char c : *bytes)
      if (c != 0 && c != 1) throw OnnxError(where + ": a bool element is neither 0 nor 1");
  return Tensor::from_bytes(bytes->data(), bytes->size(), shape, d);
}

Tensor load_tensor_pb(const std::string& path) {
  std::string bytes;
  try {
    bytes = io::read_file(path, "[onnx] tensor");  // bounded, regular files only
  } catch (const FormatError& e) {
    throw OnnxError(e.what());
  }
  ::onnx::TensorProto t;
  if (!parse_message(t, bytes)) throw OnnxError(path + ": not a valid serialized TensorProto (malformed or truncated)");
  return tensor_from_proto(t, "", path + " (tensor '" + t.name() + "')");
}

}  // namespace maroon::onnx
