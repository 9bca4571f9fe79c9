// TensorProto -> Tensor (the only file besides load.cpp that sees protobuf types).
#pragma once
#include <string>

#include <onnx/onnx_pb.h>

#include "maroon/tensor.h"

namespace maroon::onnx {

// Converts `t` (raw_data, the typed fields, or external data under `base_dir`; base_dir "" means
// no external data is allowed). `where` names the tensor in messages.
Tensor tensor_from_proto(const ::onnx::TensorProto& t, const std::string& base_dir, const std::string& where);

// Parses a serialized message of type M, refusing a malformed or truncated one.
template <class M>
bool parse_message(M& m, std::string_view bytes);

}  // namespace maroon::onnx
