// maroon-battery: runs the determinism workloads and prints one SHA-256 line per workload.
// tools/determinism/matrix.py runs it in every configuration and compares the lines.
//
//   maroon-battery [--fpstate=default|ftz-daz|round-up] [--ops] [--small] [--models] [--no-cnn]
//                  [--mlp-steps=N] [--cnn-steps=N] [--cnn-batch=N] [--data=DIR] [--char[=STEPS]]
//                  [--onnx] [--list-simd]
//
// --models also runs the ONNX models (class onnx:infer) where the build has ONNX import;
// --onnx runs them alone.
//
// Backend, threads and SIMD target come from MAROON_BACKEND, MAROON_THREADS and MAROON_SIMD.
// --fpstate sets the caller's floating-point state before any Maroon call (flush-to-zero and
// denormals-are-zero, or rounding upward); the battery fails if Maroon leaves it changed.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "battery.h"
#include "core/graph.h"
#include "core/ops.h"
#include "fpstate.h"
#include "hwy/targets.h"
#include "maroon/backend.h"

namespace maroon::determinism {

void Recorder::add(const std::string& cls, const std::string& name, const Tensor& t) {
  if (track_)
    for (const Node* n : post_order(t.node().get(), [](const Node*) { return true; }, [](const Node*) { return true; }))
      ops_seen_.insert(std::string(op_name(n->op)));
  std::vector<uint8_t> b = t.bytes();
  // The shape and dtype are part of the result: equal bytes in another shape would differ.
  std::string meta = std::string(dtype_name(t.dtype())) + shape_str(t.shape());
  b.insert(b.begin(), meta.begin(), meta.end());
  add_bytes(cls, name, b);
}

void Recorder::add_bytes(const std::string& cls, const std::string& name, const std::vector<uint8_t>& b) {
  find(names_, cls, name).update(b.data(), b.size());
  find(classes_, cls, cls).update(b.data(), b.size());
  ++tensors_;
}

Sha256& Recorder::find(std::vector<Entry>& v, const std::string& cls, const std::string& name) {
  for (Entry& e : v)
    if (e.name == name) return e.h;
  v.push_back(Entry{cls, name, Sha256{}});
  return v.back().h;
}

void Recorder::print() {
  for (Entry& e : classes_) std::printf("%s %s\n", e.name.c_str(), e.h.finish_hex().c_str());
  for (Entry& e : names_) std::printf("%s %s\n", e.name.c_str(), e.h.finish_hex().c_str());
  for (const auto& [name, value] : notes_) std::printf("%s %s\n", name.c_str(), value.c_str());
}

Rng::Rng(const std::string& key) : s_(0xcbf29ce484222325ull) {
  for (unsigned char c : key) s_ = (s_ ^ c) * 0x100000001b3ull;
}

uint64_t Rng::bits(DType d) {
  const int w = bitwidth(d);
  const uint64_t mask = w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
  const uint64_t r = next();
  if (d == DType::Bool) return r & 1;
  if (!is_float(d)) {
    const uint64_t top = uint64_t{1} << (w - 1);
    switch (r % 8) {
      case 0: return is_unsigned(d) ? 0 : top;                                // minimum
      case 1: return is_unsigned(d) ? mask : top - 1;                         // maximum
      case 2: return next() % 5;                                              // small
      case 3: return (0 - next() % 5) & mask;                                 // small negative
      case 4: return next() % (w + 2);                                        // shift counts
      default: return next() & mask;
    }
  }
  const int mbits = d == DType::Float16 ? 10 : d == DType::BFloat16 ? 7 : d == DType::Float32 ? 23 : 52;
  const int ebits = w - 1 - mbits;
  const uint64_t emax = (uint64_t{1} << ebits) - 1, bias = emax >> 1, man = (uint64_t{1} << mbits) - 1;
  const uint64_t sign = (next() & 1) << (w - 1);
  switch (r % 16) {
    case 0: return sign | (next() % 3 ? next() & man : 0);                    // subnormal or zero
    case 1: return sign | (emax << mbits) | (next() % 3 ? 0 : next() & man);  // inf or NaN payload
    case 2: return sign | ((emax - 1 - next() % 3) << mbits) | (next() & man); // near the largest
    case 3: return sign | ((1 + next() % 3) << mbits) | (next() & man);        // near the smallest normal
    case 4: case 5: case 6: case 7:                                           // near 1
      return sign | ((bias - 4 + next() % 9) << mbits) | (next() & man);
    default: return next() & mask;
  }
}

Tensor tensor_of_bits(const std::vector<uint64_t>& bits, const Shape& shape, DType d) {
  const size_t w = itemsize(d);
  std::vector<uint8_t> bytes(bits.size() * w);
  for (size_t i = 0; i < bits.size(); ++i)
    for (size_t j = 0; j < w; ++j) bytes[i * w + j] = static_cast<uint8_t>(bits[i] >> (8 * j));
  return Tensor::from_bytes(bytes.data(), bytes.size(), shape, d);
}

Tensor random_tensor(const std::string& key, const Shape& shape, DType d) {
  Rng g(key + "/" + std::string(dtype_name(d)) + shape_str(shape));
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<uint64_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = g.bits(d);
  return tensor_of_bits(v, shape, d);
}

namespace {

// The Highway target the dispatcher uses now (the best one supported, or the one MAROON_SIMD
// forced): on AArch64 simd_target() only names "scalar", so this shows NEON or SVE. The mask
// repeats the targets CMakeLists.txt disables for the library (HWY_DISABLED_TARGETS).
std::string dispatched_isa() {
  const int64_t t = hwy::SupportedTargets() & HWY_TARGETS & ~int64_t{HWY_SSSE3 | HWY_AVX3_DL};
  return t ? hwy::TargetName(t & -t) : "none";
}

bool sha256_self_test() {
  Sha256 a, e;
  a.update(std::string("abc"));
  return a.finish_hex() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" &&
         e.finish_hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
}

bool flag(const char* arg, const char* name, std::string* value = nullptr) {
  const size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) != 0) return false;
  if (!value) return arg[n] == 0;
  if (arg[n] != '=') return false;
  *value = arg + n + 1;
  return true;
}

int run(int argc, char** argv) {
  std::string fp = "default", data_dir, v;
  bool ops = false, models = false, cnn = true, small = false, onnx = false;
  int mlp_steps = 50, cnn_steps = 10, cnn_batch = 4, char_steps = 0;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (flag(a, "--list-simd")) {
      for (const std::string& t : available_simd_targets()) std::printf("%s\n", t.c_str());
      return 0;
    } else if (flag(a, "--fpstate", &fp)) {
    } else if (flag(a, "--ops")) ops = true;
    else if (flag(a, "--small")) small = true;
    else if (flag(a, "--models")) models = true;
    else if (flag(a, "--onnx")) onnx = true;
    else if (flag(a, "--no-cnn")) cnn = false;
    else if (flag(a, "--data", &data_dir)) {
    } else if (flag(a, "--mlp-steps", &v)) mlp_steps = std::stoi(v);
    else if (flag(a, "--cnn-steps", &v)) cnn_steps = std::stoi(v);
    else if (flag(a, "--cnn-batch", &v)) cnn_batch = std::stoi(v);
    else if (flag(a, "--char")) char_steps = 3;
    else if (flag(a, "--char", &v)) char_steps = std::stoi(v);
    else {
      std::fprintf(stderr, "maroon-battery: unknown argument '%s'\n", a);
      return 2;
    }
  }
  if (!ops && !models && !char_steps && !onnx) ops = models = true;
  if (!sha256_self_test()) {
    std::fprintf(stderr, "maroon-battery: SHA-256 self-test failed\n");
    return 1;
  }
  // Caller state first: everything after this line runs under it, input generation included.
  const CallerFpState state = set_caller_fpstate(fp);
  std::printf("# backend=%s simd=%s isa=%s threads=%d fpstate=%s fpbits=%s\n",
              backend() == Backend::Ref ? "ref" : "cpu", simd_target().c_str(), dispatched_isa().c_str(),
              num_threads(), fp.c_str(), state.describe().c_str());
  Recorder rec;
  if (ops) run_op_battery(rec, small);
  if (models && !run_model_battery(rec, data_dir, mlp_steps, cnn_steps, cnn_batch, cnn))
    std::printf("# models: not in this build (no maroon/models.h)\n");
  if (char_steps && !run_char_battery(rec, char_steps))
    std::printf("# char: not in this build (no maroon/char_gpt.h)\n");
  if ((models || onnx) && !run_onnx_battery(rec)) std::printf("# onnx: not in this build (no ONNX import)\n");
  const CallerFpState after = read_caller_fpstate();
  rec.print();
  std::printf("# tensors=%lld\n", static_cast<long long>(rec.tensors()));
  if (!(after == state)) {
    std::fprintf(stderr, "maroon-battery: the caller's FP state changed: %s before, %s after\n",
                 state.describe().c_str(), after.describe().c_str());
    return 3;
  }
  return 0;
}

}  // namespace
}  // namespace maroon::determinism

int main(int argc, char** argv) {
  try {
    return maroon::determinism::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "maroon-battery: %s\n", e.what());
    return 1;
  }
}
