// Writes the seed corpora of the fuzz harnesses (fuzz/corpus/<format>/) with Maroon's own
// writers, so every seed is a valid file the harness takes past the first checks:
//   build/fuzz/maroon-fuzz-corpus fuzz/corpus
// The seeds are committed; rerun this only when a format changes. Findings (crashes) are added
// to the same directories by hand, named crash-<what>, and replayed by ctest (fuzz_replay_*).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "lagoon/lagoon.hpp"
#include "maroon/maroon.h"
#include "maroon/npy.h"
#include "maroon/safetensors.h"
#include "maroon/verify.h"

#ifdef MAROON_WITH_ONNX
void onnx_models(const std::filesystem::path& d);  // make_corpus_onnx.cpp
#endif

namespace {

namespace fs = std::filesystem;
using namespace maroon;

void put(const fs::path& dir, const std::string& name, const std::string& bytes) {
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << bytes;
}

std::string be32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}

void idx(const fs::path& d) {
  // MNIST's layout: 3 dims of ubyte images, 1 dim of labels; then int16, float32, float64.
  std::string img = std::string("\0\0\x08\x03", 4) + be32(2) + be32(3) + be32(3);
  for (int i = 0; i < 18; ++i) img += static_cast<char>(i * 13);
  put(d, "ubyte-2x3x3", img);
  put(d, "labels-4", std::string("\0\0\x08\x01", 4) + be32(4) + std::string("\x01\x07\x00\x09", 4));
  put(d, "int16-2x2", std::string("\0\0\x0b\x02", 4) + be32(2) + be32(2) + std::string("\x80\x00\x7f\xff\x00\x01\xff\xff", 8));
  put(d, "float32-3", std::string("\0\0\x0d\x01", 4) + be32(3) + std::string("\x3f\x80\x00\x00\x7f\xc0\x00\x00\x80\x00\x00\x01", 12));
  put(d, "float64-1", std::string("\0\0\x0e\x01", 4) + be32(1) + std::string("\x40\x09\x21\xfb\x54\x44\x2d\x18", 8));
  put(d, "empty-0x5", std::string("\0\0\x09\x02", 4) + be32(0) + be32(5));
}

void safetensors(const fs::path& d) {
  nn::StateDict sd{{"l1.weight", Tensor::arange(Scalar(0.0), Scalar(6.0), Scalar(1.0)).reshape({2, 3})},
                   {"l1.bias", Tensor::full({2}, 0.5, DType::Float32)}};
  put(d, "mlp", nn::safe_save_bytes(sd));
  put(d, "mlp-metadata", nn::safe_save_bytes(sd, {{"format", "pt"}, {"note", "caf\xc3\xa9"}}));
  nn::StateDict types{{"b", Tensor::full({3}, true, DType::Bool)},     {"i8", Tensor::full({2}, -3, DType::Int8)},
                      {"u16", Tensor::full({1}, 7, DType::UInt16)},   {"f16", Tensor::full({2, 1}, 1.5, DType::Float16)},
                      {"bf16", Tensor::full({1}, 2.0, DType::BFloat16)}, {"i64", Tensor::full({}, -1, DType::Int64)},
                      {"f64", Tensor::full({1, 1, 1}, 0.1, DType::Float64)}, {"empty", Tensor::zeros({0, 4})}};
  put(d, "dtypes", nn::safe_save_bytes(types));
  put(d, "no-tensors", nn::safe_save_bytes({}));
  put(d, "mlp-checksum", nn::safe_save_bytes(sd, {}, /*checksum=*/true));
}

// .npy files as numpy.save writes them (version 1.0), and one big-endian version 2.0 file.
void npy(const fs::path& d) {
  put(d, "uint8-2x3", data::npy_bytes({DType::UInt8, {2, 3}, {1, 2, 3, 4, 5, 6}}));
  put(d, "float32-2", data::npy_bytes({DType::Float32, {2}, {0, 0, 0x80, 0x3f, 0, 0, 0xc0, 0x7f}}));
  put(d, "bool-scalar", data::npy_bytes({DType::Bool, {}, {1}}));
  put(d, "int64-0x3", data::npy_bytes({DType::Int64, {0, 3}, {}}));
  std::string h = "{'descr': '>i2', 'fortran_order': False, 'shape': (2,), }";
  h.append(63 - (12 + h.size()) % 64, ' ');  // magic, version and length: 12 bytes; total % 64 == 0
  h += '\n';
  std::string v2 = std::string("\x93NUMPY\x02\x00", 8);
  for (int k = 0; k < 4; ++k) v2 += static_cast<char>(h.size() >> (8 * k));
  put(d, "int16-big-endian-v2", v2 + h + std::string("\x01\x02\xff\xfe", 4));
}

void json(const fs::path& d) {
  put(d, "object", R"({"a": 1, "b": [true, false, null], "c": {"d": "e\u00e9\ud83d\ude00\n"}, "f": -1.5e-7})");
  put(d, "nested", "[[[[[[[[[[[[[[[[0]]]]]]]]]]]]]]]]");
  put(d, "string-escapes", R"(["\"\\\/\b\f\n\r\t", "\u0000", ""])");
}

// Run records as verify::write_record writes them (maroon-run/3): a complete one with
// checkpoints, losses and outputs, and a partial one (an interrupted run) without losses.
void records(const fs::path& d) {
  fs::create_directories(d);
  auto digest = [](char c) { return verify::parse_digest(std::string(64, c), "[corpus]"); };
  verify::RunRecord r;
  r.job.name = "mnist-mlp";
  r.job.config = {{"dataset", "mnist"}, {"model", "mlp"}, {"epochs", "1"}, {"batch", "64"},
                  {"seed", "0"},        {"steps", "3"},   {"lr", "0.001"}, {"lr_decay", "0.5"}};
  r.job.data = {{"train-images-idx3-ubyte", "/data/train-images-idx3-ubyte", std::string(64, 'a')}};
  r.job.arch_sha256 = std::string(64, 'c');
  r.provenance = {"0.1.0", "0000000", std::string(64, 'd'), "gcc", "Release", "avx2", "cpu", "maroon train", 2};
  r.steps = 3;
  r.checkpoint_every = 2;
  r.states = {digest('0'), digest('1'), digest('2'), digest('3')};
  r.checkpoints = {{0, "a.ckpt/0.safetensors"}, {2, "a.ckpt/2.safetensors"}};
  r.losses = {2.3f, 2.25f, 2.0f};
  r.outputs = {{"weights", "a.safetensors", std::string(64, 'b')}};
  r.claims = {{"test_accuracy", "11.35"}};
  verify::write_record(r, (d / "v3-complete").string());
  r.states.resize(2);
  r.checkpoints.resize(1);
  r.losses = {};
  r.outputs = {};
  r.claims = {};
  verify::write_record(r, (d / "v3-partial").string());
}

// Checkpoints as verify::write_checkpoint writes them (canonical safetensors, names in byte
// order): a small model with its optimizer and random state, and the empty state.
void checkpoints(const fs::path& d) {
  fs::create_directories(d);
  verify::State s{{"model.l1.bias", Tensor::full({2}, 0.5, DType::Float32)},
                  {"model.l1.weight", Tensor::arange(Scalar(0.0), Scalar(6.0), Scalar(1.0)).reshape({2, 3})},
                  {"optim.b1_t", Tensor::full({}, 0.9, DType::Float32)},
                  {"optim.lr", Tensor::full({}, 0.001, DType::Float32)},
                  {"rng.counter", Tensor::full({}, 12, DType::UInt64)},
                  {"rng.seed", Tensor::full({}, 7, DType::UInt64)},
                  {"run.step", Tensor::full({}, 2, DType::Int64)}};
  verify::write_checkpoint(s, (d / "mlp-adam").string());
  verify::write_checkpoint({}, (d / "empty").string());
}

// Traces as verify::write_trace writes them: a run's step (job, state in, labelled leaves, a
// state tensor that is a node's buffer) and a trace of a plain computation.
void traces(const fs::path& d) {
  fs::create_directories(d);
  auto digest = [](char c) { return verify::parse_digest(std::string(64, c), "[corpus]"); };
  verify::Trace t;
  t.step = 3;
  t.job_sha256 = std::string(64, 'a');
  t.state_in = std::string(64, 'b');
  t.nodes = {{"BUFFER", "float32", {2, 3}, "nearest-even", "", {}, "model.l1.weight", digest('1')},
             {"BUFFER", "float32", {3}, "nearest-even", "", {}, "x", digest('2')},
             {"MUL", "float32", {2, 3}, "toward-zero", "", {0, 1}, "", digest('3')},
             {"REDUCE", "float32", {2, 1}, "nearest-even", "axes=[1]", {2}, "", digest('4')},
             {"CONST", "int8", {}, "up", "bits=0x7f", {}, "", digest('5')}};
  t.state_out = {{"model.l1.weight", digest('6'), 3}, {"rng.seed", digest('7'), -1}};
  verify::write_trace(t, (d / "step").string());
  verify::Trace plain;
  plain.nodes = {{"BUFFER", "float64", {0, 4}, "down", "", {}, "", digest('8')}};
  verify::write_trace(plain, (d / "plain").string());
}

void nouns(const fs::path& d) {
  using namespace maroon::lagoon;
  auto save = [&](const std::string& name, const Noun& n) {
    std::vector<uint8_t> b = jam(n);
    put(d, name, std::string(b.begin(), b.end()));
  };
  save("atom-0", *Noun::make_atom(uint64_t{0}));
  save("atom-big", *Noun::make_atom(0x0123456789abcdefull));
  NounP a = Noun::make_atom(uint64_t{42});
  save("cell-shared", *Noun::make_cell(Noun::make_cell(a, a), Noun::make_cell(a, a)));  // backreferences
  NounP list = Noun::make_atom(uint64_t{0});
  for (uint64_t i = 0; i < 64; ++i) list = Noun::make_cell(Noun::make_atom(i), list);
  save("list-64", *list);
  Meta f16{{6}, 4, Kind::I754}, u8{{2, 2}, 3, Kind::Uint}, i32{{3}, 5, Kind::Int2};
  save("ray-f16", *ray_to_noun(iota(f16).ref()));
  save("ray-u8", *ray_to_noun(ones(u8).ref()));
  save("ray-i32", *ray_to_noun(iota(i32).ref()));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  fs::path root = argv[1];
  idx(root / "idx");
  safetensors(root / "safetensors");
  json(root / "json");
  npy(root / "npy");
  nouns(root / "noun");
  records(root / "record");
  checkpoints(root / "checkpoint");
  traces(root / "trace");
#ifdef MAROON_WITH_ONNX
  onnx_models(root / "onnx");
#endif
  return 0;
}
