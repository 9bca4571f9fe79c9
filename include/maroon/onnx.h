// ONNX import: load a model exported by any framework and run it with Maroon's defined bits.
//
//   maroon::onnx::Model m = maroon::onnx::load("model.onnx");
//   std::vector<maroon::Tensor> out = m.run({x});           // inputs in the graph's order
//   std::string d = maroon::tensors_digest(maroon::kInferenceTag, out);
//
// Parsing is Debian's libonnx/libprotobuf (the component is built when they are found, see
// src/onnx/CMakeLists.txt). Every node becomes a composition of Maroon's Tensor API, so each
// output's bits are those docs/spec.md defines for that composition (docs/onnx.md lists the
// operators, how each decomposes and what is refused). Nothing here links ONNX's headers.
//
// Bad input throws maroon::onnx::OnnxError (a FormatError) naming the file, or the node and its
// operator: a malformed or truncated protobuf, an unsupported operator or attribute, external data
// outside the model's folder, a missing input, a shape or dtype that does not match the graph.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "maroon/error.h"
#include "maroon/tensor.h"

namespace maroon::onnx {

class OnnxError : public FormatError {
 public:
  using FormatError::FormatError;
};

// A graph input or output as the model declares it. dims[i] is -1 where the dimension is dynamic
// (dim_params[i] then holds its symbolic name, or "" if it has none).
struct ValueInfo {
  std::string name;
  DType dtype = DType::Float32;
  bool has_shape = false;  // false: the model gives no shape (any rank is accepted)
  std::vector<int64_t> dims;
  std::vector<std::string> dim_params;
};

struct Graph;    // src/onnx/graph.h
class Replays;   // src/onnx/replay.h

// How a model's runs went (Model::run_stats): built plainly, captured, replayed, and the input
// signatures refused for replay (see Model::run).
struct RunStats {
  int64_t plain = 0, captures = 0, replays = 0, refused = 0;
};

class Model {
 public:
  explicit Model(std::shared_ptr<const Graph> g);
  // The graph inputs a caller must supply (initializers listed as inputs are optional and left
  // out), and the graph outputs, in the model's order.
  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;
  // The default domain's opset the model imports ("" / "ai.onnx").
  int64_t opset() const;
  std::string producer() const;  // producer_name and version, e.g. "pytorch 1.13.1"
  size_t node_count() const;
  // Runs the graph. Inputs are checked against the declared dtype, rank and fixed dimensions;
  // symbolic dimensions are bound per run and must agree wherever the same name appears.
  //
  // Repeated runs are replayed, as TinyJit replays a step (maroon/jit.h): the first run with an
  // input signature (the inputs' shapes and dtypes, the backend, SIMD target, rounding mode and
  // FusedScope) builds the graph lazily (the returned tensors realize when read); the second is
  // captured and later ones run the captured kernels on the new inputs without building the
  // graph or planning (the transformer benchmark: 14.9 -> 11.2 ms a run), returning realized
  // tensors with the same bits. A model that decides anything on the host from its inputs'
  // values (a shape given as an input, Gather's index check, If's condition) or draws random
  // numbers is never replayed; nor is a run inside a capture or under a trace, or one that names
  // an initializer as an input. A replayed output is a leaf: no gradient flows back through the
  // model into the inputs (set_replay(false) for that).
  std::vector<Tensor> run(const std::vector<Tensor>& inputs) const;
  std::vector<Tensor> run(const std::map<std::string, Tensor>& inputs) const;
  // Replaying on (the default) or off; off also drops the captures. Copies of a Model share it.
  void set_replay(bool on) const;
  bool replay() const;
  RunStats run_stats() const;

 private:
  std::shared_ptr<const Graph> g_;
  std::shared_ptr<Replays> replays_;
};

// Loads a .onnx file. External data is read relative to the file's folder and may not leave it.
Model load(const std::string& path);
// Parses a serialized ModelProto. `base_dir` is where external data lives ("": none allowed).
Model load_bytes(std::string_view bytes, const std::string& base_dir = "", const std::string& name = "<memory>");

// A serialized TensorProto (the backend test data's input_0.pb), as a Tensor.
Tensor load_tensor_pb(const std::string& path);

// The operators of the default domain that load() accepts, sorted.
std::vector<std::string> supported_ops();

}  // namespace maroon::onnx
