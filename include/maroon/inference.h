// Inference with a digest of its outputs (docs/spec-model.md, "Inference"): a model file, input
// images from an IDX, .npy or raw file (uint8 pixels converted by the spec's rule, or float32
// taken as they are), the outputs, their digest (maroon/digest.h) and, for classifiers, the
// classes. The same result, byte for byte, from `maroon infer`, Python (maroon.infer), this API
// and the C ABI (maroon/infer.h).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "maroon/models.h"
#include "maroon/tensor.h"

namespace maroon::infer {

// Input file formats. Auto decides by the file name: *.npy is npy, *.idx and *-ubyte are idx,
// *.raw, *.bin and *.u8 are raw (N*784 uint8 pixels); anything else must be named.
enum class Format { Auto, Idx, Npy, Raw };
Format parse_format(std::string_view name);  // "auto", "idx", "npy", "raw"; throws maroon::Error
std::string_view format_name(Format f);
Format resolve_format(Format f, const std::string& path);  // Auto -> by name, else f

// The model input for an array of images: uint8 pixels p become MUL(CAST(p, float32),
// RECIPROCAL(255.0f)) (tinygrad's `x.float() / 255`), float32 elements are used unchanged; any
// other dtype is an error. Accepted shapes: (28,28) and (784,) hold one image, (N,28,28),
// (N,1,28,28) and (N,784) hold N. The result is float32 (N,1,28,28).
Tensor images_to_input(const Tensor& images, const std::string& what = "input");

struct Inputs {
  Tensor x;                 // float32 (N,1,28,28), the model's input
  Format format;            // the format the bytes were read as
  int64_t start, count;     // the images [start, start+count) of the file
  std::string file_sha256;  // SHA-256 of the whole input file's bytes
};
// Reads images [start, start+count) (count < 0: to the end) from a file's bytes. Throws
// maroon::FormatError naming `name` (bad file, wrong dtype or shape, an empty or out-of-range
// selection).
Inputs parse_inputs(std::string_view bytes, Format f, const std::string& name, int64_t start = 0, int64_t count = -1);
Inputs load_inputs(const std::string& path, Format f = Format::Auto, int64_t start = 0, int64_t count = -1);
// An in-memory array (Python's numpy input) is read as the .npy file numpy.save writes for it
// (data::npy_bytes), so its JSON document is that file's.
Inputs array_inputs(const Tensor& images, int64_t start = 0, int64_t count = -1);

struct Model {
  std::unique_ptr<models::MnistModel> net;
  std::string file_sha256;  // SHA-256 of the weights file's bytes
};
// A Maroon weights file (.safetensors of the MNIST MLP or CNN, as `maroon train` writes it).
Model load_model(const std::string& path);
Model parse_model(std::string_view bytes, const std::string& name);

struct Result {
  std::vector<Tensor> outputs;  // realized; for the MNIST models one float32 (N,10): the logits
  std::string digest;           // tensors_digest(kInferenceTag, outputs)
  std::vector<int64_t> classes; // per row, the first index of the row's maximum (10 if it holds NaN)
};
// Runs the model with training off, `batch` images at a time: each image's outputs depend only
// on that image, so the batch size never changes a bit (tested).
Result run(models::MnistModel& model, const Tensor& x, int64_t batch = 256);

// The JSON document `maroon infer --json` prints: format, model (kind, sha256), input (format,
// sha256, start, count), outputs (dtype, shape), digest, classes. It names no path, so the same
// model and input give the same document from every caller.
std::string to_json(const Model& m, const Inputs& in, const Result& r);

}  // namespace maroon::infer
