// Inference with an output digest (maroon/inference.h).
#include "maroon/inference.h"

#include <algorithm>
#include <cstring>

#include "data/json.h"
#include "io/files.h"
#include "maroon/digest.h"
#include "maroon/idx.h"
#include "maroon/npy.h"
#include "maroon/round.h"
#include "maroon/safetensors.h"
#include "maroon/sha256.h"

namespace maroon::infer {

namespace {

constexpr int64_t kSide = models::kImageSide, kPixels = kSide * kSide;

bool ends_with(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// How many images an array of this shape holds, or -1 if the shape is not an accepted one.
int64_t image_count(const Shape& s) {
  if (s == Shape{kSide, kSide} || s == Shape{kPixels}) return 1;
  if (s.size() == 3 && s[1] == kSide && s[2] == kSide) return s[0];
  if (s.size() == 4 && s[1] == 1 && s[2] == kSide && s[3] == kSide) return s[0];
  if (s.size() == 2 && s[1] == kPixels) return s[0];
  return -1;
}

}  // namespace

Format parse_format(std::string_view name) {
  if (name == "auto") return Format::Auto;
  if (name == "idx") return Format::Idx;
  if (name == "npy") return Format::Npy;
  if (name == "raw") return Format::Raw;
  throw ShapeError("[infer] unknown input format '" + std::string(name) + "' (expected idx, npy, raw or auto)");
}

std::string_view format_name(Format f) {
  switch (f) {
    case Format::Auto: return "auto";
    case Format::Idx: return "idx";
    case Format::Npy: return "npy";
    case Format::Raw: return "raw";
  }
  return "auto";
}

Format resolve_format(Format f, const std::string& path) {
  if (f != Format::Auto) return f;
  if (ends_with(path, ".npy")) return Format::Npy;
  if (ends_with(path, ".idx") || ends_with(path, "-ubyte")) return Format::Idx;
  if (ends_with(path, ".raw") || ends_with(path, ".bin") || ends_with(path, ".u8")) return Format::Raw;
  throw ShapeError("[infer] cannot tell the format of '" + path +
              "' from its name (*.npy, *.idx, *-ubyte, *.raw, *.bin, *.u8): give its format (idx, npy or raw)");
}

Tensor images_to_input(const Tensor& images, const std::string& what) {
  int64_t n = image_count(images.shape());
  if (n < 0)
    throw ShapeError("[infer] " + what + " has shape " + shape_str(images.shape()) +
                     "; images must be (28,28), (784,), (N,28,28), (N,1,28,28) or (N,784)");
  // The spec's conversion rounds to nearest-even whatever the caller's mode.
  RoundingScope nearest(Round::NearestEven);
  if (images.dtype() == DType::UInt8) {
    std::vector<uint8_t> px = images.bytes();
    return models::images_to_input(px.data(), n);
  }
  if (images.dtype() == DType::Float32) return images.reshape({n, 1, kSide, kSide});
  throw DTypeError("[infer] " + what + " holds " + std::string(dtype_name(images.dtype())) +
                   " elements; images must be uint8 pixels or float32");
}

Inputs parse_inputs(std::string_view bytes, Format f, const std::string& name, int64_t start, int64_t count) {
  Format fmt = resolve_format(f, name);
  Tensor all = Tensor::full({}, 0, DType::UInt8);
  if (fmt == Format::Idx) {
    all = data::parse_idx(bytes, name).tensor();
  } else if (fmt == Format::Npy) {
    all = data::parse_npy(bytes, name).tensor();
  } else {
    if (bytes.empty() || bytes.size() % kPixels != 0)
      throw FormatError("[infer] '" + name + "': a raw file holds N*784 uint8 pixels, this one has " +
                        std::to_string(bytes.size()) + " bytes");
    all = Tensor::from_bytes(bytes.data(), bytes.size(), {static_cast<int64_t>(bytes.size()) / kPixels, kPixels},
                             DType::UInt8);
  }
  int64_t n = image_count(all.shape());
  if (n < 0) (void)images_to_input(all, "'" + name + "'");  // throws, naming the shape
  if (start < 0 || start > n || (count >= 0 && count > n - start) || (count < 0 ? n - start : count) == 0)
    throw FormatError("[infer] '" + name + "' holds " + std::to_string(n) + " images; images [" +
                      std::to_string(start) + ", " + (count < 0 ? "end" : std::to_string(start + count)) +
                      ") is empty or out of range");
  int64_t c = count < 0 ? n - start : count;
  Tensor sel = all.reshape({n, kPixels}).shrink({{start, start + c}, {0, kPixels}});
  return Inputs{images_to_input(sel, "'" + name + "'"), fmt, start, c, sha256_hex(bytes)};
}

Inputs load_inputs(const std::string& path, Format f, int64_t start, int64_t count) {
  Format fmt = resolve_format(f, path);  // before reading: a bad name is reported first
  return parse_inputs(io::read_file(path, "[infer] input"), fmt, path, start, count);
}

Inputs array_inputs(const Tensor& images, int64_t start, int64_t count) {
  data::NpyArray a{images.dtype(), images.shape(), images.bytes()};
  return parse_inputs(data::npy_bytes(a), Format::Npy, "<array>", start, count);
}

Model parse_model(std::string_view bytes, const std::string& name) {
  Model m;
  nn::StateDict state;
  try {
    state = nn::safe_load_bytes(bytes);
  } catch (const FormatError& e) {
    throw FormatError("[infer] model '" + name + "': " + e.what());
  }
  m.net = models::model_from_state(state, "[infer] model '" + name + "'");
  m.file_sha256 = sha256_hex(bytes);
  return m;
}

Model load_model(const std::string& path) { return parse_model(io::read_file(path, "[infer] model"), path); }

Result run(models::MnistModel& model, const Tensor& x, int64_t batch) {
  if (batch <= 0) throw ShapeError("[infer] batch must be positive, got " + std::to_string(batch));
  if (x.ndim() != 4 || x.dtype() != DType::Float32)
    throw ShapeError("[infer] the model input must be float32 (N,1,28,28), got " +
                     std::string(dtype_name(x.dtype())) + " " + shape_str(x.shape()));
  // The digest is defined for the model as trained: eval mode, nearest-even, unfused products,
  // whatever the caller's thread has set.
  TrainingScope eval(false);
  RoundingScope nearest(Round::NearestEven);
  FusedScope unfused(false);
  const int64_t n = x.shape()[0];
  std::vector<uint8_t> logits;
  Shape out_shape;
  for (int64_t i = 0; i < n; i += batch) {
    int64_t b = std::min(batch, n - i);
    Tensor y = model(x.shrink({{i, i + b}, {0, 1}, {0, kSide}, {0, kSide}}));
    std::vector<uint8_t> bytes = y.bytes();
    logits.insert(logits.end(), bytes.begin(), bytes.end());
    out_shape = y.shape();
  }
  out_shape[0] = n;
  Result r;
  r.outputs.push_back(Tensor::from_bytes(logits.data(), logits.size(), out_shape, DType::Float32));
  r.digest = tensors_digest(kInferenceTag, r.outputs);
  for (int32_t c : r.outputs[0].argmax(1).to_vector<int32_t>()) r.classes.push_back(c);
  return r;
}

std::string to_json(const Model& m, const Inputs& in, const Result& r) {
  const std::string who = "[infer]";
  auto q = [&](std::string_view s) { return json::quote(s, who); };
  std::string j = "{\n  \"format\": \"maroon-inference/1\",\n";
  j += "  \"model\": {\"kind\": " + q(m.net->kind()) + ", \"sha256\": " + q(m.file_sha256) + "},\n";
  j += "  \"input\": {\"format\": " + q(format_name(in.format)) + ", \"sha256\": " + q(in.file_sha256) +
       ", \"start\": " + std::to_string(in.start) + ", \"count\": " + std::to_string(in.count) + "},\n";
  j += "  \"outputs\": [";
  for (size_t i = 0; i < r.outputs.size(); ++i) {
    j += std::string(i ? ", " : "") + "{\"dtype\": " + q(dtype_name(r.outputs[i].dtype())) + ", \"shape\": [";
    for (size_t d = 0; d < r.outputs[i].shape().size(); ++d)
      j += (d ? ", " : "") + std::to_string(r.outputs[i].shape()[d]);
    j += "]}";
  }
  j += "],\n  \"digest\": " + q(r.digest) + ",\n  \"classes\": [";
  for (size_t i = 0; i < r.classes.size(); ++i) j += (i ? ", " : "") + std::to_string(r.classes[i]);
  j += "]\n}\n";
  return j;
}

}  // namespace maroon::infer
