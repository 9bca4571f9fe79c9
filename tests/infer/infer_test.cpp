// Inference with an output digest: the .npy reader, the digest's bytes (built here by hand from
// the spec's definition), the four input forms giving one digest, batch-size independence, the
// caller's settings not mattering, bad input, and the C ABI (c_abi_check.c) agreeing with C++.
#include <unistd.h>

#include <cstring>
#include <fstream>

#include <gtest/gtest.h>

#include "io/files.h"
#include "maroon/digest.h"
#include "maroon/infer.h"
#include "maroon/inference.h"
#include "maroon/npy.h"
#include "maroon/round.h"
#include "maroon/safetensors.h"

using namespace maroon;

extern "C" int maroon_infer_c_check(const char* model, const char* input, const char* want_digest,
                                    const char* want_json);

namespace {

// A scratch directory removed at the end of the test.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/maroon-infer-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string operator/(const std::string& name) const { return path + "/" + name; }
};

// Deterministic pixels (integer arithmetic): n images of 784 bytes.
std::vector<uint8_t> pixels(int64_t n, uint32_t seed = 1) {
  std::vector<uint8_t> p(static_cast<size_t>(n * 784));
  uint32_t s = seed;
  for (auto& v : p) {
    s = s * 1664525u + 1013904223u;
    v = static_cast<uint8_t>(s >> 24);
  }
  return p;
}

std::string bytes_of(const std::vector<uint8_t>& v) { return std::string(v.begin(), v.end()); }

std::string idx_file(const std::vector<uint8_t>& px, int64_t n) {
  std::string s = {'\0', '\0', '\x08', '\x03'};
  for (uint32_t d : {static_cast<uint32_t>(n), 28u, 28u})
    s += {static_cast<char>(d >> 24), static_cast<char>(d >> 16), static_cast<char>(d >> 8), static_cast<char>(d)};
  return s + bytes_of(px);
}

std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[static_cast<size_t>(i)] = static_cast<char>(v >> (8 * i));
  return s;
}

std::string save_model(const TempDir& d, const std::string& kind) {
  auto m = models::make_model(kind, 3);
  std::string path = d / (kind + ".safetensors");
  nn::safe_save(m->state_dict(), path);
  return path;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) { return e.what(); }
  return "";
}

}  // namespace

TEST(Npy, RoundTripsEveryDtypeAndReadsBigEndian) {
  for (DType d : {DType::Bool, DType::Int8, DType::UInt8, DType::Int16, DType::UInt16, DType::Int32, DType::UInt32,
                  DType::Int64, DType::UInt64, DType::Float16, DType::Float32, DType::Float64}) {
    data::NpyArray a{d, {2, 3}, std::vector<uint8_t>(6 * itemsize(d), 1)};
    std::string b = data::npy_bytes(a);
    EXPECT_EQ((b.size() - a.bytes.size()) % 64, 0u) << dtype_name(d);  // numpy aligns the data to 64
    data::NpyArray r = data::parse_npy(b);
    EXPECT_EQ(r.dtype, d);
    EXPECT_EQ(r.shape, (Shape{2, 3}));
    EXPECT_EQ(r.bytes, a.bytes);
  }
  std::string be = std::string("\x93NUMPY\x01\x00\x46\x00", 10) +
                   "{'descr': '>i2', 'fortran_order': False, 'shape': (2,), }" + std::string(13, ' ') + "\n";
  be[8] = static_cast<char>(be.size() - 10);
  data::NpyArray r = data::parse_npy(be + std::string("\x01\x02\xff\xfe", 4));
  EXPECT_EQ(r.tensor().to_vector<int16_t>(), (std::vector<int16_t>{0x0102, -2}));
}

TEST(Npy, RejectsMalformedFilesWithTheReason) {
  data::NpyArray a{DType::Float32, {2}, std::vector<uint8_t>(8, 0)};
  std::string good = data::npy_bytes(a);
  auto err = [](const std::string& b) { return error_of([&] { data::parse_npy(b, "x.npy"); }); };
  EXPECT_NE(err("hello").find("magic"), std::string::npos);
  EXPECT_NE(err(good.substr(0, good.size() - 1)).find("needs 8 data bytes, file has 7"), std::string::npos);
  EXPECT_NE(err(good + "x").find("file has 9"), std::string::npos);
  EXPECT_NE(err(good.substr(0, 20)).find("runs past the end"), std::string::npos);
  std::string f = good;
  f.replace(f.find("False"), 5, "True ");
  EXPECT_NE(err(f).find("fortran_order True"), std::string::npos);
  std::string c = good;
  c.replace(c.find("<f4"), 3, "<c8");
  EXPECT_NE(err(c).find("unsupported dtype descr"), std::string::npos);
  std::string k = good;
  k.replace(k.find("descr"), 5, "dscrx");
  EXPECT_NE(err(k).find("unknown or repeated key"), std::string::npos);
  std::string big = data::npy_bytes({DType::Float32, {int64_t{1} << 40, int64_t{1} << 40}, std::vector<uint8_t>(8)});
  EXPECT_NE(err(big).find("needs more than 2^62 bytes"), std::string::npos);
  // numpy's rule: a zero dimension does not excuse huge other ones (issue 21).
  std::string zero_big = data::npy_bytes({DType::Float32, {0, int64_t{1} << 40, int64_t{1} << 40}, {}});
  EXPECT_NE(err(zero_big).find("needs more than 2^62 bytes"), std::string::npos);
}

TEST(InferenceDigest, IsTheSpecsSerialisation) {
  Tensor a = Tensor::from_vector<float>({1.5f, -0.0f}, {2, 1});
  Tensor b = Tensor::from_vector<uint8_t>({7}, {});
  std::string want = std::string("maroon-inference/1\0", 19) + le64(2) + le64(7) + "float32" + le64(2) + le64(2) +
                     le64(1) + le64(8) + std::string("\x00\x00\xc0\x3f\x00\x00\x00\x80", 8) + le64(5) + "uint8" +
                     le64(0) + le64(1) + "\x07";
  EXPECT_EQ(tensors_serialization(kInferenceTag, {a, b}), want);
  EXPECT_EQ(tensors_digest(kInferenceTag, {a, b}), sha256_hex(want));
  EXPECT_EQ(tensors_digest(kInferenceTag, {}), sha256_hex(std::string("maroon-inference/1\0", 19) + le64(0)));
  // Shape is covered: the same bytes as (1,2) digest differently.
  EXPECT_NE(tensors_digest(kInferenceTag, {a.reshape({1, 2}), b}), tensors_digest(kInferenceTag, {a, b}));
}

TEST(Inference, EveryInputFormOfTheSameImagesGivesOneDigest) {
  TempDir d;
  std::string model = save_model(d, "mlp");
  const int64_t n = 5;
  std::vector<uint8_t> px = pixels(n);
  io::write_file_atomic(d / "x-ubyte", idx_file(px, n), "test");
  io::write_file_atomic(d / "x.raw", bytes_of(px), "test");
  io::write_file_atomic(d / "x.npy", data::npy_bytes({DType::UInt8, {n, 28, 28}, px}), "test");
  // float32 input: the spec's conversion done here by hand, x = RNE(p * RNE(1/255)).
  std::vector<float> f(px.size());
  const float inv = 1.0f / 255.0f;
  for (size_t i = 0; i < px.size(); ++i) f[i] = static_cast<float>(px[i]) * inv;
  std::vector<uint8_t> fb(f.size() * 4);
  std::memcpy(fb.data(), f.data(), fb.size());
  io::write_file_atomic(d / "f.npy", data::npy_bytes({DType::Float32, {n, 784}, fb}), "test");

  infer::Model m = infer::load_model(model);
  // The expected digest from the pieces: the model on models::images_to_input, serialised by hand.
  std::vector<uint8_t> logits;
  {
    TrainingScope eval(false);
    logits = (*m.net)(models::images_to_input(px.data(), n)).bytes();
  }
  std::string want = sha256_hex(std::string("maroon-inference/1\0", 19) + le64(1) + le64(7) + "float32" + le64(2) +
                                le64(n) + le64(10) + le64(logits.size()) + bytes_of(logits));
  for (const char* file : {"x-ubyte", "x.raw", "x.npy", "f.npy"}) {
    infer::Inputs in = infer::load_inputs(d / file);
    infer::Result r = infer::run(*m.net, in.x);
    EXPECT_EQ(r.digest, want) << file;
    ASSERT_EQ(r.classes.size(), static_cast<size_t>(n));
  }
  EXPECT_EQ(infer::run(*m.net, infer::array_inputs(Tensor::from_vector(px, {n, 28, 28})).x).digest, want);
}

TEST(Inference, BatchSizeAndCallerSettingsChangeNoBit) {
  TempDir d;
  for (const char* kind : {"mlp", "cnn"}) {
    infer::Model m = infer::load_model(save_model(d, kind));
    std::vector<uint8_t> px = pixels(7, 9);
    infer::Inputs in = infer::parse_inputs(bytes_of(px), infer::Format::Raw, "x.raw");
    std::string whole = infer::run(*m.net, in.x, 7).digest;
    EXPECT_EQ(infer::run(*m.net, in.x, 1).digest, whole) << kind;
    EXPECT_EQ(infer::run(*m.net, in.x, 3).digest, whole) << kind;
    // Rounding mode, fused products and training mode of the caller's thread do not leak in.
    RoundingScope up(Round::Up);
    FusedScope fused(true);
    TrainingScope training(true);
    infer::Inputs again = infer::parse_inputs(bytes_of(px), infer::Format::Raw, "x.raw");
    EXPECT_EQ(infer::run(*m.net, again.x).digest, whole) << kind;
    // A selection is the same images: images [2, 5) of the file are the 3 images alone.
    std::vector<uint8_t> part(px.begin() + 2 * 784, px.begin() + 5 * 784);
    EXPECT_EQ(infer::run(*m.net, infer::parse_inputs(bytes_of(px), infer::Format::Raw, "x.raw", 2, 3).x).digest,
              infer::run(*m.net, infer::parse_inputs(bytes_of(part), infer::Format::Raw, "p.raw").x).digest);
  }
}

TEST(Inference, BadInputIsNamed) {
  TempDir d;
  std::string model = save_model(d, "mlp");
  std::vector<uint8_t> px = pixels(2);
  auto in_err = [&](const std::string& bytes, infer::Format f, int64_t start = 0, int64_t count = -1) {
    return error_of([&] { infer::parse_inputs(bytes, f, "in.x", start, count); });
  };
  EXPECT_NE(in_err(bytes_of(px) + "x", infer::Format::Raw).find("N*784"), std::string::npos);
  EXPECT_NE(in_err(bytes_of(px), infer::Format::Raw, 1, 2).find("out of range"), std::string::npos);
  EXPECT_NE(in_err(bytes_of(px), infer::Format::Raw, 2).find("empty"), std::string::npos);
  EXPECT_NE(in_err(idx_file(px, 2).substr(0, 100), infer::Format::Idx).find("truncated"), std::string::npos);
  EXPECT_NE(in_err(data::npy_bytes({DType::Int32, {2, 784}, std::vector<uint8_t>(2 * 784 * 4)}), infer::Format::Npy)
                .find("int32"),
            std::string::npos);
  EXPECT_NE(in_err(data::npy_bytes({DType::UInt8, {2, 27, 28}, std::vector<uint8_t>(2 * 27 * 28)}), infer::Format::Npy)
                .find("(2,27,28)"),
            std::string::npos);
  EXPECT_NE(error_of([&] { infer::load_inputs(d / "x.png"); }).find("cannot tell the format"), std::string::npos);
  EXPECT_NE(error_of([&] { infer::load_inputs(d / "missing.raw"); }).find("missing.raw"), std::string::npos);
  EXPECT_NE(error_of([&] { infer::parse_format("png"); }).find("unknown input format"), std::string::npos);
  // A weights file that is not one of the models, and one that is not safetensors at all.
  nn::safe_save({{"w", Tensor::zeros({2})}}, d / "other.safetensors");
  EXPECT_NE(error_of([&] { infer::load_model(d / "other.safetensors"); }).find("neither the mlp"), std::string::npos);
  io::write_file_atomic(d / "junk.safetensors", "junk", "test");
  EXPECT_NE(error_of([&] { infer::load_model(d / "junk.safetensors"); }).find("junk.safetensors"), std::string::npos);
}

TEST(Inference, JsonNamesNoPathAndTheCAbiAgrees) {
  TempDir d;
  std::string model = save_model(d, "cnn");
  std::vector<uint8_t> px = pixels(3, 4);
  io::write_file_atomic(d / "a.raw", bytes_of(px), "test");
  io::write_file_atomic(d / "b.bin", bytes_of(px), "test");
  infer::Model m = infer::load_model(model);
  infer::Inputs a = infer::load_inputs(d / "a.raw"), b = infer::load_inputs(d / "b.bin");
  infer::Result r = infer::run(*m.net, a.x);
  std::string json = infer::to_json(m, a, r);
  EXPECT_EQ(json, infer::to_json(m, b, infer::run(*m.net, b.x)));
  EXPECT_EQ(json.find(d.path), std::string::npos);
  EXPECT_NE(json.find("\"digest\": \"" + r.digest + "\""), std::string::npos);
  EXPECT_NE(json.find("\"sha256\": \"" + sha256_hex(bytes_of(px)) + "\""), std::string::npos);
  EXPECT_EQ(maroon_infer_c_check(model.c_str(), (d / "a.raw").c_str(), r.digest.c_str(), json.c_str()), 0);
}
