// The determinism battery's shared pieces: a digest recorder and deterministic inputs.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "maroon/maroon.h"
#include "maroon/sha256.h"

namespace maroon::determinism {

// Collects result bytes under a fine-grained name ("ops.EXP2") and its workload class
// ("ops:unary"); prints one digest line per name and per class, in first-use order.
class Recorder {
 public:
  void add(const std::string& cls, const std::string& name, const Tensor& t);
  void add_bytes(const std::string& cls, const std::string& name, const std::vector<uint8_t>& b);
  // A line printed as given: a digest computed elsewhere (the library's weights digest).
  void note(const std::string& name, const std::string& value) { notes_.emplace_back(name, value); }
  void print();
  int64_t tensors() const { return tensors_; }
  // While on, add() notes the name of every op in the graphs it is given (before they run), so
  // the op battery can prove it reached every op of include/maroon/ops.def.
  void track_ops(bool on) { track_ = on; }
  bool saw_op(const std::string& name) const { return ops_seen_.count(name) > 0; }

 private:
  struct Entry { std::string cls, name; Sha256 h; };
  std::vector<Entry> names_, classes_;
  std::vector<std::pair<std::string, std::string>> notes_;
  Sha256& find(std::vector<Entry>& v, const std::string& cls, const std::string& name);
  int64_t tensors_ = 0;
  bool track_ = false;
  std::set<std::string> ops_seen_;
};

// SplitMix64: inputs come from integer code only, never libc rand or float arithmetic.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  explicit Rng(const std::string& key);  // seeded by FNV-1a of the key
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Element bits of dtype d, weighted towards the values where semantics differ: zeros,
  // subnormals, infinities, NaNs with payloads, the largest finite values and values near 1;
  // integer minima, maxima, small values and shift counts.
  uint64_t bits(DType d);

 private:
  uint64_t s_;
};

Tensor tensor_of_bits(const std::vector<uint64_t>& bits, const Shape& shape, DType d);
// A tensor of `shape` and dtype d filled from `key`'s stream.
Tensor random_tensor(const std::string& key, const Shape& shape, DType d);

// small: 513-element operands instead of 8193, its lines named ops-small (for emulated CPUs).
// Throws, naming them, if some op of include/maroon/ops.def was in none of its graphs.
void run_op_battery(Recorder& rec, bool small);
// Returns false when the models are not part of this build (maroon/models.h absent).
bool run_model_battery(Recorder& rec, const std::string& data_dir, int mlp_steps, int cnn_steps,
                       int cnn_batch, bool with_cnn);

// The character GPT (both variants, `steps` Adam steps, then a sample); false when the build
// has no maroon/char_gpt.h.
bool run_char_battery(Recorder& rec, int steps);

// Two small ONNX models (a CNN, a transformer encoder layer) loaded through maroon::onnx, class
// onnx:infer; false when the build has no ONNX import (MAROON_WITH_ONNX).
bool run_onnx_battery(Recorder& rec);

}  // namespace maroon::determinism
